"""Datasets for examples, tests and benchmarks: public feature bounds and planted models.

Private learners need public bounds for their preprocessing; the helpers here
provide documented ones for sklearn's bundled datasets, and synthetic data whose
ground truth is known (so accuracy has a ceiling to compare against).
:class:`RobustPEPStream` and :func:`play_robust_pep` stage the robust
private-everlasting-prediction game (Stemmer 2024): a planted rectangle or stump,
an initial sample from D, and query streams mixing D with adversarial queries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import RandomStateLike, check_generator, check_positive_int
from .exceptions import BudgetExhaustedError

__all__ = [
    "RobustPEPStream",
    "breast_cancer_public_bounds",
    "planted_decision_list",
    "play_robust_pep",
]

# (min, max) of each feature as published in the dataset's documentation
# (load_breast_cancer().DESCR, "Summary Statistics"; UCI). Treated as public: they
# are printed in the documentation, not computed by skdp. Strictly they are the
# min/max of these very 569 records, so a real deployment should take its ranges
# from domain knowledge instead; evenly spaced cuts inside them use no quantiles.
_DESCR_RANGES = {
    "mean radius": (6.981, 28.11), "mean texture": (9.71, 39.28),
    "mean perimeter": (43.79, 188.5), "mean area": (143.5, 2501.0),
    "mean smoothness": (0.053, 0.163), "mean compactness": (0.019, 0.345),
    "mean concavity": (0.0, 0.427), "mean concave points": (0.0, 0.201),
    "mean symmetry": (0.106, 0.304), "mean fractal dimension": (0.05, 0.097),
    "radius error": (0.112, 2.873), "texture error": (0.36, 4.885),
    "perimeter error": (0.757, 21.98), "area error": (6.802, 542.2),
    "smoothness error": (0.002, 0.031), "compactness error": (0.002, 0.135),
    "concavity error": (0.0, 0.396), "concave points error": (0.0, 0.053),
    "symmetry error": (0.008, 0.079), "fractal dimension error": (0.001, 0.03),
    "worst radius": (7.93, 36.04), "worst texture": (12.02, 49.54),
    "worst perimeter": (50.41, 251.2), "worst area": (185.2, 4254.0),
    "worst smoothness": (0.071, 0.223), "worst compactness": (0.027, 1.058),
    "worst concavity": (0.0, 1.252), "worst concave points": (0.0, 0.291),
    "worst symmetry": (0.156, 0.664), "worst fractal dimension": (0.055, 0.208),
}


def breast_cancer_public_bounds(feature_names: Iterable[str]) -> NDArray[np.float64]:
    """(low, high) per feature from the ranges published in the dataset's DESCR."""
    return np.array([_DESCR_RANGES[str(name)] for name in feature_names])


def planted_decision_list(
    rng: np.random.Generator, n: int, d: int, length: int = 6, noise: float = 0.0,
    density: float = 0.15,
) -> tuple[NDArray[np.int8], NDArray[np.int64], tuple[list[tuple[int, int]], int]]:
    """Random sparse bits labelled by a random length-``length`` decision list.

    Returns X (n, d) int8, y, and the planted rules [(feature, label), ...] + default.
    """
    X = (rng.random((n, d)) < density).astype(np.int8)
    features = rng.choice(d, size=length, replace=False)
    labels = rng.integers(0, 2, size=length)
    default = int(rng.integers(0, 2))
    y = np.full(n, default)
    for f, b in zip(features[::-1], labels[::-1], strict=True):
        y[X[:, f] == 1] = b
    flip = rng.random(n) < noise
    y[flip] = 1 - y[flip]
    return X, y, (list(zip(features.tolist(), labels.tolist(), strict=True)), default)


# ----------------------------------------------------------------------------
# Robust private-everlasting-prediction (PERP) streams (Stemmer 2024, Def. 3.1)
# ----------------------------------------------------------------------------
_ADVERSARIES = ("none", "far", "boundary", "repeat", "challenge")
_DISTRIBUTIONS = ("uniform", "mixture")
_CONCEPTS = ("rectangle", "stump")


def _check_choice(value, options, name):
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {options}, got {value!r}.")
    return value


def _check_fraction(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}.")
    value = float(value)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{name} must lie in (0, 1], got {value!r}.")
    return value


def _check_target(target, n_features):
    target = np.array(target, dtype=float)
    if target.shape != (2, n_features):
        raise ValueError(f"target must have shape (2, n_features) = (2, {n_features}) "
                         f"([lower; upper]), got {target.shape}.")
    if np.isnan(target).any() or np.any(target[0] > target[1]):
        raise ValueError("target must hold lower ≤ upper bounds (±inf allowed, no NaN).")
    if not np.isfinite(target).any():
        raise ValueError("target must have at least one finite bound (a face).")
    return target


class RobustPEPStream:
    """Query streams of the robust private-everlasting-prediction game.

    Each stream plants a target concept — an axis-aligned rectangle (or a decision
    stump) over the public box [0, 1]^d — and a distribution D on that box. It
    draws the labelled initial sample from D, then query blocks in which each
    query independently comes from D with probability ``gamma`` and otherwise
    from an adversary (Stemmer 2024, Definition 3.1). Only the D-queries count for
    utility: ``from_D`` marks them, so a predictor's error on D can be measured
    while the adversary tries to wear it down.

    Parameters
    ----------
    n_features : int, default=2
        The dimension d.
    gamma : float in (0, 1], default=0.5
        Probability that a query comes from D.
    adversary : {"challenge", "far", "boundary", "repeat", "none"}, default="challenge"
        Who picks the non-D queries (see Notes).
    distribution : {"uniform", "mixture"}, default="uniform"
        D: uniform on [0, 1]^d, or a mixture of ``n_components`` Gaussians
        (means uniform in [0.2, 0.8]^d, standard deviation 0.15) truncated to
        [0, 1]^d by rejection (no atoms on the box's faces).
    concept : {"rectangle", "stump"}, default="rectangle"
        Random target when ``target`` is None. A rectangle has side
        ``target_mass ** (1/d)`` (each side jittered by ±15 %, placed uniformly in
        [0, 1]); a stump is ``x_j ≥ t`` or ``x_j ≤ t`` for a random axis j and t
        uniform in [0.3, 0.7] — the box [lower; upper] with ±inf on its other faces.
    target : array-like of shape (2, n_features), optional
        The target box [lower; upper] (closed); ±inf bounds allowed.
    target_mass : float in (0, 1], default=0.4
        Approximate D-mass (under the uniform D) of a random target rectangle.
    n_components : int, default=3
    n_repeated : int, default=4
        Size of the ``"repeat"`` adversary's pool of points.
    probe_fraction : float in (0, 1], default=0.25
        Share of the ``"challenge"`` adversary's queries spent on probes.
    random_state : None, int or numpy Generator
        Seeds the target, D, the mask and the adversary.

    Attributes
    ----------
    target_ : ndarray of shape (2, n_features)
        [lower; upper] of the target; a point is labelled 1 iff lower ≤ x ≤ upper.
    learned_estimate_ : ndarray of shape (2, n_features)
        ``"challenge"`` only: the adversary's current estimate of the predictor's
        positive box (starts halfway between the target's centre and faces).
    n_blocks_ : int
        Blocks issued so far.

    Notes
    -----
    The adversaries:

    * ``"none"``: no adversary; every query comes from D (``gamma`` is ignored).
    * ``"far"``: points far from the data — every coordinate in the public box
      except at least one pushed 1 to 100 box-widths outside it.
    * ``"boundary"``: points on a face of the *target*: the face coordinate is
      the bound itself or its adjacent float on either side (on the boundary,
      just inside, just outside), the other coordinates inside the target.
    * ``"repeat"``: the same few points (``n_repeated``, half on the target's
      boundary, half from D) over and over.
    * ``"challenge"``: adaptive — crafted to trigger BetweenThresholds
      challenges, i.e. "medium" answers. A PERP predictor labels a point positive
      only when, on every axis, the point lies beyond (almost all) the private
      boundary examples it keeps; the medium band, where its teachers disagree
      most, is the strip between the *learned* rectangle and the target. The
      adversary spends ``probe_fraction`` of its queries on probes along the
      segment from the target's centre to each finite face, estimates the
      learned face from the answers (1-D least-error threshold of the probe
      answers of its last few blocks), and aims the rest of its queries inside
      that strip (its other coordinates inside the estimated learned box, so
      every other axis answers "inside"). It adapts at block granularity:
      :meth:`next_block` takes the predictor's answers to the previous block (a
      block of size 1 gives the fully adaptive adversary of the definition).

    Labels are 0 / 1 (1 = inside the target). :meth:`next_block` reads the
    predictor's answers as "1 = inside", so fit predictors on these labels (then
    ``classes_[1] == 1``). The adversary may know the target and D: the
    definition quantifies over every adversary.

    References
    ----------
    U. Stemmer, "Private Truly-Everlasting Robust-Prediction", ICML 2024,
    Definition 3.1 and Section 4.2.1.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.datasets import RobustPEPStream
    >>> stream = RobustPEPStream(2, gamma=0.5, adversary="far", random_state=0)
    >>> X, y = stream.sample(1000)            # labelled initial sample from D
    >>> X.shape, sorted(np.unique(y).tolist())
    ((1000, 2), [0, 1])
    >>> Q, from_D = stream.next_block(500)
    >>> Q.shape, bool(0.4 < from_D.mean() < 0.6)
    ((500, 2), True)
    >>> bool(np.all((Q[from_D] >= 0) & (Q[from_D] <= 1)))   # D lives on the box
    True
    >>> bool(np.all(np.abs(Q[~from_D] - 0.5).max(axis=1) > 1))  # far from it
    True
    """

    def __init__(self, n_features: int = 2, *, gamma: float = 0.5, adversary: str = "challenge",
                 distribution: str = "uniform", concept: str = "rectangle",
                 target: ArrayLike | None = None, target_mass: float = 0.4, n_components: int = 3,
                 n_repeated: int = 4, probe_fraction: float = 0.25,
                 random_state: RandomStateLike = None) -> None:
        self.n_features = check_positive_int(n_features, "n_features")
        self.gamma = _check_fraction(gamma, "gamma")
        self.adversary = _check_choice(adversary, _ADVERSARIES, "adversary")
        self.distribution = _check_choice(distribution, _DISTRIBUTIONS, "distribution")
        self.concept = _check_choice(concept, _CONCEPTS, "concept")
        self.target_mass = _check_fraction(target_mass, "target_mass")
        self.n_components = check_positive_int(n_components, "n_components")
        self.n_repeated = check_positive_int(n_repeated, "n_repeated")
        self.probe_fraction = _check_fraction(probe_fraction, "probe_fraction")
        self.random_state = random_state
        d = self.n_features
        target = None if target is None else _check_target(target, d)
        self._rng = check_generator(random_state)
        rng = self._rng
        self._means = rng.uniform(0.2, 0.8, size=(self.n_components, d))
        self.target_ = self._random_target(rng) if target is None else target
        self._faces = [(j, s) for s in (0, 1) for j in range(d)
                       if np.isfinite(self.target_[s, j])]
        # The target clipped to the public box: where "inside" points are drawn.
        self._inner = np.clip(self.target_, 0.0, 1.0)
        self._centre = self._inner.mean(axis=0)
        self.learned_estimate_ = (self._centre + self._inner) / 2
        self._probes: list[Any] = []  # recent blocks' probes: (face index, coordinate, answered 1)
        self._pending = (np.empty(0, np.intp), np.empty(0, np.intp), np.empty(0))
        self._pool = np.concatenate([
            self._boundary_points(rng, self.n_repeated - self.n_repeated // 2),
            self._draw_D(rng, self.n_repeated // 2)])
        self.n_blocks_ = 0
        self._last_block_size: int | None = None

    # ------------------------------------------------------------------ the task
    def _random_target(self, rng):
        d = self.n_features
        target = np.empty((2, d))
        if self.concept == "stump":
            target[0], target[1] = -np.inf, np.inf
            j, t = int(rng.integers(d)), rng.uniform(0.3, 0.7)
            target[int(rng.integers(2)), j] = t
            return target
        width = np.minimum(self.target_mass ** (1 / d) * rng.uniform(0.85, 1.15, size=d), 0.95)
        target[0] = rng.uniform(0.0, 1.0 - width)
        target[1] = target[0] + width
        return target

    def _draw_D(self, rng, n):
        d = self.n_features
        if self.distribution == "uniform":
            return rng.random((n, d))
        out = np.empty((n, d))
        filled = 0
        while filled < n:  # truncation by rejection keeps D atom-free on the faces
            need = n - filled
            comp = rng.integers(self.n_components, size=2 * need + 16)
            cand = self._means[comp] + 0.15 * rng.standard_normal((comp.size, d))
            cand = cand[np.all((cand >= 0.0) & (cand <= 1.0), axis=1)][:need]
            out[filled : filled + len(cand)] = cand
            filled += len(cand)
        return out

    def label(self, X: ArrayLike) -> NDArray[np.int64]:
        """0 / 1 labels of the target on ``X`` (1 = inside the closed box)."""
        points = np.asarray(X, dtype=float)
        inside = (points >= self.target_[0]) & (points <= self.target_[1])
        return np.all(inside, axis=1).astype(np.int64)

    def sample(self, n: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """``n`` labelled rows from D: ``(X, y)``, the initial sample of the game."""
        X = self._draw_D(self._rng, check_positive_int(n, "n"))
        return X, self.label(X)

    # ---------------------------------------------------------------- adversaries
    def _inside(self, rng, n, box):
        return rng.uniform(box[0], box[1], size=(n, self.n_features))

    def _far_points(self, rng, n):
        d = self.n_features
        X = rng.random((n, d))
        far = rng.random((n, d)) < 0.5
        far[np.arange(n), rng.integers(d, size=n)] = True  # at least one coordinate
        offset = rng.uniform(1.0, 100.0, size=(n, d))
        side = rng.random((n, d)) < 0.5
        X[far] = np.where(side, -offset, 1.0 + offset)[far]
        return X

    def _boundary_points(self, rng, n):
        X = self._inside(rng, n, self._inner)
        face = rng.integers(len(self._faces), size=n)
        where = rng.integers(3, size=n)  # on the face, adjacent float inside, outside
        for f, (j, s) in enumerate(self._faces):
            rows = face == f
            bound = self.target_[s, j]
            outward = -np.inf if s == 0 else np.inf
            values = np.array([bound, np.nextafter(bound, -outward),
                               np.nextafter(bound, outward)])
            X[rows, j] = values[where[rows]]
        return X

    def _challenge_points(self, rng, n):
        """Probes and strip points; returns the probes' (positions, faces, coordinates)."""
        n_probe = int(np.ceil(self.probe_fraction * n))
        probes = np.arange(n) < n_probe
        face = rng.integers(len(self._faces), size=n)
        axis = np.array([j for j, _ in self._faces])[face]
        X = self._inside(rng, n, self.learned_estimate_)
        X[probes] = self._centre  # probes move along one axis only
        coord = np.empty(n)
        for f, (j, s) in enumerate(self._faces):
            rows = face == f
            # Probes sweep the segment centre → target face; attacks aim at the strip
            # between the estimated learned face and the target's face.
            start = np.where(probes[rows], self._centre[j], self.learned_estimate_[s, j])
            coord[rows] = start + (self._inner[s, j] - start) * rng.random(rows.sum())
        X[np.arange(n), axis] = coord
        return X, (np.flatnonzero(probes), face[probes], coord[probes])

    def _learn_from(self, answers):
        """Record the answers to the last block's probes; re-estimate each learned face."""
        positions, face, coord = self._pending
        self._probes.append((face, coord, np.asarray(answers)[positions] == 1))
        del self._probes[:-4]  # the learned box moves between phases: recent blocks only
        face, coord, said = (np.concatenate(parts) for parts in zip(*self._probes, strict=True))
        for f, (j, s) in enumerate(self._faces):
            rows = face == f
            if not rows.any():
                continue
            # The learned box answers 1 near the centre and 0 beyond its face: the
            # cut along the probe that disagrees with the fewest answers.
            dist = np.abs(coord[rows] - self._centre[j])
            order = np.argsort(dist)
            inside = said[rows][order]
            wrong = np.concatenate([[0], np.cumsum(~inside)]) + np.concatenate(
                [[inside.sum()], inside.sum() - np.cumsum(inside)])
            cut = int(np.argmin(wrong))
            # Midway between the last probe called inside and the next one.
            ends = np.concatenate([[0.0], dist[order], [abs(self._inner[s, j] - self._centre[j])]])
            reach = (ends[cut] + ends[cut + 1]) / 2
            self.learned_estimate_[s, j] = self._centre[j] + (reach if s == 1 else -reach)

    def next_block(
        self, n: int, previous_answers: ArrayLike | None = None,
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """The next ``n`` queries and the mask of those drawn from D.

        Parameters
        ----------
        n : int
            Block size.
        previous_answers : array-like of shape (size of the previous block,), optional
            The predictor's answers (0 / 1, 1 = inside) to the previous block. Only
            the ``"challenge"`` adversary reads them; without them it keeps its
            current estimate of the learned box.

        Returns
        -------
        X : ndarray of shape (n, n_features)
        from_D : ndarray of bool, shape (n,)
            True where the query was drawn from D.
        """
        n = check_positive_int(n, "n")
        if previous_answers is not None:
            previous_answers = np.asarray(previous_answers).ravel()
            if self._last_block_size is None or previous_answers.shape[0] != self._last_block_size:
                raise ValueError(
                    f"previous_answers must answer the previous block "
                    f"({self._last_block_size} queries), got {previous_answers.shape[0]}."
                )
            if self.adversary == "challenge":
                self._learn_from(previous_answers)
        rng = self._rng
        from_D = (rng.random(n) < self.gamma) if self.adversary != "none" else np.ones(n, bool)
        X = np.empty((n, self.n_features))
        X[from_D] = self._draw_D(rng, int(from_D.sum()))
        n_adv = n - int(from_D.sum())
        if self.adversary == "far":
            X[~from_D] = self._far_points(rng, n_adv)
        elif self.adversary == "boundary":
            X[~from_D] = self._boundary_points(rng, n_adv)
        elif self.adversary == "repeat":
            X[~from_D] = self._pool[rng.integers(len(self._pool), size=n_adv)]
        elif self.adversary == "challenge":
            adv, (positions, face, coord) = self._challenge_points(rng, n_adv)
            X[~from_D] = adv
            self._pending = (np.flatnonzero(~from_D)[positions], face, coord)
        self.n_blocks_ += 1
        self._last_block_size = n
        return X, from_D


def play_robust_pep(predictor: Any, stream: RobustPEPStream, n_queries: int, *,
                    block_size: int | Callable[[int], int] = 10_000,
                    callback: Callable[[int, Any], object] | None = None) -> dict[str, Any]:
    """Play a fitted predictor against a :class:`RobustPEPStream` for ``n_queries``.

    Blocks of ``block_size`` queries are drawn from ``stream`` (each block after
    the first is chosen knowing the answers to the previous one) and answered by
    ``predictor.predict``. Stops early if the predictor refuses with a
    :class:`~skdp.exceptions.BudgetExhaustedError`, keeping the answers a
    :class:`~skdp.prediction.QueryBudgetExhaustedError` carries.

    Parameters
    ----------
    predictor : fitted classifier
        Fitted on the stream's 0 / 1 labels; ``predict`` answers each block.
    stream : RobustPEPStream
    n_queries : int
    block_size : int or callable, default=10_000
        Queries per block, or ``block_size(n_done)`` giving the next block's size
        from the number answered so far (e.g. growing blocks for long streams).
    callback : callable, optional
        ``callback(n_done, predictor)`` after each block (e.g. to record
        ``phase_`` as the stream goes).

    Returns
    -------
    result : dict
        ``queries`` and ``answers`` (the answered queries and the labels
        released), ``from_D`` and ``truth`` (of those queries), ``n_answered``,
        ``error_D`` (error rate on the answered D-queries; NaN if there were
        none), ``block_error_D`` (per block), ``block_end`` (queries answered
        after each block) and ``refused`` (the exception that stopped the
        game, or None).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skdp.datasets import RobustPEPStream, play_robust_pep
    >>> stream = RobustPEPStream(2, gamma=0.5, adversary="challenge", random_state=0)
    >>> tree = DecisionTreeClassifier(random_state=0).fit(*stream.sample(2000))
    >>> result = play_robust_pep(tree, stream, 5000, block_size=1000)
    >>> result["n_answered"], bool(result["error_D"] < 0.05)
    (5000, True)
    """
    n_queries = check_positive_int(n_queries, "n_queries")
    if callable(block_size):
        next_size = block_size
    else:
        fixed = check_positive_int(block_size, "block_size")

        def next_size(_):
            return fixed
    queries, answers, masks, truths, block_error, block_end = [], [], [], [], [], []
    previous, done, refused = None, 0, None
    while done < n_queries:
        block = check_positive_int(next_size(done), "block_size")
        X, from_D = stream.next_block(min(block, n_queries - done), previous)
        try:
            previous = np.asarray(predictor.predict(X))
        except BudgetExhaustedError as exc:
            refused = exc
            previous = np.asarray(getattr(exc, "answers", np.empty(0)))
        k = previous.shape[0]
        queries.append(X[:k])
        answers.append(previous)
        masks.append(from_D[:k])
        truths.append(stream.label(X[:k]))
        wrong = previous != truths[-1]
        block_error.append(float(wrong[masks[-1]].mean()) if masks[-1].any() else np.nan)
        done += k
        block_end.append(done)
        if callback is not None:
            callback(done, predictor)
        if refused is not None:
            break
    all_queries, all_answers, from_D, truth = (
        np.concatenate(a) for a in (queries, answers, masks, truths))
    wrong = all_answers != truth
    return {
        "queries": all_queries, "answers": all_answers, "from_D": from_D, "truth": truth,
        "n_answered": done,
        "error_D": float(wrong[from_D].mean()) if from_D.any() else np.nan,
        "block_error_D": np.array(block_error), "block_end": np.array(block_end),
        "refused": refused,
    }
