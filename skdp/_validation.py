"""Parameter validation and random-number plumbing shared by every skdp module.

Nothing here imports scikit-learn, so :mod:`skdp.mechanisms` and
:mod:`skdp.accounting` can use it while staying sklearn-free.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .exceptions import PrivacyParameterError

#: What ``random_state`` parameters accept (see :func:`check_generator`).
RandomStateLike = (int | np.integer | np.random.Generator | np.random.RandomState
                   | np.random.SeedSequence | None)

__all__ = [
    "RANDOM_STATE_CONSTRAINT",
    "RandomStateLike",
    "TestingSeed",
    "as_float_array",
    "check_delta",
    "check_epsilon",
    "check_finite_array",
    "check_generator",
    "check_positive_int",
    "check_public_bounds",
    "check_random_state_mode",
    "check_sensitivity",
    "clip_to_unit",
    "fork_random_state",
    "private_data_error",
    "seeded_generator",
    "seeded_warning",
]


def _as_real(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise PrivacyParameterError(
            f"{name} must be a real number, got {value!r} of type {type(value).__name__}."
        )
    return float(value)


def check_epsilon(epsilon: object, name: str = "epsilon", allow_zero: bool = False) -> float:
    """Return ``epsilon`` as a float after checking 0 < ε < ∞ (or 0 ≤ ε if allowed)."""
    eps = _as_real(epsilon, name)
    if not math.isfinite(eps) or eps < 0 or (eps == 0 and not allow_zero):
        bound = "≥ 0" if allow_zero else "> 0"
        raise PrivacyParameterError(
            f"{name} must be finite and {bound}, got {epsilon!r}. "
            "ε is the privacy-loss bound: smaller means more private; ε = 0 or ∞ "
            "cannot be achieved by a useful mechanism."
        )
    return eps


def check_delta(delta: object, name: str = "delta") -> float:
    """Return ``delta`` as a float after checking 0 ≤ δ < 1."""
    d = _as_real(delta, name)
    if not (0.0 <= d < 1.0):
        raise PrivacyParameterError(
            f"{name} must lie in [0, 1), got {delta!r}. δ is the probability with which "
            "the ε guarantee may fail; it should be far below 1/(number of records)."
        )
    return d


def check_sensitivity(sensitivity: object, name: str = "sensitivity") -> float:
    """Return ``sensitivity`` as a float after checking 0 < Δ < ∞."""
    s = _as_real(sensitivity, name)
    if not math.isfinite(s) or s <= 0:
        raise PrivacyParameterError(
            f"{name} must be finite and > 0, got {sensitivity!r}: it bounds how much one "
            "record can change the value, and the noise scale is proportional to it."
        )
    return s


def check_positive_int(value: object, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is an integer ≥ ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be ≥ {minimum}, got {value}.")
    return int(value)


def check_finite_array(values: ArrayLike, name: str = "values", allow_empty: bool = False,
                       ndim: int | None = None) -> NDArray[np.float64]:
    """Return ``values`` as a float ndarray, refusing NaN/inf and (by default) empty input."""
    arr = as_float_array(values, name)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}.")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty: there is nothing to choose from or release.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"{name} contains NaN or infinite entries; a mechanism's input must be finite "
            "(an infinite score or query value would break its privacy guarantee)."
        )
    return arr


def as_float_array(values: ArrayLike, name: str = "values") -> NDArray[np.float64]:
    """``np.asarray(values, dtype=float)``, refusing non-numbers without printing them.

    numpy's conversion error quotes the offending entry ("could not convert string to
    float: 'alice@example.com'"); the ValueError raised instead names only ``name`` and
    the container's type, and is raised outside the ``except`` block, so numpy's message
    is neither its ``__cause__`` nor its ``__context__``.
    """
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError, OverflowError):
        pass
    raise ValueError(f"{name} must hold real numbers, got a {type(values).__name__} that "
                     "does not (its entries are not shown: they may be private data).")


def private_data_error(name: str, rule: str, column: int | None = None,
                       hint: str = "") -> ValueError:
    """A ``ValueError`` for input data that breaks ``rule``: names the column, never a value.

    Messages end up in logs; a value, a min/max or a count of offending rows computed
    from private X or y would leak it. Say which column and which bound or rule failed.
    """
    where = "X" if column is None else f"feature {int(column)}"
    msg = (f"{name}: {where} breaks the rule '{rule}' (the offending values are private "
           "data and are not shown).")
    return ValueError(f"{msg} {hint}" if hint else msg)


def check_public_bounds(lower: ArrayLike, upper: ArrayLike, n_features: int,
                        name: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(lower, upper)`` as float arrays of shape (n_features,), from scalars or one value
    per feature; a ValueError starting with ``name`` unless both are finite with
    lower < upper everywhere. Bounds are public parameters, so the messages show them."""

    def per_feature(value: ArrayLike, side: str) -> NDArray[np.float64]:
        arr = np.asarray(value, dtype=float)
        if arr.ndim == 0:
            arr = np.full(n_features, float(arr))
        if arr.shape != (n_features,):
            raise ValueError(f"{name}: {side} must be a scalar or have one entry per feature "
                             f"({n_features}), got shape {arr.shape}.")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name}: {side} must be finite, got {value!r}.")
        return arr

    lower, upper = per_feature(lower, "lower"), per_feature(upper, "upper")
    if np.any(lower >= upper):
        bad = int(np.argmax(lower >= upper))
        raise ValueError(f"{name}: lower must be < upper for every feature; feature {bad} "
                         f"has [{lower[bad]}, {upper[bad]}].")
    return lower, upper


def clip_to_unit(X: ArrayLike, lower: NDArray[np.float64],
                 upper: NDArray[np.float64]) -> NDArray[np.float64]:
    """Clip X to the public [lower, upper] per column and map that range onto [−1, 1].

    Written as 2·(x − lo)/(hi − lo) − 1: under rounding x − lo ≤ hi − lo still holds, so
    every output stays inside [−1, 1] (learners' privacy proofs assume |x_j| ≤ 1).
    """
    X = np.clip(X, lower, upper)
    return 2.0 * (X - lower) / (upper - lower) - 1.0


def check_generator(random_state: RandomStateLike) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    ``None`` gives fresh OS entropy, an int seeds a new PCG64 generator, a
    ``Generator`` is used as is (and so advanced by the caller's draws), and a legacy
    ``RandomState`` seeds a new generator from one draw of its stream, so sklearn
    code that passes a ``RandomState`` stays reproducible.
    """
    if random_state is None or isinstance(random_state, (numbers.Integral, np.integer)):
        if isinstance(random_state, bool):
            raise ValueError("random_state must be None, an int or a numpy Generator, not a bool.")
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    raise ValueError(
        "random_state must be None, an int, a numpy Generator or RandomState, "
        f"got {random_state!r}."
    )


class TestingSeed:
    """Opt-in, by name, to reproducible noise *for testing* when a ``budget`` is given.

    ``random_state=skdp.TestingSeed(0)`` (or a wrapped Generator, RandomState or
    SeedSequence). A seeded estimator's noise is reproducible from its own
    ``get_params()``: whoever holds the released model (or just its parameters) and all
    rows but one can re-run the release on both candidate data sets and see which
    reproduces it — the guarantee is void. skdp therefore treats any seed as a testing
    mode that warns (:class:`~skdp.exceptions.PrivacyWarning`) wherever it is used, and
    refuses a bare seed together with a ``budget`` (the ledger is where real privacy is
    accounted) unless it is wrapped in this class. Never publish a model fitted so.

    Parameters
    ----------
    seed : int, numpy Generator, RandomState or SeedSequence
    """

    __slots__ = ("seed",)
    seed: Any  # an int, numpy Generator, RandomState or SeedSequence (checked in __init__)

    def __init__(self, seed: int | np.integer | np.random.Generator | np.random.RandomState
                 | np.random.SeedSequence | TestingSeed) -> None:
        if isinstance(seed, TestingSeed):
            seed = cast(Any, seed).seed
        if seed is None or isinstance(seed, bool) or not isinstance(
                seed, (numbers.Integral, np.random.Generator, np.random.RandomState,
                       np.random.SeedSequence)):
            raise ValueError("TestingSeed needs an int, a numpy Generator, RandomState or "
                             f"SeedSequence, got {type(seed).__name__}.")
        self.seed = seed

    def __repr__(self) -> str:
        return f"TestingSeed({self.seed!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TestingSeed) and (
            self.seed is other.seed or (isinstance(self.seed, numbers.Integral)
                                        and isinstance(other.seed, numbers.Integral)
                                        and int(self.seed) == int(other.seed)))

    def __hash__(self) -> int:
        return hash(("TestingSeed", int(self.seed) if isinstance(self.seed, numbers.Integral)
                     else id(self.seed)))


#: ``_parameter_constraints["random_state"]`` of every private estimator.
RANDOM_STATE_CONSTRAINT: tuple = ("random_state", np.random.Generator, np.random.SeedSequence,
                                  TestingSeed)


def check_random_state_mode(random_state: object, has_budget: bool, owner: str) -> bool:
    """Whether ``random_state`` puts the estimator in seeded testing mode.

    ``None`` (the default: OS entropy drawn at each release, never stored) returns
    False. A seed returns True; with ``has_budget`` a bare seed raises
    :class:`~skdp.exceptions.PrivacyParameterError` — only :class:`TestingSeed` opts in.
    """
    if random_state is None:
        return False
    if isinstance(random_state, TestingSeed):
        return True
    if isinstance(random_state, bool) or not isinstance(
            random_state, (numbers.Integral, np.random.Generator, np.random.RandomState,
                           np.random.SeedSequence)):
        raise ValueError("random_state must be None, an int, a numpy Generator, RandomState, "
                         f"SeedSequence or skdp.TestingSeed, got {type(random_state).__name__}.")
    if has_budget:
        raise PrivacyParameterError(
            f"{owner}: a fixed random_state together with a budget is refused: the noise "
            "of every release would be reproducible from the model's own get_params(), so "
            "anyone holding it could replay the release and void the privacy the budget "
            "accounts for. Use random_state=None (noise from OS entropy, never stored), or, "
            "for a test, opt in by name: random_state=skdp.TestingSeed(seed)."
        )
    return True


def seeded_warning(owner: str) -> str:
    """The :class:`~skdp.exceptions.PrivacyWarning` text of seeded testing mode."""
    return (f"{owner}: random_state is set, so the noise is reproducible from the model's "
            "own get_params(): whoever holds the model and all rows but one can replay the "
            "release and learn the last row. This is a testing mode; fit with "
            "random_state=None to publish a model.")


def seeded_generator(random_state: object, key: int | None = None,
                     index: int = 0) -> np.random.Generator:
    """The generator of release ``index`` (charged as ledger ``key``) in testing mode.

    An int or SeedSequence gives the same noise each time (reproducible: the point of
    the mode); a Generator or RandomState is drawn from, so successive releases (and
    clones, see :func:`fork_random_state`) differ. ``key`` — the release's charge
    ``seq`` in a budget's ledger — keeps two releases charged to one ledger from sharing
    noise, whatever the seed.
    """
    seed = random_state.seed if isinstance(random_state, TestingSeed) else random_state
    if key is None and index == 0 and isinstance(seed, (numbers.Integral, np.random.SeedSequence)):
        # as sklearn users expect from a seed
        return np.random.default_rng(int(seed) if isinstance(seed, numbers.Integral) else seed)
    if isinstance(seed, numbers.Integral):
        base = [int(seed)]
    elif isinstance(seed, np.random.SeedSequence):
        base = [int(w) for w in seed.generate_state(4)]
    elif isinstance(seed, np.random.Generator):
        base = [int(w) for w in seed.integers(2**63, size=2)]
    else:
        base = [int(w) for w in cast(np.random.RandomState, seed).randint(2**31, size=4)]
    # Without a budget the key is 0, so a fresh ledger (first charge: seq 0) reproduces
    # an unbudgeted run; releases charged to one ledger have distinct keys.
    return np.random.default_rng([*base, 0 if key is None else int(key), int(index)])


def fork_random_state(random_state: object) -> object:
    """What a clone gets as ``random_state``: an independent child of a Generator or
    RandomState (drawn from the original, so successive clones differ), else the same.

    ``clone`` deep-copies parameters, and a deep-copied Generator repeats the original's
    draws: the folds of a search would all share one noise.
    """
    wrapped = isinstance(random_state, TestingSeed)
    seed = cast(TestingSeed, random_state).seed if wrapped else random_state
    if isinstance(seed, np.random.Generator):
        child: object = np.random.default_rng(seed.integers(2**63, size=4))
    elif isinstance(seed, np.random.RandomState):
        child = np.random.RandomState(seed.randint(2**31))
    else:
        return random_state
    return TestingSeed(child) if wrapped else child  # type: ignore[arg-type]
