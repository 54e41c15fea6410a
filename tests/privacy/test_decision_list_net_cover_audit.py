"""Privacy audit of the default DP decision list, the net cover, on neighbouring datasets.

D′ = D plus one row. The output is the whole released list of the estimator's own
private routine ``_release`` (plan, the rule step, noisy counts) on validated data — the
routine ``fit`` runs (checked below). The sampler draws the release's randomness
vectorised through the estimator's own seams (:mod:`_batched_release`: one rule-step
draw per trial, each rule's histogram noise in one call); its trials replayed through
``_release`` give the same lists (checked below).

Two pairs:

* the default-step pair of the DP-GreedyCover audit (the added row fires no feature:
  only the default step protects it; with ``negations=True`` the row is covered by
  both ¬x rules, so the rule step sees it too). Events are chosen on a pilot sample.
* a sharp rule-step pair (:func:`_sharp_pair`) on which the score's real sensitivity
  matters: with λ = ``error_weight`` = 9 a row moves the scores of 60 candidates by
  −9 or +1. The estimator samples ∝ exp(ε̂q/(1 + λ)) and passes.

Broken twins the same audits catch: a net cover whose rule step treats the score as
sensitivity 1 (∝ exp(ε̂q/2), the "score with sensitivity (1 + λ)/2 run as if 1" bug),
and one whose counts are released without noise (its default is the exact majority of
the remaining rows).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from _batched_release import check_against_release, release_sampler
from _decision_list_audit_runs import (
    D0,
    D1,
    NoiselessCounts,
    private_run,
    sharp_pair,
)

from skdp.audit import audit_mechanism
from skdp.decision_list import DPDecisionListClassifier
from skdp.mechanisms import exponential_mechanism


def _encode(clf):
    """(feature, sign, label) of the one rule, then the default."""
    return np.array([clf._rule_features[0], clf._rule_signs[0], clf._rule_codes[0],
                     clf._default_code], dtype=np.int64)


def _sampler(clf):
    return release_sampler(clf, _encode, 4)


class _UnitSensitivity(DPDecisionListClassifier):
    """Broken: the rule step samples ∝ exp(ε̂q/2) although q moves by up to λ."""

    def _selector(self, step_epsilon, rng):
        def select(scores, coverage):
            return exponential_mechanism(scores, step_epsilon, sensitivity=1.0,
                                         random_state=rng)

        return select


def test_private_run_is_fit():
    clf = DPDecisionListClassifier(epsilon=2.0, delta=0.0, max_rules=1, negations=True,
                                   classes=[0, 1], random_state=7)
    fitted = _encode(clf.fit(*D1))
    clf2 = DPDecisionListClassifier(epsilon=2.0, delta=0.0, max_rules=1, negations=True)
    clf2.classes_ = np.array([0, 1])
    private_run(clf2, sp.csr_matrix(D1[0]), D1[1], np.random.default_rng(7))
    np.testing.assert_array_equal(fitted, _encode(clf2))


def test_batched_sampler_is_the_release():
    """Each trial of the vectorised sampler, its draws injected into ``_release``."""
    for clf in (DPDecisionListClassifier(epsilon=2.0, delta=0.05, max_rules=1,
                                         negations=True, accounting="tight"),
                NoiselessCounts(epsilon=2.0, delta=0.0, max_rules=1)):
        for data in (D0, D1):
            check_against_release(clf, _encode, 4, data)
    for data in _sharp_pair():
        check_against_release(_UnitSensitivity(epsilon=2.0, delta=0.0, max_rules=1,
                                               error_weight=LAMBDA), _encode, 4, data)


@pytest.mark.parametrize(
    "epsilon, delta, negations, accounting",
    [
        (2.0, 0.0, False, "basic"),  # 2 steps of ε/2; the row only reaches the default
        (2.0, 0.0, True, "basic"),  # the row is covered by ¬x0 and ¬x1: both steps see it
        (2.0, 0.05, True, "tight"),  # the accountant's ε̂ ≈ 1.39 per step (basic: 1.0)
    ],
)
def test_net_cover_audit(epsilon, delta, negations, accounting):
    clf = DPDecisionListClassifier(epsilon=epsilon, delta=delta, max_rules=1,
                                   negations=negations, accounting=accounting)
    result = audit_mechanism(_sampler(clf), D0, D1, n_samples=4_000, delta=delta)
    print(result)
    assert result.epsilon_lower_bound <= epsilon, result


def test_negative_control_majority_default():
    clf = NoiselessCounts(epsilon=2.0, delta=0.0, max_rules=1)
    result = audit_mechanism(_sampler(clf), D0, D1, n_samples=3_000)
    print(result)
    assert result.epsilon_lower_bound > 2.0, result


# -- a sharp pair for the rule step ------------------------------------------------------
SHARP_FEATURES = 30
LAMBDA = 9.0


def _sharp_pair():
    """D: 4 rows labelled 0 on which features 0..29 fire, 2 empty rows labelled 1;
    feature 30 (f*) never fires. D′ adds a row labelled 1 on which 0..29 fire.

    Rule step: (f_i, 0) scores 4 in D and 4 − λ in D′, (f_i, 1) −4λ and 1 − 4λ, the two
    f* rules 0 in both, so "f* first" is ≈ e^{λη}-fold likelier under D′ when
    η = ε̂/(1 + λ) (ratio ≈ 2.3 at ε̂ = 1, λ = 9), but ≈ 50-fold when η = ε̂/2. Default
    step after f*: label 1 has 2 rows in D, 3 in D′ (ratio ≈ 2.3 at ε̂ = 1).
    """
    return sharp_pair(SHARP_FEATURES)


def _sharp_event(out):
    return (out[:, 0] == SHARP_FEATURES) & (out[:, -1] == 1)


def test_net_cover_sharp_audit():
    d0, d1 = _sharp_pair()
    clf = DPDecisionListClassifier(epsilon=2.0, delta=0.0, max_rules=1, error_weight=LAMBDA)
    result = audit_mechanism(_sampler(clf), d0, d1, n_samples=5_000, events=[_sharp_event])
    print(result)
    assert result.epsilon_lower_bound <= 2.0, result


def test_negative_control_unit_sensitivity():
    d0, d1 = _sharp_pair()
    clf = _UnitSensitivity(epsilon=2.0, delta=0.0, max_rules=1, error_weight=LAMBDA)
    result = audit_mechanism(_sampler(clf), d0, d1, n_samples=5_000, events=[_sharp_event])
    print(result)
    assert result.epsilon_lower_bound > 2.0, result
