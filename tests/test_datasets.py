import numpy as np
from sklearn.datasets import load_breast_cancer

from skdp.datasets import breast_cancer_public_bounds, planted_decision_list


def test_breast_cancer_bounds_cover_the_documented_ranges():
    data = load_breast_cancer()
    bounds = breast_cancer_public_bounds(data.feature_names)
    assert bounds.shape == (30, 2) and np.all(bounds[:, 0] < bounds[:, 1])
    # The published ranges are the dataset's own (rounded) min/max.
    assert np.all(data.data.min(0) >= bounds[:, 0] - 1e-3)
    assert np.all(data.data.max(0) <= bounds[:, 1] + 1e-3)


def test_planted_list_labels_follow_the_rules_without_noise():
    X, y, (rules, default) = planted_decision_list(np.random.default_rng(0), 500, 30)
    expected = np.full(len(y), default)
    for f, b in reversed(rules):
        expected[X[:, f] == 1] = b
    np.testing.assert_array_equal(y, expected)
