"""scikit-learn's estimator checks on the decision-list estimators.

The checks feed real-valued data. The default-constructed instances binarize it at the
public constant ``binarize=0.0`` (as BernoulliNB does) and must pass as they are (issue
18); ``binarize=None`` (0/1 input only) is tested in test_decision_list.py. With
``bounds`` (issue 27) the raw values are compared with a public grid of cuts.

Expected failures: only the DP list's two sample-weight equivalence checks — its
weights are clipped to [0, 1] (one row is the privacy unit), so a weight of 4 cannot
equal four copies of a row.
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.decision_list import (
    ConjunctionFeatures,
    DPDecisionListClassifier,
    GreedyDecisionListClassifier,
)

_CLIPPED = ("weights are clipped to [0, 1] so that a row counts at most once (the "
            "privacy unit): an integer weight k is not k copies of the row")


def _expected_failed_checks(estimator):
    if isinstance(estimator, DPDecisionListClassifier):
        return {"check_sample_weight_equivalence_on_dense_data": _CLIPPED,
                "check_sample_weight_equivalence_on_sparse_data": _CLIPPED}
    return {}


@parametrize_with_checks(
    [
        # Default-constructed instances are checked in tests/test_sklearn_dropin.py (every
        # exported estimator as Est(), same expected failures); tuned instances here.
        GreedyDecisionListClassifier(max_rules=2, algorithm="greedy_cover", negations=True),
        DPDecisionListClassifier(epsilon=2.0, delta=0.0, max_rules=3, random_state=0),
        DPDecisionListClassifier(epsilon=4.0, algorithm="greedy_cover", accounting="paper",
                                 random_state=0),
        DPDecisionListClassifier(negations=True, error_weight=1.0),
        ConjunctionFeatures(k=1, negations=False),
        # raw real values over a public cut grid (issue 27): dense input, NaN allowed
        DPDecisionListClassifier(bounds=(-5.0, 5.0), cuts=8, random_state=0),
        DPDecisionListClassifier(epsilon=4.0, cuts=[-1.0, 0.0, 1.0], rule_score="net",
                                 random_state=0),
        GreedyDecisionListClassifier(bounds=(-5.0, 5.0), cuts=8),
    ],
    expected_failed_checks=_expected_failed_checks,
)
@pytest.mark.filterwarnings("ignore:classes=None:skdp.PrivacyWarning")
# The checks fit on tiny or unscaled data on purpose: the learners' "too few rows",
# "no public bounds" and "cannot learn within n_rounds" UserWarnings are expected
# there (hundreds per run); other categories (deprecations, RuntimeWarning) still show.
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sklearn_compatible(estimator, check):
    check(estimator)
