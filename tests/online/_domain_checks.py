"""scikit-learn's estimator checks for classifiers over a finite domain (domain indices).

With a domain-index class (a FiniteClass, a version space…) the online learners take
X = domain indices, shape (n, 1), integers in [0, N). sklearn's check data are real
multi-feature vectors, which they refuse by design (a clear ValueError). So every such
estimator runs the checks twice (the default-constructed estimators, whose class reads
real features, run every check directly: test_default_estimators.py):

* directly, with the data-format checks skipped for that one reason;
* inside a Pipeline whose first step is a PUBLIC binning of the first feature into
  {0, …, N−1} (bounds fixed in advance, no data-dependent leak), where exactly those
  data-format checks run and must pass.
"""

import numpy as np
import pytest
from hypothesis import strategies as st
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import estimator_checks_generator

DOMAIN_REASON = (
    "sklearn's check data are real multi-feature vectors, not domain indices of a finite "
    "class: refused by design with a clear ValueError; the same check passes on a "
    "public-bounds binning pipeline"
)
DATA_CHECKS = [
    "check_classifier_data_not_an_array", "check_classifiers_classes",
    "check_classifiers_train", "check_dict_unchanged", "check_dont_overwrite_parameters",
    "check_decision_proba_consistency", "check_dtype_object", "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_nan_inf", "check_estimators_overwrite_params",
    "check_estimators_partial_fit_n_features", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_fit2d_1feature", "check_fit2d_predict1d",
    "check_fit_check_is_fitted", "check_fit_idempotent", "check_fit_score_takes_y",
    "check_methods_sample_order_invariance", "check_methods_subset_invariance",
    "check_n_features_in", "check_n_features_in_after_fitting", "check_pipeline_consistency",
    "check_positive_only_tag_during_fit", "check_readonly_memmap_input",
    "check_supervised_y_2d",
]
_PIPE = "Pipeline fits its steps in place; sklearn's own Pipeline fails this check too"
PIPELINE_EXPECTED = {
    "check_classifiers_train": "the class (thresholds on one binned feature) cannot fit "
                               "sklearn's check data; utility is not what this check tests",
    "check_estimators_overwrite_params": _PIPE,
    "check_dont_overwrite_parameters": _PIPE,
}


class PublicBins:
    """Bin the first feature into {0, …, n_domain − 1} with bounds fixed in advance."""

    def __init__(self, n_domain, low=-4.0, high=4.0):
        self.n_domain, self.low, self.high = n_domain, low, high

    def __call__(self, X):
        X = np.asarray(X, dtype=float)
        width = (self.high - self.low) / self.n_domain
        return np.clip(np.floor((X[:, :1] - self.low) / width), 0, self.n_domain - 1)


def binning_pipeline(estimator, n_domain):
    """``make_pipeline(public binning into n_domain cells, estimator)``."""
    return make_pipeline(FunctionTransformer(PublicBins(n_domain), validate=True), estimator)


def domain_check_cases(estimators, *, pipeline_expected=None):
    """pytest params (estimator, check) for ``{name: (estimator, n_domain)}``."""
    expected = {**PIPELINE_EXPECTED, **(pipeline_expected or {})}
    for name, (est, n_domain) in estimators.items():
        for e, check in estimator_checks_generator(
            est, expected_failed_checks=dict.fromkeys(DATA_CHECKS, DOMAIN_REASON), mark="skip"
        ):
            yield pytest.param(e, check, id=f"{name}-{getattr(check, 'func', check).__name__}")
        for e, check in estimator_checks_generator(
            binning_pipeline(est, n_domain), expected_failed_checks=expected, mark="skip"
        ):
            check_name = getattr(check, "func", check).__name__
            if check_name in DATA_CHECKS:
                yield pytest.param(e, check, id=f"{name}-pipeline-{check_name}")


# Fuzzed blocks for the bad-input property tests: domain indices mixed with negatives,
# out-of-range integers, fractions, NaN and inf; labels with an unseen third class.
FUZZED_X = st.lists(st.one_of(st.integers(-3, 12), st.floats(allow_nan=True, allow_infinity=True)),
                    min_size=1, max_size=8)
FUZZED_Y = st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=8)


def fuzzed_block(xs, ys, n_domain=10):
    """``(X, y, valid)`` from drawn lists: valid iff X are indices in [0, n_domain), y ⊆ {0, 1}."""
    n = min(len(xs), len(ys))
    X, y = np.asarray(xs[:n], dtype=float)[:, None], np.asarray(ys[:n])
    valid_x = np.all(np.isfinite(X)) and np.all((np.round(X) == X) & (X >= 0) & (n_domain > X))
    return X, y, bool(valid_x and np.all(np.isin(y, [0, 1])))
