"""scikit-learn's estimator checks on the decision-list estimators.

The checks feed real-valued data. The default-constructed instances binarize it at the
public constant ``binarize=0.0`` (as BernoulliNB does) and must pass as they are (issue
18); ``binarize=None`` (0/1 input only) is tested in test_decision_list.py.
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from skdp.decision_list import (
    ConjunctionFeatures,
    DPDecisionListClassifier,
    GreedyDecisionListClassifier,
)


def _expected_failed_checks(estimator):
    if isinstance(estimator, GreedyDecisionListClassifier):
        return {
            "check_classifiers_train": (
                "one public cut (x > 0) per feature cannot separate the check's blobs to "
                "0.83 training accuracy; a statement about the data, not the API"
            )
        }
    return {}


@parametrize_with_checks(
    [
        GreedyDecisionListClassifier(),
        DPDecisionListClassifier(),
        DPDecisionListClassifier(epsilon=2.0, delta=0.0, max_rules=3, random_state=0),
        ConjunctionFeatures(),
    ],
    expected_failed_checks=_expected_failed_checks,
)
@pytest.mark.filterwarnings("ignore:classes=None:skdp.PrivacyWarning")
def test_sklearn_compatible(estimator, check):
    check(estimator)
