"""Private competitors run in side virtualenvs, for ``benchmarks/rule_lists_real.py``.

Run as ``<side python> _side_models.py KIND IN.npz OUT.json`` where KIND is ``dpl``
(diffprivlib 0.6.x: LogisticRegression, GaussianNB, RandomForestClassifier; it needs
scikit-learn < 1.6) or ``ebm`` (InterpretML's DPExplainableBoostingClassifier from
``interpret-core``; it needs scikit-learn ≥ 1.6, hence a second virtualenv). The input
holds X (no NaN: missing values already filled with a public constant and flagged),
y, the public per-column bounds, the classes, the train/test indices of every split
and the ε grid. The output maps ``"model|epsilon|split"`` to the test rows'
``predict_proba`` (or to an error string). Imports neither skdp nor this repository.
"""

import json
import sys
import warnings

import numpy as np


def _dpl_models(eps, seed, lower, upper, classes, forest):
    from diffprivlib.models import GaussianNB, LogisticRegression, RandomForestClassifier

    d = lower.size
    models = {
        # X is scaled to [0, 1] by its public bounds, so every row's norm is ≤ √d
        "LogisticRegression": lambda: LogisticRegression(
            epsilon=eps, data_norm=float(np.sqrt(d)), max_iter=500, random_state=seed),
        "GaussianNB": lambda: GaussianNB(epsilon=eps, bounds=(lower, upper),
                                         random_state=seed),
    }
    if forest:
        models["RandomForest"] = lambda: RandomForestClassifier(
            epsilon=eps, bounds=(lower, upper), classes=classes, n_estimators=10,
            random_state=seed)
    return models


def _ebm_models(eps, delta, seed, lower, upper):
    from interpret.privacy import DPExplainableBoostingClassifier

    bounds = np.column_stack([lower, upper])
    return {"DP-EBM": lambda: DPExplainableBoostingClassifier(
        epsilon=eps, delta=delta, privacy_bounds=bounds, n_jobs=1, random_state=seed)}


def versions(kind):
    import sklearn

    out = {"scikit-learn": sklearn.__version__, "numpy": np.__version__}
    if kind == "dpl":
        import diffprivlib

        out["diffprivlib"] = diffprivlib.__version__
    else:
        import interpret

        out["interpret"] = interpret.__version__
    return out


def main(kind, in_path, out_path):
    warnings.filterwarnings("ignore")
    d = np.load(in_path, allow_pickle=True)
    X, y, lower, upper = d["X"], d["y"], d["lower"], d["upper"]
    classes, delta = d["classes"], float(d["delta"])
    forest = bool(d["forest"])
    result = {}
    for i, (tr, te) in enumerate(zip(d["train"], d["test"], strict=True)):
        seed = int(d["seeds"][i])
        for eps in d["eps"]:
            if kind == "dpl":
                models = _dpl_models(float(eps), seed, lower, upper, classes, forest)
            else:
                models = _ebm_models(float(eps), delta, seed, lower, upper)
            for name, make in models.items():
                key = f"{name}|{float(eps):g}|{i}"
                try:
                    model = make().fit(X[tr], y[tr])
                    proba = np.asarray(model.predict_proba(X[te]), dtype=float)
                    # columns in the order of `classes` (a class absent from a fold's
                    # training rows gets probability 0)
                    full = np.zeros((len(te), classes.size))
                    for j, c in enumerate(model.classes_):
                        full[:, int(np.searchsorted(classes, c))] = proba[:, j]
                    result[key] = full.round(6).tolist()
                except Exception as exc:  # a competitor failing is a result, not a crash
                    result[key] = f"{type(exc).__name__}: {str(exc)[:120]}"
    with open(out_path, "w") as fh:
        json.dump({"versions": versions(kind), "result": result}, fh)


if __name__ == "__main__":
    main(*sys.argv[1:4])
