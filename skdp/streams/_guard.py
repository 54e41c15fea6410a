"""A private check of released predictors against a constant, on every new call.

Before a call's rows are learned from, the predictors already released (the models'
combination and the latest model) are run on them; their mistake counts and the
call's per-class row counts are released with discrete Laplace noise. Which predictor
answers next — one of the models, or the constant label with the most noisy rows — is
chosen from these noisy counts only (post-processing). The privacy argument is the
wrapper's (:class:`~skdp.streams.ContinualReleaseClassifier`, "Privacy").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..mechanisms.laplace import discrete_laplace

__all__ = ["CHECK_INDEX", "ConstantGuard", "constant_proba"]

#: Seeded testing mode: check j of a stream draws from index CHECK_INDEX + j of the
#: stream's key (its releases use 0, 1, …), so checks and releases never share noise.
CHECK_INDEX = 2**32

#: z-score by which a challenger must beat the default predictor on some window of
#: recent checks before it answers instead. Public; 2 keeps a wrong switch rare (the
#: windows are a handful of nearly nested tests) while a gap of 2 noise widths on one
#: call of 1,000 rows at ε = 0.1 is 12 points: an abrupt change is seen at once.
Z_SWITCH = 2.0
#: Longest window of checks (in calls) the choice looks at: a public constant.
MAX_WINDOW = 64


def constant_proba(n_rows: int, n_classes: int, index: int) -> NDArray[np.float64]:
    """``predict_proba`` of a constant answer: a point mass on class ``index`` for every
    row. A function of the guard's released choice only (post-processing)."""
    out = np.zeros((int(n_rows), int(n_classes)))
    out[:, index] = 1.0
    return out


def _variance(scale: float) -> float:
    """Variance of discrete Laplace noise of this scale (2α/(1 − α)², α = e^(−1/scale))."""
    alpha = math.exp(-1.0 / scale)
    return 2.0 * alpha / (1.0 - alpha) ** 2


class ConstantGuard:
    """Noisy mistake counts of K released predictors and noisy class counts, one
    record per checked call, and the choice they imply.

    Parameters
    ----------
    epsilon : float
        ε of each check (each row is checked once: in its own call).
    n_models : int
        K, the model predictors compared (public).
    n_classes : int
        C (public).
    replace : bool, default=False
        The neighbouring relation: ``False``, streams that differ by one row added or
        removed; ``True``, by one row replaced (same length, as DP-Winnow's guarantee:
        the call's row count is then public).

    Notes
    -----
    A row added or removed moves each of its call's K mistake counts by at most 1 and
    one class count by exactly 1: the released vector has L1 sensitivity K + 1, so
    noise of scale (K + 1)/ε on every coordinate makes a check ε-DP (discrete Laplace
    mechanism). A row replaced moves each mistake count by at most 1 and, when its
    label changes, two class counts by 1 (one down, one up): L1 sensitivity K + 2 —
    except with two classes, where only the second class's count gets noise and the
    first's is released as the call's public row count minus it (post-processing):
    K + 1 again.
    """

    def __init__(self, epsilon: float, n_models: int, n_classes: int, *,
                 replace: bool = False) -> None:
        self.epsilon = float(epsilon)
        self.n_models, self.n_classes = int(n_models), int(n_classes)
        self.replace = bool(replace)
        self._noisy: list[NDArray[np.int64]] = []  # released: public

    def _derived_first_count(self) -> bool:
        """Replace-one with two classes: the first class's count is derived."""
        return self.replace and self.n_classes == 2

    @property
    def sensitivity(self) -> int:
        """L1 sensitivity of the noised coordinates: K + 1, or K + 2 for a replaced
        row among more than two classes."""
        return self.n_models + 1 + int(self.replace and not self._derived_first_count())

    @property
    def scale(self) -> float:
        """The noise scale of every noised coordinate: the L1 sensitivity over ε."""
        return self.sensitivity / self.epsilon

    def _noise(self, size: int, rng: np.random.Generator) -> NDArray[np.int64]:
        return np.asarray(discrete_laplace(self.scale, size, rng), dtype=np.int64)

    def _centres(self, mistakes: NDArray[Any], counts: NDArray[Any]) -> NDArray[np.int64]:
        """The exact values that get noise: the K mistake counts and the C class
        counts (the second class's only, when the first's is derived)."""
        counts = np.asarray(counts, dtype=np.int64)
        if self._derived_first_count():
            counts = counts[1:]
        return np.r_[np.asarray(mistakes, dtype=np.int64), counts]

    def check(self, mistakes: NDArray[Any], counts: NDArray[Any],
              rng: np.random.Generator) -> None:
        """Release one call's K mistake counts and C class counts with noise."""
        if np.size(mistakes) != self.n_models or np.size(counts) != self.n_classes:
            raise ValueError("ConstantGuard.check: wrong number of counts.")
        centres = self._centres(mistakes, counts)
        noisy = centres + self._noise(centres.size, rng)
        if self._derived_first_count():
            noisy = np.r_[noisy[:-1], int(np.sum(counts)) - noisy[-1], noisy[-1]]
        self._noisy.append(noisy)

    @property
    def n_checks(self) -> int:
        return len(self._noisy)

    def choice(self) -> tuple[str, int]:
        """``("model", k)`` or ``("constant", class index)``: the predictor to use next.

        Model 0 answers unless, on some window of the last w = 1, 2, 4, … ≤ 64 checks, a
        challenger (another model, or the constant label with the most noisy rows in
        that window) made fewer noisy mistakes by more than ``Z_SWITCH`` standard
        deviations of the difference's noise; the largest such z-score wins. A function
        of the released noisy counts and public constants only.
        """
        best, best_z = ("model", 0), Z_SWITCH
        if not self._noisy:
            return best
        history = np.asarray(self._noisy[-MAX_WINDOW:], dtype=float)
        var = _variance(self.scale)
        # Every window's sums at once (a check per call: the loop's numpy calls cost a
        # tenth of SGD's partial_fit); sums of integers, exact in any order.
        windows = [1 << j for j in range(history.shape[0].bit_length())]
        sums = np.cumsum(history[::-1], axis=0)[[w - 1 for w in windows]].tolist()
        for w, row in zip(windows, sums, strict=True):
            mistakes, counts = row[:self.n_models], row[self.n_models:]
            for k in range(1, self.n_models):
                z = (mistakes[0] - mistakes[k]) / math.sqrt(2 * w * var)
                if z > best_z:
                    best, best_z = ("model", k), z
            label = counts.index(max(counts))  # the first largest, as np.argmax
            constant = sum(counts) - counts[label]  # its noisy mistakes
            z = (mistakes[0] - constant) / math.sqrt(w * var * self.n_classes)
            if z > best_z:
                best, best_z = ("constant", label), z
        return best
