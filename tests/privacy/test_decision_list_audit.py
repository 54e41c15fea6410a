"""Privacy audit of DP-GreedyCover (``algorithm="greedy_cover"``) on neighbouring datasets.

The default net cover has its own audit: test_decision_list_net_cover_audit.py.

Neighbouring datasets differ by one row (D′ = D plus one row, the relation of
Bun & Fang's Lemma 18). The output is the whole released list of the estimator's own
private routine ``_release`` — accounting plan, exponential-mechanism steps, noisy
counts — on the validated data (``fit`` = validation + this routine, checked below).
The lists are sampled vectorised through the estimator's own seams
(:mod:`_batched_release`: its trials replayed through ``_release`` give the same
lists, checked below). Events are chosen on a pilot sample by
:func:`skdp.audit.audit_mechanism` (Clopper–Pearson, α = 1e-6, Bonferroni).

Negative controls the same audit must catch: the greedy argmax list (noise off),
and a DP list whose (rule × class) counts are released without noise, so its default is
the plain majority of the remaining rows (a private cover with a non-private default).

A second, sharper pair (:func:`_sharp_pair`) makes both selections of a 2-step list
lose nearly their whole ε̂ on one fixed event, so an estimator calibrated for 2ε
(``TwiceEpsilon``) is caught while the real one passes (at 2 steps and δ = 10⁻⁶ the
accountant's ε̂ is basic composition's ε/2).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from _batched_release import check_against_release, release_sampler
from _decision_list_audit_runs import (
    D0,
    D1,
    NoiselessCounts,
    TwiceEpsilon,
    private_run,
    sharp_pair,
)

from skdp.audit import audit_mechanism
from skdp.decision_list import DPDecisionListClassifier, GreedyDecisionListClassifier

PAD = 4  # longest list in these audits: at most 2 rules


def _encode(clf):
    out = np.full(2 * PAD + 1, -1, dtype=np.int64)
    f, c = clf._rule_features, clf._rule_codes
    out[: f.size] = f
    out[PAD : PAD + c.size] = c
    out[-1] = clf._default_code
    return out


def _private_sampler(clf):
    return release_sampler(clf, _encode, 2 * PAD + 1)


def test_batched_sampler_is_the_release():
    """Each trial of the vectorised sampler, its draws injected into ``_release``."""
    cases = [(DPDecisionListClassifier(algorithm="greedy_cover", epsilon=2.0, delta=0.05,
                                       max_rules=1, accounting="tight"), (D0, D1)),
             (DPDecisionListClassifier(algorithm="greedy_cover", epsilon=4.0, delta=0.05,
                                       max_rules=2, accounting="emcover"), (D0, D1)),
             (NoiselessCounts(algorithm="greedy_cover", epsilon=2.0, delta=0.0, max_rules=1,
                              accounting="basic"), (D0, D1)),
             (TwiceEpsilon(algorithm="greedy_cover", epsilon=2.0, delta=1e-6, max_rules=1,
                           accounting="tight"), _sharp_pair())]
    for clf, pair in cases:
        for data in pair:
            check_against_release(clf, _encode, 2 * PAD + 1, data)


def _greedy_sampler(data, n, rng):
    X, y = data
    clf = GreedyDecisionListClassifier(max_rules=2, algorithm="greedy_cover").fit(X, y)
    return np.tile(_encode(clf), (n, 1))


def test_private_run_is_fit():
    """The audited routine is what fit runs: same seed, same list."""
    clf = DPDecisionListClassifier(algorithm="greedy_cover", epsilon=2.0, delta=0.0,
                                   max_rules=1, classes=[0, 1], random_state=7)
    fitted = _encode(clf.fit(*D1))
    clf2 = DPDecisionListClassifier(algorithm="greedy_cover", epsilon=2.0, delta=0.0, max_rules=1)
    clf2.classes_ = np.array([0, 1])
    private_run(clf2, sp.csr_matrix(D1[0]), D1[1], np.random.default_rng(7))
    np.testing.assert_array_equal(fitted, _encode(clf2))


@pytest.mark.parametrize(
    "epsilon, delta, max_rules, accounting",
    [
        (2.0, 0.0, 1, "basic"),  # pure ε: basic composition, 2 steps of ε/2
        (4.0, 0.05, 2, "emcover"),  # EMCover (Lemma 18): ε̂ = 4 / (2(ln 20 + 3/2)) ≈ 0.45
        (2.0, 0.05, 1, "tight"),  # the accountant: 2 steps of ε̂ ≈ 1.39 (basic: 1.0)
    ],
)
def test_dp_decision_list_audit(epsilon, delta, max_rules, accounting):
    clf = DPDecisionListClassifier(
        algorithm="greedy_cover", epsilon=epsilon, delta=delta, max_rules=max_rules,
        accounting=accounting,
    )
    result = audit_mechanism(_private_sampler(clf), D0, D1, n_samples=8_000, delta=delta)
    print(result)
    assert result.epsilon_lower_bound <= epsilon, result


def test_negative_control_greedy_argmax():
    result = audit_mechanism(_greedy_sampler, D0, D1, n_samples=2_000, n_pilot=200)
    print(result)
    assert result.epsilon_lower_bound > 2.0, result


def test_negative_control_non_private_default():
    clf = NoiselessCounts(algorithm="greedy_cover", epsilon=2.0, delta=0.0, max_rules=1,
                             accounting="basic")
    result = audit_mechanism(_private_sampler(clf), D0, D1, n_samples=4_000)
    print(result)
    assert result.epsilon_lower_bound > 2.0, result


# -- a sharp pair: both selections of a 2-step list (max_rules=1) leak almost ε̂ ----------
SHARP_FEATURES = 30


def _sharp_pair():
    """D: 4 rows labelled 0 on which features 0..29 all fire, 2 empty rows labelled 1;
    feature 30 (f*) never fires. D′ adds a row labelled 1 on which 0..29 fire.

    Step 1: the 30 rules (f_i, 0) and (T, 0) lose a point in D′, the two f* rules do not,
    so "f* first" is ≈ e^{ε̂}·30/(2 + 30e^{−ε̂})/32 likelier under D′. Step 2 (default,
    f* covered nothing): label 0 errs on 2 rows in D and 3 in D′, label 1 on 4: the
    default 1 is ≈ 2.3× likelier under D′ at ε̂ = 1. The event "f* first, then default
    1" carries most of both steps' ε̂.
    """
    return sharp_pair(SHARP_FEATURES)


def _sharp_event(out):
    return (out[:, 0] == SHARP_FEATURES) & (out[:, -1] == 1)


# The sharp pair needs 12k-20k releases each: about 90 CPU s as whole fits, ~3 s with the
# vectorised sampler, so both run in the fast suite.
def test_tight_decision_list_sharp_audit():
    d0, d1 = _sharp_pair()
    clf = DPDecisionListClassifier(algorithm="greedy_cover", epsilon=2.0, delta=1e-6,
                                   max_rules=1, accounting="tight")
    # two steps at δ = 10⁻⁶: the accountant's ε̂ is basic's ε/2 (+10⁻⁶, under its
    # 10⁻⁵ safety shave), so the list runs the basic split it certifies
    assert clf._plan(2.0, 1e-6, SHARP_FEATURES + 1)[0] == pytest.approx(2.0 / 1.5)
    result = audit_mechanism(_private_sampler(clf), d0, d1, n_samples=12_000,
                             events=[_sharp_event], delta=1e-6)
    print(result)
    assert result.epsilon_lower_bound <= 2.0, result


def test_negative_control_calibrated_for_twice_epsilon():
    d0, d1 = _sharp_pair()
    clf = TwiceEpsilon(algorithm="greedy_cover", epsilon=2.0, delta=1e-6, max_rules=1,
                        accounting="tight")
    result = audit_mechanism(_private_sampler(clf), d0, d1, n_samples=20_000,
                             events=[_sharp_event], delta=1e-6)
    print(result)
    assert result.epsilon_lower_bound > 2.0, result
