"""scikit-learn's estimator checks for the PERP predictors."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.prediction import DecisionStumpPERPClassifier, RectanglesPERPClassifier

_PICKLE_REASON = (
    "an unpickled copy of a started predictor refuses to answer: continuing the running "
    "mechanism in two places would reuse or double its noise (see Privacy)"
)
_PARTIAL_FIT_REASON = (
    "partial_fit after answered queries refuses by design: the initial sample is held by "
    "the running mechanism (RSC slices, ChallengeBT copies) and cannot grow"
)
EXPECTED = {
    "check_estimators_pickle": _PICKLE_REASON,
    "check_estimators_pickle(readonly_memmap=True)": _PICKLE_REASON,
    "check_fit_score_takes_y": _PARTIAL_FIT_REASON,
}


def _expected(estimator):
    # Only the "practical" stump instance with one-point slices starts its mechanism on
    # the checks' small data (d = 1 inside); the others answer data-independently (too few
    # rows) — the charged stump with first_phase_length=10**6 too: on 30 check rows its
    # fitted state holds no mechanism (the private majority label answers), so the three
    # checks above pass for it (they were listed as expected failures and XPASSed).
    running = (isinstance(estimator, DecisionStumpPERPClassifier) and estimator.slice_size
               and estimator.preset == "practical")
    return EXPECTED if running else {}


@parametrize_with_checks(
    [
        # Default parameters: the check data (tens of rows) are far below the ~10⁷–10⁹
        # rows the first phase needs at ε = 1, so the predictors warn and answer one
        # private majority label (two noisy counts); copies read it from the shared
        # ledger, so even the pickle checks pass.
        RectanglesPERPClassifier(random_state=0),
        DecisionStumpPERPClassifier(random_state=0),
        # Large ε, loose α, β and one-point slices: the check data (≥ ~30 rows) meet the
        # first phase's need for the "practical" stump, so the running mechanism itself is
        # exercised (not for the charged one with one long phase: see _expected). predict and
        # decision_function answer *successive* queries of the stream; with the default
        # preset ("charged") each phase cuts its slices from a fresh random partition of
        # its positives, so on these tiny samples the box moves from phase to phase (4–10 %
        # of check_classifiers_train's points flip between calls when t_1 = 78–546), so
        # one long phase keeps every check inside phase 1. "practical" (fixed extremes)
        # keeps its short phases.
        RectanglesPERPClassifier(epsilon=1e5, alpha=0.9, beta=0.9, gamma=1.0, slice_size=1,
                                 first_phase_length=10**6, random_state=0),
        DecisionStumpPERPClassifier(epsilon=1e5, alpha=0.9, beta=0.9, gamma=1.0,
                                    slice_size=1, first_phase_length=10**6, random_state=0),
        RectanglesPERPClassifier(epsilon=1e5, alpha=0.9, beta=0.9, gamma=1.0, slice_size=1,
                                 preset="practical", random_state=0),
        DecisionStumpPERPClassifier(epsilon=1e5, alpha=0.9, beta=0.9, gamma=1.0,
                                    slice_size=1, preset="practical", random_state=0),
    ],
    expected_failed_checks=_expected,
)
# The checks fit on tiny or unscaled data on purpose: the learners' "too few rows",
# "no public bounds" and "cannot learn within n_rounds" UserWarnings are expected
# there (hundreds per run); other categories (deprecations, RuntimeWarning) still show.
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sklearn_compatible(estimator, check):
    check(estimator)
