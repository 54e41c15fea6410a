"""``skdp demo`` rows for private online learning of Littlestone classes (DP-SOA, Li–Wang–Ye)."""

import warnings

import numpy as np

from ..exceptions import PrivacyWarning
from ..hypotheses.littlestone import PointVersionSpace, ThresholdVersionSpace
from ._adaptive import AdaptivePrivateOnlineClassifier
from ._adversaries import AdaptiveThresholdAdversary, run_online
from ._dp_soa import DPSOAClassifier
from ._soa import SOAClassifier

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
                                              random_state=rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # a cap shows in the result cell
        curve = run_online(private, adversary, n_rounds, random_state=game)
    soa = run_online(SOAClassifier(cls), adversary, n_rounds, random_state=game)
    half = n_rounds // 2
    switches = f"{private.n_switches_} switch" + ("" if private.n_switches_ == 1 else "es")
    stopped = " (cap hit)" if private.updates_stopped_ else ""
    return {
        "what": f"online thresholds, N={n_domain}, {n_rounds} rounds vs adaptive adversary "
                "(Li–Wang–Ye)",
        "privacy": f"ε={eps:g}, δ={delta:g}",
        "private result": f"{curve[-1]} mistakes, {curve[-1] - curve[half - 1]} in the last "
                          f"{n_rounds - half} ({switches}){stopped}",
        "non-private": f"{soa[-1]} mistakes (SOA; Ldim {cls.ldim()})",
    }


def dpsoa_demo_row(rng, budget):
    """DP-SOA vs the SOA on a point function over 4 points, an oblivious stream.

    Default parameters: DP-SOA predicts with A(∅) until two thirds of its trees agree on
    a competitor (its forced phase, ≈ 1.3–1.6·10³ rounds here), then switches once and
    errs no more. ε = 4 (δ = 1e-6) spent from ``budget``, 10 000 rounds; under a second.
    """
    n_domain, n_rounds, eps, delta = 4, 10_000, 4.0, 1e-6
    x = rng.integers(0, n_domain, size=n_rounds)[:, None]
    y = (x[:, 0] == 2).astype(int)
    private = DPSOAClassifier(eps, delta, PointVersionSpace(n_domain), budget=budget,
                              random_state=rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # a cap shows in the result cell
        wrong = private._partial_fit_mistakes(x, y, classes=[0, 1])
    soa = SOAClassifier(PointVersionSpace(n_domain)).fit(x, y)
    half = n_rounds // 2
    switches = f"{private.n_switches_} switch" + ("" if private.n_switches_ == 1 else "es")
    return {
        "what": f"online point function, N={n_domain}, {n_rounds} rounds, oblivious (DP-SOA)",
        "privacy": f"ε={eps:g}, δ={delta:g}",
        "private result": f"{private._n_mistakes} mistakes, "
                          f"{int(np.count_nonzero(wrong[half:]))} in the last "
                          f"{n_rounds - half} ({switches})",
        "non-private": f"{soa.n_mistakes_} mistake" + ("" if soa.n_mistakes_ == 1 else "s")
                       + " (SOA; Ldim 1)",
    }
