"""sklearn's estimator checks for the Winnow family.

The Winnow learners run every check with default arguments: without ``bounds`` they
clip features to [−1, 1] (and warn, from the parameters only); the decision-list
learner binarizes at ``binarize=0.0``. With ``binarize=None`` it takes binary {0, 1}
input only: sklearn's check data is refused with a ValueError naming
PublicBoundsBinarizer, those checks are listed as expected failures
with that one reason (skipped rather than xfailed: formatting ~100 expected tracebacks
costs pytest ~35 s), and *the same checks* run on ``PublicBoundsBinarizer →
estimator``, where they must pass. The clipper pipelines are checked as well.
"""

import pytest
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import estimator_checks_generator

from skdp.linear import (
    ConfidentWinnowClassifier,
    DPWinnowClassifier,
    OnlineDecisionListClassifier,
    WinnowClassifier,
)
from skdp.preprocessing import PublicBoundsBinarizer, PublicBoundsClipper

_BINARY = ("sklearn's check data is not binary: refused by design (clear error naming "
           "PublicBoundsBinarizer); the same check passes on the binarizer pipeline below")

_RANGE_CHECKS = [
    "check_classifier_data_not_an_array",
    "check_classifiers_classes",
    "check_classifiers_train",
    "check_decision_proba_consistency",
    "check_dict_unchanged",
    "check_dont_overwrite_parameters",
    "check_estimators_dtypes",
    "check_estimators_fit_returns_self",
    "check_estimators_overwrite_params",
    "check_estimators_partial_fit_n_features",
    "check_estimators_pickle",
    "check_f_contiguous_array_estimator",
    "check_fit2d_1feature",
    "check_fit2d_predict1d",
    "check_fit_check_is_fitted",
    "check_fit_idempotent",
    "check_n_features_in",
    "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input",
    # deterministic learners only (skipped for the noisy ones by their tag):
    "check_methods_sample_order_invariance",
    "check_methods_subset_invariance",
    "check_pipeline_consistency",
]
_BINARY_ONLY_CHECKS = [
    # feed non-binary values where the other learners would accept them
    "check_dtype_object",
    "check_estimators_nan_inf",
    "check_fit_score_takes_y",
    "check_supervised_y_2d",
]


_CONFIDENT_MULTICLASS = (
    "tuned margin=0.5 with bounds (-10, 10): sklearn's 3 blobs one-vs-rest reach 0.65 "
    "training accuracy < 0.83 (binary part: 0.975; WinnowClassifier tuned alike: 0.927)"
)


def _expected_bare(estimator):
    if type(estimator) is ConfidentWinnowClassifier and estimator.margin == 0.5:
        return {name: _CONFIDENT_MULTICLASS for name in (
            "check_classifiers_train", "check_classifiers_train(readonly_memmap=True)",
            "check_classifiers_train(readonly_memmap=True,X_dtype=float32)")}
    if isinstance(estimator, OnlineDecisionListClassifier) and estimator.binarize is None:
        return dict.fromkeys(_RANGE_CHECKS + _BINARY_ONLY_CHECKS, _BINARY)
    return {}


_PIPE = "Pipeline fits its steps in place; sklearn's own Pipeline fails this check too"


def _expected_pipeline(estimator):
    return {"check_estimators_overwrite_params": _PIPE,
            "check_dont_overwrite_parameters": _PIPE}


def _cases(estimators, expected):
    cases = []
    for estimator in estimators:
        for est, check in estimator_checks_generator(
            estimator, expected_failed_checks=expected(estimator), mark="skip"
        ):
            name = getattr(check, "func", check).__name__
            label = type(est[-1] if hasattr(est, "steps") else est).__name__
            cases.append(pytest.param(est, check, id=f"{label}-{name}"))
    return cases


_BARE = [
    # Default-constructed instances are checked in tests/test_sklearn_dropin.py (every
    # exported estimator as Est(), same expected failures): not repeated here.
    OnlineDecisionListClassifier(binarize=None, random_state=0),
    # tuned instances, as the tests and examples use them
    WinnowClassifier(learning_rate=0.5, bounds=(-10.0, 10.0)),
    ConfidentWinnowClassifier(learning_rate=0.5, margin=0.5, bounds=(-10.0, 10.0)),
    DPWinnowClassifier(epsilon=4.0, margin=1.0, bounds=(-10.0, 10.0), random_state=0),
    DPWinnowClassifier(setting="practical", margin=1.0, epsilon=8.0, random_state=0),
    OnlineDecisionListClassifier(max_length=1, epsilon=4.0, random_state=0),
]
_PIPELINES = [
    make_pipeline(PublicBoundsClipper(-10.0, 10.0), WinnowClassifier()),
    make_pipeline(PublicBoundsClipper(-10.0, 10.0), ConfidentWinnowClassifier()),
    make_pipeline(PublicBoundsClipper(-10.0, 10.0), DPWinnowClassifier(random_state=0)),
    make_pipeline(PublicBoundsBinarizer(bounds=(-10.0, 10.0)),
                  OnlineDecisionListClassifier(random_state=0)),
]


# The checks fit on tiny or unscaled data on purpose: the learners' "too few rows",
# "no public bounds" and "cannot learn within n_rounds" UserWarnings are expected
# there (hundreds per run); other categories (deprecations, RuntimeWarning) still show.
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("estimator", "check"), _cases(_BARE, _expected_bare))
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# The checks fit on tiny or unscaled data on purpose: the learners' "too few rows",
# "no public bounds" and "cannot learn within n_rounds" UserWarnings are expected
# there (hundreds per run); other categories (deprecations, RuntimeWarning) still show.
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("estimator", "check"), _cases(_PIPELINES, _expected_pipeline))
def test_sklearn_compatible_in_public_bounds_pipeline(estimator, check):
    check(estimator)
