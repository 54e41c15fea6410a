"""Exact privacy loss of the DP decision list's release, and its factor-two twins
(issue 26, item 9).

The sampled audits of ``test_decision_list_net_cover_audit.py`` catch a twin whose rule
step takes the score as sensitivity 1 (a factor (1 + λ)/2 = 5), but a twin calibrated for
2ε needs more runs than a fast test can afford (the reviewer computed log-ratio 2.69 > 2
on the sharp pair's event where the audit reports ≥ 1.40). Here the whole release —
the rule steps and the full noisy count matrix — is computed exactly
(``_exact_decision_list.py``: the estimator's own routine, its two noise draws
enumerated instead of sampled) on the audits' pairs, for the honest estimator and for
``TwiceEpsilon`` (every step calibrated for 2ε, claiming ε). Computed values are in
the comments; ``benchmarks/audit_power.py`` prints them in the docs' table.
"""

import numpy as np
import pytest
from _decision_list_audit_runs import D0, D1, TwiceEpsilon, private_sampler, sharp_pair
from _exact_decision_list import _leaves, exact_release_epsilon
from scipy.stats import binomtest

from skdp.decision_list import DPDecisionListClassifier

SHARP = sharp_pair(30)
CASES = {
    # (pair, estimator parameters, claimed (ε, δ))
    "net-cover-sharp": (SHARP, {"error_weight": 9.0}, (2.0, 0.0)),
    "net-cover-negations": ((D0, D1), {"negations": True}, (2.0, 0.0)),
    "net-cover-tight": (SHARP, {"error_weight": 9.0, "accounting": "tight"}, (2.0, 0.05)),
    "greedy-cover-sharp": (SHARP, {"algorithm": "greedy_cover", "accounting": "basic"},
                           (2.0, 0.0)),
}


def exact_case(name, cls):
    pair, params, (eps, delta) = CASES[name]
    clf = cls(epsilon=eps, delta=delta, max_rules=1, **params)
    return exact_release_epsilon(clf, *pair, delta=delta), eps


@pytest.mark.parametrize("name", list(CASES))
def test_exact_release_honest_and_twice_epsilon(name):
    honest, eps = exact_case(name, DPDecisionListClassifier)
    twin, _ = exact_case(name, TwiceEpsilon)
    # computed (honest / twin): sharp 1.90 / 3.80, negations 1.50 / 3.12,
    # tight 1.25 / 3.23 (at δ = 0.05), greedy cover 1.83 / 3.39
    assert honest <= eps + 1e-9, honest
    assert twin > eps, twin


def test_exact_distribution_is_what_the_estimator_samples():
    """P(the first rule is f*, then default 1) on the sharp pair, exactly, against
    fits drawn by the audits' sampler (two-sided binomial test, α = 1e-6)."""
    d0, d1 = SHARP
    for data in (d0, d1):
        clf = DPDecisionListClassifier(epsilon=2.0, delta=0.0, max_rules=1, error_weight=9.0)
        leaves = _leaves(clf, *data)
        star = 30  # candidate index of (f*, label) — checked against the encoded output
        outs = private_sampler(clf, lambda c: np.array(
            [c._rule_features[0], c._rule_codes[0], c._default_code]), 3)(
            data, 1000, np.random.default_rng(11))
        hits = int((outs[:, 0] == star).sum())
        p_star = sum(np.exp(lp) for path, (lp, rows, _) in leaves.items()
                     if rows[0].sum() == 0)  # f* covers no row: region 0 is empty
        assert binomtest(hits, outs.shape[0], p_star).pvalue > 1e-6, (hits, p_star)
