"""Datasets for examples, tests and benchmarks: public feature bounds and planted models.

Private learners need public bounds for their preprocessing; the helpers here
provide documented ones for sklearn's bundled datasets, and synthetic data whose
ground truth is known (so accuracy has a ceiling to compare against).
"""

import numpy as np

__all__ = ["breast_cancer_public_bounds", "planted_decision_list"]

# (min, max) of each feature as published in the dataset's documentation
# (load_breast_cancer().DESCR, "Summary Statistics"; UCI). Treated as public: they
# are printed in the documentation, not computed by skdp. Strictly they are the
# min/max of these very 569 records, so a real deployment should take its ranges
# from domain knowledge instead; evenly spaced cuts inside them use no quantiles.
_DESCR_RANGES = {
    "mean radius": (6.981, 28.11), "mean texture": (9.71, 39.28),
    "mean perimeter": (43.79, 188.5), "mean area": (143.5, 2501.0),
    "mean smoothness": (0.053, 0.163), "mean compactness": (0.019, 0.345),
    "mean concavity": (0.0, 0.427), "mean concave points": (0.0, 0.201),
    "mean symmetry": (0.106, 0.304), "mean fractal dimension": (0.05, 0.097),
    "radius error": (0.112, 2.873), "texture error": (0.36, 4.885),
    "perimeter error": (0.757, 21.98), "area error": (6.802, 542.2),
    "smoothness error": (0.002, 0.031), "compactness error": (0.002, 0.135),
    "concavity error": (0.0, 0.396), "concave points error": (0.0, 0.053),
    "symmetry error": (0.008, 0.079), "fractal dimension error": (0.001, 0.03),
    "worst radius": (7.93, 36.04), "worst texture": (12.02, 49.54),
    "worst perimeter": (50.41, 251.2), "worst area": (185.2, 4254.0),
    "worst smoothness": (0.071, 0.223), "worst compactness": (0.027, 1.058),
    "worst concavity": (0.0, 1.252), "worst concave points": (0.0, 0.291),
    "worst symmetry": (0.156, 0.664), "worst fractal dimension": (0.055, 0.208),
}


def breast_cancer_public_bounds(feature_names):
    """(low, high) per feature from the ranges published in the dataset's DESCR."""
    return np.array([_DESCR_RANGES[str(name)] for name in feature_names])


def planted_decision_list(rng, n, d, length=6, noise=0.0, density=0.15):
    """Random sparse bits labelled by a random length-``length`` decision list.

    Returns X (n, d) int8, y, and the planted rules [(feature, label), ...] + default.
    """
    X = (rng.random((n, d)) < density).astype(np.int8)
    features = rng.choice(d, size=length, replace=False)
    labels = rng.integers(0, 2, size=length)
    default = int(rng.integers(0, 2))
    y = np.full(n, default)
    for f, b in zip(features[::-1], labels[::-1], strict=True):
        y[X[:, f] == 1] = b
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y, (list(zip(features.tolist(), labels.tolist(), strict=True)), default)
