"""Exact audit of the one-vs-rest composition (skdp/_multiclass.py).

The C binary copies of a C-class learner see the same rows: one replaced row changes
every copy's input, so they compose sequentially. The audit runs the helper over a
binary learner whose release law is known exactly — randomized response (RR) at the
copy's ε of one bit of the first row, b = [x > 0] XOR [y = positive] — on the
neighbours D = {(+1, label 0)}, D′ = {(−1, label 0)}, which flip every copy's bit
(copy k's label is "y = k"). RR(ε_k) is the worst case of an ε_k-DP bit, so the exact ε
of the C released bits (:func:`skdp.audit.exact_epsilon` over all 2^C outcomes) is the
largest loss any learner with the helper's split could have on a neighbouring pair.
It must be ≤ the claimed ε; the broken twins — a split that claims half of the loss
(2ε shared out) and a "parallel" split that gives every copy the whole ε — must exceed
it by 2× (computed, so this cannot fail by chance). The law is computed from the ε the
helper actually handed each fitted copy (its ``epsilon`` parameter), and the test
checks that the released bits follow that law.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from skdp._multiclass import OneVsRestMixin, one_vs_rest_split
from skdp._validation import RANDOM_STATE_CONSTRAINT
from skdp.accounting import PrivacyBudget, PrivacyCost
from skdp.audit import exact_epsilon
from skdp.base import PrivateEstimatorMixin

CLAIMS = [(1.0, 0.0, 3), (1.0, 1e-6, 3), (2.0, 1e-5, 5), (0.5, 0.0, 4)]


class _RRBit(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Binary learner releasing RR(ε) of b = [x₀ > 0] XOR [y₀ = 1] (its whole model)."""

    _parameter_constraints: dict = {
        "epsilon": [float], "delta": [float], "budget": [PrivacyBudget, None],
        "classes": ["array-like", None], "random_state": [*RANDOM_STATE_CONSTRAINT],
    }

    def __init__(self, epsilon=1.0, delta=0.0, budget=None, classes=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.classes = classes
        self.random_state = random_state

    def fit(self, X, y):
        epsilon, delta = self._check_privacy_params()
        self.classes_ = np.asarray(self.classes)
        key = self._charge(epsilon, delta, "fit", accumulate=False)
        truth = bool(X[0, 0] > 0) != bool(y[0] == self.classes_[1])
        keep = self._release_generator(key).random() < np.exp(epsilon) / (1 + np.exp(epsilon))
        self.bit_ = truth if keep else not truth
        return self

    def partial_fit(self, X, y, classes=None):
        return self.fit(X, y)

    def predict_proba(self, X):
        p = 0.75 if self.bit_ else 0.25
        return np.tile([1 - p, p], (len(X), 1))


class _OneVsRestRR(OneVsRestMixin, _RRBit):
    """The helper over the RR learner: what every skdp one-vs-rest learner runs (its
    fit dispatches C > 2 labels to the helper, as the Winnow and online bases do)."""

    def fit(self, X, y):
        if self._ovr_dispatch(y, None, True):
            return self._ovr_fit(X, y, None, from_fit=True)
        return super().fit(X, y)


class _HalfClaimTwin(_OneVsRestRR):
    """Broken: shares out 2ε (claims half of the loss it has)."""

    def _ovr_split(self, epsilon, delta, n_classes):
        return one_vs_rest_split(2 * epsilon, delta, n_classes)


class _ParallelTwin(_OneVsRestRR):
    """Broken: treats the copies as disjoint (parallel composition), ε each."""

    def _ovr_split(self, epsilon, delta, n_classes):
        return PrivacyCost(epsilon, delta / n_classes)


X_D, X_D2 = np.array([[1.0]]), np.array([[-1.0]])


def _bit_law(eps, flip):
    """log P(released bit = 1) and = 0 under RR(eps) for the truth ``flip``."""
    keep = -np.logaddexp(0.0, -eps)  # log e^ε/(1+e^ε)
    lose = -np.logaddexp(0.0, eps)
    return (keep, lose) if flip else (lose, keep)


def _copy_epsilons(cls, epsilon, delta, n_classes):
    est = cls(epsilon=epsilon, delta=delta, classes=list(range(n_classes)),
              random_state=0).fit(X_D, [0])
    return [c.epsilon for c in est.estimators_]


def _exact_loss(cls, epsilon, delta, n_classes):
    """Exact ε at δ of the C released bits on D vs D′ (all bits flip)."""
    eps_k = _copy_epsilons(cls, epsilon, delta, n_classes)
    # Truth bit of copy k on D: [x > 0] XOR [0 == k] → copy 0: False, others: True.
    truth_d = [k != 0 for k in range(n_classes)]
    log_p, log_q = [], []
    for outcome in itertools.product([1, 0], repeat=n_classes):
        lp = lq = 0.0
        for k, bit in enumerate(outcome):
            on_d = _bit_law(eps_k[k], truth_d[k])
            on_d2 = _bit_law(eps_k[k], not truth_d[k])
            lp += on_d[1 - bit]
            lq += on_d2[1 - bit]
        log_p.append(lp)
        log_q.append(lq)
    return exact_epsilon(log_p, log_q, delta)


@pytest.mark.parametrize(("epsilon", "delta", "n_classes"), CLAIMS)
def test_one_vs_rest_composition_within_claim(epsilon, delta, n_classes):
    loss = _exact_loss(_OneVsRestRR, epsilon, delta, n_classes)
    assert loss <= epsilon * (1 + 1e-9)
    # Tight: the split leaves nothing on the table for pure copies (δ = 0: ε/C each).
    if delta == 0:
        assert loss == pytest.approx(epsilon, rel=1e-9)


@pytest.mark.parametrize("twin", [_HalfClaimTwin, _ParallelTwin])
@pytest.mark.parametrize(("epsilon", "delta", "n_classes"), CLAIMS)
def test_broken_twins_are_caught_at_twice_the_claim(twin, epsilon, delta, n_classes):
    assert _exact_loss(twin, epsilon, delta, n_classes) >= 1.9 * epsilon


def test_released_bits_follow_the_audited_law():
    # The law above is the one the fitted copies sample from, independently: per copy,
    # the frequency of "bit = truth" over seeds is e^ε_k/(1 + e^ε_k), and all three
    # at once p³ (copies sharing noise would give p) — within 5 sigma.
    n, n_classes = 1000, 3
    hits = np.zeros((n, n_classes), dtype=bool)
    for seed in range(n):
        est = _OneVsRestRR(epsilon=1.5, classes=[0, 1, 2], random_state=seed).fit(X_D, [0])
        hits[seed] = [c.bit_ == (k != 0) for k, c in enumerate(est.estimators_)]
    p = 1 / (1 + np.exp(-est.estimators_[0].epsilon))
    for freq, q in [*((f, p) for f in hits.mean(axis=0)), (hits.all(axis=1).mean(), p**3)]:
        assert abs(freq - q) < 5 * np.sqrt(q * (1 - q) / n)


def test_budget_pays_the_total_once():
    budget = PrivacyBudget(1.0, 1e-6)
    est = _OneVsRestRR(epsilon=1.0, delta=1e-6, classes=[0, 1, 2], budget=budget,
                       random_state=None).fit(X_D, [0])
    assert budget.charges == ((1.0, 1e-6, budget.charges[0][2]),)
    assert "one-vs-rest over 3 classes" in budget.charges[0][2]
    assert est.privacy_spent_ == PrivacyCost(1.0, 1e-6)
    share = one_vs_rest_split(1.0, 1e-6, 3)
    assert all(c.budget is None and c.privacy_spent_ == share for c in est.estimators_)
