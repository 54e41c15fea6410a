"""The running mechanism of RectanglesPERP (Stemmer 2024, Alg. 5), vectorised per phase.

One :class:`RectanglesRun` holds the current phase: 2d ChallengeBT copies
(Left_j, Right_j) on boundary slices cut by RSC, the datasets D_j^left / D_j^right
of their "medium" queries, and the phase's positively labelled queries D. It
answers a block of queries exactly as Alg. 5 answers them one at a time: every
step poses a stopping query to every copy (5a), re-executes halted copies (5b),
then walks the query through Left_1, Right_1, …, Left_d, Right_d (5f).

Vectorisation: within a block, every copy's answers are computed for all steps
at once (the walk only narrows which steps reach the next copy), then each
copy's Stopper is peeked to find the first step at which any copy halts; the
block is committed up to that step, halted copies are re-executed, and the rest
of the block is answered afresh. Noise is drawn per copy from buffered streams,
so the answers do not depend on how the queries are split into calls.
"""

import copy

import numpy as np

from .._streams import child_generator
from ..mechanisms.between_thresholds import HARD, LOW
from ..mechanisms.challenge_bt import ChallengeBT
from ..mechanisms.reorder_slice_compute import ReorderSliceCompute
from ._perp_sharp import SHARP_PRESETS

__all__ = ["RectanglesRun"]

_CHUNK_MIN, _CHUNK_MAX = 1024, 65536
LEFT, RIGHT = 0, 1


class _SteppedChallengeBT(ChallengeBT):
    """ChallengeBT answered in blocks of *steps*: a stopping query, then an optional BT query.

    :meth:`ChallengeBT.process` pairs every BT query with a stopping query; in
    Alg. 5 a copy gets a stopping query at every step but a BT query only when
    the query's walk reaches it. These methods split ChallengeBT's block logic
    accordingly, with the same noise streams and counters (and the same cap T).
    """

    def take_bt(self, values):
        """Uncommitted BT answers for ``values`` (noise drawn from the buffered stream)."""
        noise = self._bt._take_noise(values.size)
        codes = self._bt._classify(values + noise, self._bt._noisy_lower, self._bt._noisy_upper)
        return codes, noise

    def commit_bt(self, codes, noise, n):
        """Keep the first ``n`` answers of :meth:`take_bt`; the rest's noise goes back."""
        self._bt._commit(codes, noise, n)

    def _steps_left(self):
        return self.max_steps - self.n_stop_queries

    def first_halt(self, increments):
        """Index of the stopping query that would halt the copy, or None (no state change).

        ``increments[i]`` ones are added to the Stopper just before stopping query i.
        Also halts at the T-th stopping query (ChallengeBT's hard cap).
        """
        probe = copy.deepcopy(self._stopper)  # same buffered noise: a faithful dry run
        answers = probe.process(increments)
        halt = answers.size - 1 if answers.size and answers[-1] else None
        limit = self._steps_left()
        if increments.size >= limit and (halt is None or halt > limit - 1):
            halt = limit - 1
        return halt

    def stop_steps(self, increments):
        """Pose the stopping queries for real; True if the copy halted."""
        answers = self._stopper.process(increments)
        self.n_stop_queries += int(answers.size)
        if self.n_stop_queries >= self.max_steps:
            self._out_of_steps = True
        return self.halted


def _extremes(values, side, m):
    """The m smallest (Left_j) or largest (Right_j) of ``values``: a copy's slice."""
    ordered = np.sort(np.asarray(values, dtype=float))
    return ordered[:m] if side == LEFT else ordered[::-1][:m]


class _Copy:
    """One ChallengeBT copy: axis j, side, its sorted boundary coordinates, pending D_j^s."""

    __slots__ = ("axis", "carry", "mechanism", "pending", "side", "values")

    def __init__(self, axis, side, values, mechanism):
        self.axis, self.side, self.mechanism = axis, side, mechanism
        self.values = np.sort(np.asarray(values, dtype=float))
        self.pending = []
        self.carry = 0.0

    def count(self, x):
        # Left_j: points of its dataset with j-th coordinate bigger than x[j];
        # Right_j: smaller (Alg. 5, step 5f). Sensitivity 1 in the dataset.
        if self.side == LEFT:
            return (self.values.size - np.searchsorted(self.values, x, side="right")).astype(float)
        return np.searchsorted(self.values, x, side="left").astype(float)


class RectanglesRun:
    """The state of one RectanglesPERP execution (phases, copies, datasets).

    Parameters
    ----------
    parameters : PERPParameters
        The schedule (:func:`skdp.prediction.perp_parameters`).
    positives : ndarray of shape (n_pos, d)
        The initial sample's positive examples (negatives are never used: every
        slice takes positives first and the copies count positives only).
    rng : numpy.random.Generator
        Slice sizes, copy seeds; each copy draws its noise from its own child stream.
    verbose : int
        Print phase transitions and re-executions when > 0.

    Attributes
    ----------
    phase : int
        Current phase p (1-based).
    step : int
        Queries answered in the current phase (the phase ends after t_p).
    n_reexecutions : int
        Copies re-executed on their D_j^s after a Stopper halt (all phases).
    """

    def __init__(self, parameters, positives, rng, *, verbose=0):
        self.parameters = parameters
        self.rng = rng
        self.verbose = verbose
        self.d = parameters.n_features
        self.phase = 0
        self.n_reexecutions = 0
        self._chunk = _CHUNK_MIN
        self._start_phase(np.asarray(positives, dtype=float).reshape(-1, self.d))

    # -------------------------------------------------------------- hooks (audits)
    def _rsc(self, data, q):
        return ReorderSliceCompute(data, q.epsilon_instance, q.delta_instance, 2 * self.d,
                                   random_state=self.rng)

    def _challenge_bt(self, q, seed):
        if self.parameters.preset in SHARP_PRESETS:  # svt Stopper, t_u = t_l + gap
            charged = q.bt_calibration == "charged"
            return _SteppedChallengeBT(q.threshold, q.upper_threshold, q.epsilon_instance,
                                       q.delta_instance, q.max_hard, q.length + 1,
                                       stopper="svt", stopper_epsilon=q.stopper_epsilon,
                                       bt_calibration=q.bt_calibration,
                                       bt_noise_scale=q.bt_noise_scale if charged else None,
                                       random_state=seed)
        return _SteppedChallengeBT(q.threshold, 2.0 * q.threshold, q.epsilon_instance,
                                   q.delta_instance, q.max_hard, q.length + 1,
                                   random_state=seed)

    def _partition(self, n):
        """Part (0 … 2d−1) of each of n positives: independent fair dice (sharp presets)."""
        return self.rng.integers(2 * self.d, size=n)

    # -------------------------------------------------------------- phases
    def _new_copy(self, axis, side, coords, rng, q=None):
        seed = child_generator(rng)
        return _Copy(axis, side, coords, self._challenge_bt(q or self.q, seed))

    def _start_phase(self, positives):
        self.phase += 1
        self.q = self.parameters.phase(self.phase)
        self.step = 0
        self.stops_done = False
        self.positives = []
        if self.parameters.preset in SHARP_PRESETS:
            # The initial sample's copies run at δ(0) (see _perp_sharp); restarts and
            # later phases hold queries and use the phase's own parameters.
            first = self.phase == 1 and self.parameters.initial_copies
            self.copies = self._partition_copies(positives, first or self.q)
        else:
            self.copies = self._rsc_copies(positives)
        if self.verbose:
            print(f"[PERP] phase {self.phase}: t_p = {self.q.length}, slices "
                  f"{[c.values.size for c in self.copies]} from {positives.shape[0]} positives")

    def _partition_copies(self, positives, q):
        """Right_j / Left_j on the m largest / smallest j-th coordinates of their own part.

        Part 2j serves Right_j, part 2j + 1 Left_j (see :mod:`._perp_sharp`): one
        record reaches one copy, and changes its slice by at most one replacement.
        """
        part = self._partition(positives.shape[0])
        m = q.slice_size
        copies = []
        for j in range(self.d):
            right = _extremes(positives[part == 2 * j, j], RIGHT, m)
            left = _extremes(positives[part == 2 * j + 1, j], LEFT, m)
            copies += [self._new_copy(j, LEFT, left, self.rng, q),
                       self._new_copy(j, RIGHT, right, self.rng, q)]
        return copies

    def _rsc_copies(self, positives):
        rsc = self._rsc(positives, self.q)
        copies = []
        for j in range(self.d):
            # Alg. 5 step 3: Right_j on the ≈ m_p largest j-th coordinates, Left_j on the
            # ≈ m_p smallest of what remains; the walk visits Left_j before Right_j.
            right = rsc.compute(self.q.slice_size,
                                lambda s, rng, j=j: self._new_copy(j, RIGHT, s[:, j], rng),
                                key=lambda rows, j=j: rows[:, j])
            left = rsc.compute(self.q.slice_size,
                               lambda s, rng, j=j: self._new_copy(j, LEFT, s[:, j], rng),
                               key=lambda rows, j=j: -rows[:, j])
            copies += [left, right]
        return copies

    def _end_phase(self):
        data = (np.concatenate(self.positives) if self.positives
                else np.empty((0, self.d)))
        self._start_phase(data)

    def _reexecute(self, c):
        old = self.copies[c]
        coords = np.concatenate(old.pending) if old.pending else np.empty(0)
        if self.parameters.preset in SHARP_PRESETS:
            # The restart's thresholds are the phase's, sized for slices of m points: it
            # runs on the m "medium" queries nearest its side's boundary, not on all of
            # D_c (≈ k ≫ m), where a few mediums deep inside the target — noise, or an
            # adversary repeating them — would make the interior "medium" (issue 26:
            # blocks at 0.29–0.44 error at ε = 1000; 0.03 with this). Privacy: the
            # lemma in _perp_sharp, F1 with S = D_c.
            coords = _extremes(coords, old.side, self.q.slice_size)
        self.copies[c] = self._new_copy(old.axis, old.side, coords, self.rng)
        self.n_reexecutions += 1
        if self.verbose > 1:
            print(f"[PERP] phase {self.phase} step {self.step}: copy {c} halted, "
                  f"re-executed on {coords.size} points")

    # -------------------------------------------------------------- answering
    def answer(self, X):
        """The walk's code for each row of X, in order: what Alg. 5 step 5f saw.

        −1 (``LOW``): every copy answered "low" — the label is "inside"
        (``classes_[1]``); 0 (``HARD``) or +1 (``HIGH``): the first copy that did
        not answer "low" said "medium" or "high" — the label is "outside". The
        codes are the copies' own BetweenThresholds answers (see the estimators'
        ``predict_proba``).
        """
        n = X.shape[0]
        out = np.empty(n, dtype=np.int8)
        i = 0
        while i < n:
            if self.step == self.q.length:
                self._end_phase()
            size = min(n - i, self.q.length - self.step, self._chunk)
            done, halted = self._segment(X[i : i + size], out[i : i + size])
            i += done
            self.step += done
            self._chunk = _CHUNK_MIN if halted else min(2 * self._chunk, _CHUNK_MAX)
        return out

    def _segment(self, Xb, out):
        n = Xb.shape[0]
        active = np.ones(n, dtype=bool)
        walk = np.full(n, LOW, dtype=np.int8)
        taken = []
        for cp in self.copies:
            idx = np.flatnonzero(active)
            codes, noise = cp.mechanism.take_bt(cp.count(Xb[idx, cp.axis]))
            taken.append((idx, codes, noise))
            stop = codes != LOW
            walk[idx[stop]] = codes[stop]
            active[idx[stop]] = False
        first = 1 if self.stops_done else 0
        halt = n
        increments = []
        for cp, (idx, codes, _) in zip(self.copies, taken, strict=True):
            medium = np.zeros(n)
            medium[idx[codes == HARD]] = 1.0
            inc = np.concatenate(([cp.carry], medium[:-1]))[first:]
            increments.append((medium, inc))
            h = cp.mechanism.first_halt(inc)
            if h is not None:
                halt = min(halt, first + h)
        stop_until = n if halt == n else halt + 1  # stopping queries posed: steps < stop_until
        halted = [cp.mechanism.stop_steps(inc[: stop_until - first])
                  for cp, (_, inc) in zip(self.copies, increments, strict=True)]
        for cp, (idx, codes, noise), (medium, _) in zip(self.copies, taken, increments,
                                                        strict=True):
            n_kept = int(np.searchsorted(idx, halt))
            cp.mechanism.commit_bt(codes, noise, n_kept)
            med_steps = idx[:n_kept][codes[:n_kept] == HARD]
            if med_steps.size:
                cp.pending.append(Xb[med_steps, cp.axis])
            cp.carry = medium[n - 1] if halt == n else 0.0
        out[:halt] = walk[:halt]
        inside = walk[:halt] == LOW
        if inside.any():
            self.positives.append(Xb[:halt][inside])
        self.stops_done = halt < n
        for c, h in enumerate(halted):
            if h:
                self._reexecute(c)
        return halt, any(halted)
