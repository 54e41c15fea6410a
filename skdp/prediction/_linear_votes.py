"""Exact vote counts of many linear teachers, pruned around a reference direction.

Yan's predictor and subsample-and-aggregate ask, for every query x, how many of k
linear teachers vote +1: #{i : ⟨θ_i, z⟩ ≥ 0}, z = (x, 1). A plain matrix product
costs k·(d + 1) per query (3 387 teachers: ~60 µs per query in numpy). But the
teachers of a trained predictor are nearly parallel — the hard queries' constraints
and the shared distribution push them to the same hyperplane — and a teacher whose
direction is close to a reference direction votes like the reference on every query
far from the reference's boundary. :class:`LinearVotes` evaluates exactly only the
teachers that the bound below cannot decide.

*Lemma V (the pruned count is the teacher-wise count).* Let u_i = θ_i/|θ_i| (θ_i ≠ 0),
ρ a unit vector, σ_i = ±1 the side of ρ that u_i is on (σ_i = +1 iff ⟨u_i, ρ⟩ ≥ 0),
r_i = |u_i − σ_i·ρ| and s = ⟨ρ, z⟩. If r_i + η < |s|/|z| (η = 10⁻⁹, far above the
floating-point error of every quantity involved), then sign⟨θ_i, z⟩ = σ_i·sign(s) ≠ 0.
*Proof.* ⟨u_i, z⟩ = σ_i·s + ⟨u_i − σ_i·ρ, z⟩ and |⟨u_i − σ_i·ρ, z⟩| ≤ r_i·|z| <
|s| − η|z| (Cauchy–Schwarz), so ⟨u_i, z⟩ has the sign of σ_i·s and |⟨u_i, z⟩| > η|z|,
hence ⟨θ_i, z⟩ = |θ_i|·⟨u_i, z⟩ has it too, with a margin far beyond rounding. ∎

ρ is the principal axis of the u_i (top right singular vector), so teachers on one
line with either orientation — Yan's halfspace mode after d hard queries — are all
close to ±ρ.

So the count is Σ_i v_i(z), where each teacher's vote v_i(z) = 1[⟨θ_i, z⟩ ≥ 0] is
either decided by the lemma or computed from θ_i and z alone (the same elementwise
floating-point sum for every teacher, whatever the batch): a function of teacher i
and the query only. One changed training row changes one teacher, so the count
still has sensitivity 1 — the privacy arguments of the predictors are untouched;
ρ and the order of evaluation depend on all teachers but change no vote. Teachers
with θ_i = 0 vote +1 on every query (0 ≥ 0) and are a constant offset, like the
constant teachers of one-class blocks.
"""

import numpy as np

__all__ = ["LinearVotes"]

_MARGIN = 1e-9
_CELLS = 1 << 21  # (query, teacher) pairs evaluated per elementwise pass


class LinearVotes:
    """Counts of teachers voting +1 for linear teachers plus constant ones.

    Parameters
    ----------
    theta : ndarray of shape (k_linear, d + 1)
        Teacher i votes +1 on x iff ⟨θ_i, (x, 1)⟩ ≥ 0 (``strict=False``) or > 0
        (``strict=True``, scikit-learn's ``decision_function > 0``).
    n_constant_positive : int
        Further teachers that vote +1 on every query.
    n_teachers : int
        k, all teachers (linear, constant +1, constant −1).
    strict : bool, default=False
    """

    def __init__(self, theta, n_constant_positive, n_teachers, strict=False):
        theta = np.asarray(theta, dtype=float)
        self.n_teachers = int(n_teachers)
        self.strict = bool(strict)
        # A strict teacher votes +1 iff not ⟨−θ, z⟩ ≥ 0: count the non-strict −θ.
        theta = -theta if self.strict else theta
        self.n_linear = theta.shape[0]
        norms = np.linalg.norm(theta, axis=1)
        zero = norms == 0
        self.n_zero = int(np.count_nonzero(zero))
        theta, norms = theta[~zero], norms[~zero]
        self.offset = int(n_constant_positive)
        units = theta / norms[:, None] if theta.size else theta
        ref = np.zeros(theta.shape[1])
        if units.shape[0]:
            ref = np.linalg.svd(units, full_matrices=False)[2][0]
        self.ref = ref
        side = np.where(units @ ref >= 0, 1, -1)
        radius = np.linalg.norm(units - side[:, None] * ref, axis=1)
        order = np.argsort(-radius, kind="stable")
        self.theta = np.ascontiguousarray(theta[order])
        self._radius_ascending = radius[order][::-1].copy()
        # Decided teachers from position m on: how many sit on each side of ρ.
        plus = side[order] > 0
        self._plus_from = np.r_[np.cumsum(plus[::-1])[::-1], 0]
        self._minus_from = np.r_[np.cumsum(~plus[::-1])[::-1], 0]

    def _nonnegative(self, Z):
        """#{i : ⟨θ_i, z⟩ ≥ 0} over the non-zero linear teachers, per row of Z."""
        k = self.theta.shape[0]
        out = np.zeros(Z.shape[0], dtype=np.int64)
        if k == 0:
            return out
        s = Z @ self.ref
        scaled = np.abs(s) / np.linalg.norm(Z, axis=1)
        # Teachers that the lemma cannot decide: r_i ≥ |s|/|z| − η (a prefix, r descending).
        undecided = k - np.searchsorted(self._radius_ascending, scaled - _MARGIN, side="left")
        bucket = np.minimum(k, 1 << np.ceil(np.log2(np.maximum(undecided, 1))).astype(np.int64))
        bucket = np.where(undecided == 0, 0, bucket)
        # Decided teachers vote σ_i·sign(s): the ρ side when s > 0, the −ρ side when s < 0.
        out += np.where(s > 0, self._plus_from[bucket], self._minus_from[bucket])
        for m in np.unique(bucket):
            if m == 0:
                continue
            rows = np.flatnonzero(bucket == m)
            step = max(1, _CELLS // int(m))
            head = self.theta[:m]
            for start in range(0, rows.size, step):
                idx = rows[start : start + step]
                Zc = Z[idx]
                score = Zc[:, :1] * head[:, 0]
                for j in range(1, Z.shape[1]):
                    score += Zc[:, j : j + 1] * head[:, j]
                out[idx] += np.count_nonzero(score >= 0, axis=1)
        return out

    def counts(self, X):
        """Number of teachers voting +1 on each row of X (exact; see Lemma V)."""
        X = np.asarray(X, dtype=float)
        Z = np.concatenate([X, np.ones((X.shape[0], 1))], axis=1)
        nonneg = self._nonnegative(Z) + self.n_zero
        positive = self.n_linear - nonneg if self.strict else nonneg
        return positive + self.offset

    def vote(self, X):
        """Fraction of all ``n_teachers`` voting +1 on each row of X."""
        return self.counts(X) / self.n_teachers
