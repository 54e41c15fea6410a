"""``skdp demo`` rows for private online learning of Littlestone classes (DP-SOA, Li–Wang–Ye)."""

import warnings

import numpy as np

from .._validation import TestingSeed
from ..exceptions import PrivacyWarning
from ..hypotheses.littlestone import PointVersionSpace, ThresholdVersionSpace
from ._adaptive import AdaptivePrivateOnlineClassifier
from ._adversaries import AdaptiveThresholdAdversary, run_online
from ._dp_soa import DPSOAClassifier
from ._soa import SOAClassifier

# The demo rows' non-private reference, named so a newcomer knows why it is not private.
_NON_PRIVATE_SOA = "the Standard Optimal Algorithm, which reads every label exactly"

__all__ = ["demo_row", "dpsoa_demo_row"]


def demo_row(rng, budget):
    """Li–Wang–Ye vs the SOA on thresholds over 256 points, against an adaptive adversary.

    The adversary binary-searches the released hypothesis, then keeps querying the
    boundary point it gets wrong (every round with a wrong hypothesis is a mistake).
    Spends ε = 2 (δ = 1e-6) from ``budget``; runs in about a second.
    """
    n_domain, n_rounds, eps, delta = 2**8, 4000, 2.0, 1e-6
    cls = ThresholdVersionSpace(n_domain)
    adversary = AdaptiveThresholdAdversary(n_domain, sees_current=True, pinned="seek")
    game = int(rng.integers(2**31))  # the same game (hidden threshold) for both learners
    private = AdaptivePrivateOnlineClassifier(eps, delta, cls, n_rounds, budget=budget,
                                              random_state=TestingSeed(rng))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # a cap shows in the result cell
        curve = run_online(private, adversary, n_rounds, random_state=game)
    soa = run_online(SOAClassifier(cls), adversary, n_rounds, random_state=game)
    half = n_rounds // 2
    switches = f"{private.n_switches_} switch" + ("" if private.n_switches_ == 1 else "es")
    stopped = " (cap hit)" if private.updates_stopped_ else ""
    forced = curve[half - 1]  # the forced phase ends well inside the first half
    return {
        "what": f"Learn a cut-off on {n_domain} values while an adversary picks each question "
                "to catch the learner out (online, private)",
        "privacy": f"ε={eps:g}, δ={delta:g}",
        "private result": f"{curve[-1]} wrong answers in {n_rounds} rounds, "
                          f"{curve[-1] - curve[half - 1]} in the last {n_rounds - half}"
                          f"{stopped}",
        "non-private": f"{soa[-1]} wrong ({_NON_PRIVATE_SOA})",
        "note": f"a private learner must first collect evidence: it answers with a fixed "
                f"guess for a while ({forced} mistakes), then stops erring against this "
                "adversary; an adversary that keeps seeking its errors defeats it "
                "(see the docs' 'which learner' page)",
        "details": f"Li–Wang–Ye adaptive learner, thresholds N={n_domain} (Ldim {cls.ldim()}), "
                   f"binary-search adversary, {switches}",
    }


def dpsoa_demo_row(rng, budget):
    """DP-SOA vs the SOA on a point function over 4 points, an oblivious stream.

    Default parameters: DP-SOA predicts with A(∅) until enough of its trees agree on
    another hypothesis (its forced phase, ≈ 170–230 rounds here), then switches once and
    errs no more. ε = 4 (δ = 1e-6) spent from ``budget``, 10 000 rounds; under a second.
    """
    n_domain, n_rounds, eps, delta = 4, 10_000, 4.0, 1e-6
    x = rng.integers(0, n_domain, size=n_rounds)[:, None]
    y = (x[:, 0] == 2).astype(int)
    private = DPSOAClassifier(eps, delta, PointVersionSpace(n_domain), budget=budget,
                              random_state=TestingSeed(rng))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # a cap shows in the result cell
        wrong = private._partial_fit_mistakes(x, y, classes=[0, 1])
    soa = SOAClassifier(PointVersionSpace(n_domain)).fit(x, y)
    half = n_rounds // 2
    switches = f"{private.n_switches_} switch" + ("" if private.n_switches_ == 1 else "es")
    return {
        "what": f"Learn which of {n_domain} values is special from a stream of labelled "
                "examples (online, private)",
        "privacy": f"ε={eps:g}, δ={delta:g}",
        "private result": f"{private._n_mistakes} wrong answers in {n_rounds} rounds, "
                          f"{int(np.count_nonzero(wrong[half:]))} in the last {n_rounds - half}",
        "non-private": f"{soa.n_mistakes_} wrong ({_NON_PRIVATE_SOA})",
        "note": "on uniform streams it learns small domains only (hundreds of values "
                "need ~10⁵ rounds, thousands more; see the docs' 'which learner' page)",
        "details": f"DP-SOA, point functions N={n_domain} (Ldim 1), oblivious uniform stream, "
                   f"{switches}",
    }
