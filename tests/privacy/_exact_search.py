"""Exact law of what PrivateRandomizedSearchCV releases, for fixed candidate models.

A trial draws one of C candidates uniformly (the search's `_draw` on a list), and
releases the candidate and its noisy validation accuracy: the fold's (correct, wrong)
cells plus two discrete Laplace draws of scale `metrics._SENSITIVITY / ε₀`, turned into
the float `metrics._scores_from_noisy` returns. The law of that float per candidate
is `test_private_scorer_audit._log_law_of_released_accuracy` (noise within 50 scales).

The search releases the best of K i.i.d. trials, ties to the earliest — in law, to a
uniformly chosen tied trial. With g(v) the per-trial mass of score v, g_c(v) that of
(candidate c, score v), and G(v) = P[score < v]:

    P[release (c, v)] = Σ_k P[K = k]·((G(v) + g(v))^k − G(v)^k)·g_c(v)/g(v)
                      = (pgf(G(v) + g(v)) − pgf(G(v)))·g_c(v)/g(v),

with pgf the probability generating function of K (the stopping law's `pgf`); under
Poisson, K = 0 releases nothing, with mass pgf(0).
"""

import numpy as np
from test_private_scorer_audit import _log_law_of_released_accuracy


def release_law(cells_by_candidate, epsilon, law, exact_scores=False):
    """(outcomes, masses): outcome (c, v) for candidate c and score v; (-1, nan) is ⊥.

    ``exact_scores`` is the broken twin's trial: the exact accuracy, no noise.
    """
    laws = []
    for cells in cells_by_candidate:
        cells = np.asarray(cells)
        if exact_scores:
            laws.append((np.array([cells[0] / max(cells.sum(), 1)]), np.array([1.0])))
        else:
            laws.append(_log_law_of_released_accuracy(cells, epsilon))
    values = np.unique(np.concatenate([v for v, _ in laws]))
    per = np.zeros((len(laws), values.size))
    for c, (v, m) in enumerate(laws):
        per[c, np.searchsorted(values, v)] = m / len(laws)
    g = per.sum(axis=0)
    below = np.cumsum(g) - g
    best = law.pgf(below + g) - law.pgf(below)
    share = np.divide(per, g, out=np.zeros_like(per), where=g > 0)
    masses = (best * share).ravel()
    outcomes = [(c, v) for c in range(len(laws)) for v in values]
    if law.kind == "poisson":
        outcomes.append((-1, np.nan))
        masses = np.append(masses, law.pgf(np.array(0.0)))
    return outcomes, masses


def aligned_logs(law0, law1):
    """log masses of two release laws on the union of their outcomes (−inf where absent)."""
    keys = sorted(set(law0[0]) | set(law1[0]), key=lambda o: (o[0], np.nan_to_num(o[1])))
    index = {k: i for i, k in enumerate(keys)}
    out = []
    for outcomes, masses in (law0, law1):
        full = np.zeros(len(keys))
        for o, m in zip(outcomes, masses, strict=True):
            full[index[o]] += m
        with np.errstate(divide="ignore"):
            out.append(np.log(full))
    return out
