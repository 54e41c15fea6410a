"""Exact audit of Li–Wang–Ye's agnostic learner (BatchSanitizedOnlineClassifier with the
histogram sanitizer) with a 2× twin (issue 26, item 9).

``test_agnostic_audit.py`` samples batches of B = 2 rows: the synthetic batch is then
two rows, too coarse for a factor-two twin to show. Here one batch of B = 40 rows on a
one-point domain, class {all +1, all −1}, Hedge copies with η = 0.01: D has 20 rows +1
(row 0 among them) and 20 rows −1; D′ has row 0 = −1. The sanitizer adds discrete
Laplace noise Z± (scale 2/ε) to the two cell counts, projects onto counts summing to B
and allocates B rows, so the number k of synthetic +1 rows is ⌊(B + d + Z₊ − Z₋)/2⌋
clipped to [0, B], d = c₊ − c₋ (0 in D, −2 in D′; a tie of the two half remainders goes
to the lower cell, y = −1). ``predict_proba`` after the batch is a strictly increasing
function of k (checked on the runs), so its law is k's, computed exactly from the
closed-form law of Z₊ − Z₋ (``test_experts_proba_exact_audit.log_difference_pmf``).

Claim (1, 0) (the sanitizer is pure ε-DP, the learner one batch): honest exact ε 0.955
(the aggregated pairs of values reach e^{2/b} only in the tails), and the twin whose
sanitizer draws half the noise (2ε) 1.953 > 1: caught. The model is checked against the
learner's own outputs (χ², α = 10⁻⁶).
"""

import warnings

import numpy as np
from _exact_thresholds import pooled_chisquare_pvalue
from test_experts_proba_exact_audit import log_difference_pmf

from skdp.audit import exact_epsilon
from skdp.exceptions import PrivacyWarning
from skdp.mechanisms.laplace import _rational_scale
from skdp.online import BatchSanitizedOnlineClassifier, HistogramSanitizer

EPSILON, B, ETA = 1.0, 40, 0.01
EXPERTS = np.array([[1], [-1]])


class _Recording(HistogramSanitizer):
    """The shipped sanitizer, remembering k (to check predict_proba is injective in it)."""

    def sanitize(self, *args, **kwargs):
        out = super().sanitize(*args, **kwargs)
        self.k = int((out[1] > 0).sum())
        return out


class HalfNoiseSanitizer(_Recording):
    """Broken: discrete Laplace of scale 1/ε (2ε-DP) while the learner claims ε."""

    def _noise_scale(self, epsilon):
        return 1.0 / epsilon


def _labels(neighbour):
    y = np.r_[1, np.tile([-1, 1], B // 2)[: B - 1]]  # 20 × +1, 20 × −1
    if neighbour:
        y[0] = -1
    return y


def run(sanitizer_class, neighbour, n, seed):
    """(predict_proba after the batch, the sanitizer's k) of ``n`` fresh learners."""
    X, y = np.zeros((B, 1)), _labels(neighbour)
    out = np.empty((n, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        for i, s in enumerate(np.random.default_rng(seed).integers(2**32, size=n)):
            san = sanitizer_class()
            clf = BatchSanitizedOnlineClassifier(
                EPSILON, 0.0, hypothesis_class=EXPERTS, batch_size=B, n_rounds=B,
                learning_rate=ETA, sanitizer=san, classes=[-1, 1], random_state=int(s))
            clf.partial_fit(X, y)
            out[i] = clf.predict_proba(X[:1])[0, 1], san.k
    return out


def k_law(sanitizer_class, neighbour):
    """Exact log P(k = 0 … B) for the sanitizer's own noise scale."""
    t, s = _rational_scale(sanitizer_class()._noise_scale(EPSILON))
    scale = t / s
    w = np.arange(-60 * int(np.ceil(scale)) - B, 60 * int(np.ceil(scale)) + B + 1)
    d = -2 if neighbour else 0
    k = np.clip(np.floor((B + d + w) / 2), 0, B).astype(int)
    p = np.bincount(k, weights=np.exp(log_difference_pmf(w, scale)), minlength=B + 1)
    with np.errstate(divide="ignore"):
        return np.log(p / p.sum())


def exact_epsilon_of(sanitizer_class):
    return exact_epsilon(k_law(sanitizer_class, False), k_law(sanitizer_class, True), 0.0)


def test_model_is_the_learners_release():
    for cls, neighbour, seed in ((_Recording, False, 1), (HalfNoiseSanitizer, True, 2)):
        runs = run(cls, neighbour, 300, seed)
        order = np.argsort(runs[:, 1], kind="stable")
        p, k = runs[order, 0], runs[order, 1]
        # predict_proba is a strictly increasing function of k on these runs
        assert np.all(np.diff(p)[np.diff(k) == 0] == 0) and np.all(np.diff(p)[np.diff(k) > 0] > 0)
        seen = np.bincount(k.astype(int), minlength=B + 1)
        expected = np.exp(k_law(cls, neighbour)) * k.size
        assert pooled_chisquare_pvalue(seen, expected) > 1e-6, cls.__name__


def test_honest_learner_within_claim_and_half_noise_twin_caught():
    honest, twin = exact_epsilon_of(_Recording), exact_epsilon_of(HalfNoiseSanitizer)
    assert 0.9 < honest <= EPSILON, honest  # computed 0.955
    assert twin > EPSILON, twin  # computed 1.953
