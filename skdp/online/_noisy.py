"""Label noise for the agnostic setting: a wrapper around any adversary."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import RandomStateLike, check_generator

if TYPE_CHECKING:
    from typing_extensions import Self

    from ._adversaries import Probe

__all__ = ["NoisyLabels"]


class NoisyLabels:
    """Flip each label of an adversary's stream independently with probability ``rate``.

    Turns the realizable adversaries of :mod:`skdp.online` (oblivious or adaptive) into
    agnostic ones: the wrapped adversary picks (x_t, y_t) as usual — it is shown its own
    clean labels in ``observe`` so that its strategy is unchanged — and the learner gets
    −y_t with probability ``rate``. The noisy stream is recorded (``history()``), so the
    best hypothesis in hindsight can be computed afterwards.

    Parameters
    ----------
    adversary : adversary
        Anything :func:`~skdp.online.run_online` accepts.
    rate : float in [0, 1/2]
        Flip probability.

    Examples
    --------
    >>> import numpy as np
    >>> from skdp.hypotheses import threshold_class
    >>> from skdp.online import NoisyLabels, ObliviousAdversary
    >>> adv = NoisyLabels(ObliviousAdversary(threshold_class(8), target=4), 0.2)
    >>> x, y = adv.reset(np.random.default_rng(0)).stream(1000)
    >>> bool(0.15 < np.mean(y != np.where(x >= 4, 1, -1)) < 0.25)
    True
    """

    def __init__(self, adversary: Any, rate: float) -> None:
        rate_f = float(rate) if not isinstance(rate, bool) else np.nan
        if not 0.0 <= rate_f <= 0.5:
            raise ValueError(f"rate must lie in [0, 1/2], got {rate!r}.")
        self.adversary = adversary
        self.rate = rate_f
        self.oblivious = adversary.oblivious
        self.n_domain = adversary.n_domain
        self.reset(None)

    def reset(self, rng: RandomStateLike) -> Self:
        """Start a game: reset the wrapped adversary, fresh label noise, empty history."""
        gen = check_generator(rng)
        inner, noise = gen.spawn(2)
        self.adversary.reset(inner)
        self._rng = noise
        self._x: list[NDArray[Any]] = []
        self._y: list[NDArray[np.int8]] = []
        self._clean: int | None = None
        return self

    def _flip(self, y: ArrayLike) -> NDArray[np.int8]:
        y = np.asarray(y, dtype=np.int8)
        flip = self._rng.random(y.shape) < self.rate
        return np.where(flip, -y, y).astype(np.int8)

    def stream(self, n_rounds: int) -> tuple[NDArray[np.intp], NDArray[np.int8]]:
        """Oblivious streams: the wrapped stream with flipped labels."""
        x, y = self.adversary.stream(n_rounds)
        y = self._flip(y)
        self._x.append(np.asarray(x))
        self._y.append(y)
        return x, y

    def next_round(self, probe: Probe | None = None) -> tuple[int, int]:
        """The wrapped adversary's next example, its label flipped with probability ``rate``."""
        x, y = self.adversary.next_round(probe)
        self._clean = int(y)
        noisy = int(self._flip(y))
        self._x.append(np.array([x]))
        self._y.append(np.array([noisy], dtype=np.int8))
        return x, noisy

    def observe(self, x: int, y: int, y_hat: int) -> None:
        """Show the wrapped adversary its own clean label (``y`` is the noisy one)."""
        self.adversary.observe(x, self._clean, y_hat)

    def history(self) -> tuple[NDArray[np.intp], NDArray[np.int8]]:
        """``(x, y)`` of every round played since ``reset``, noisy labels."""
        if not self._x:
            return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.int8)
        return (np.concatenate(self._x).astype(np.intp),
                np.concatenate(self._y).astype(np.int8))
