"""The running state of a continual release: a public call schedule and the rows of
the block being collected.

One object serves every learner that turns batch releases into a stream
(:class:`~skdp.streams.ContinualReleaseClassifier`, the decision list's
``partial_fit``): it counts calls, buffers each call's arrays until the call that ends
the block, then hands all of them over once and forgets them. The schedule is a
function of the call count (and of the caller's restarts, which it decides from
released outputs only), so which rows a release sees is fixed given the calls and
the past outputs; the privacy argument (disjoint blocks, parallel composition) is the caller's
and is written in :class:`~skdp.streams.ContinualReleaseClassifier`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["ReleaseBlocks", "block_length", "release_schedule"]


def block_length(schedule: str, block: int, max_block: int | None, index: int) -> int:
    """Length in calls of block ``index`` (0-based): b·2^index for ``"doubling"``
    (at most ``max_block``), b for ``"fixed"``."""
    if schedule == "fixed":
        return int(block)
    length = int(block) << min(int(index), 62)
    return length if max_block is None else min(length, max(int(max_block), int(block)))


def release_schedule(schedule: str, block: int, n_calls: int,
                     max_block: int | None = None) -> list[int]:
    """The calls (1-based) at whose end a model is released, up to ``n_calls``.

    ``"doubling"``: blocks of b, 2b, 4b, … calls (releases at b, 3b, 7b, …), each at
    most ``max_block`` calls; ``"fixed"``: blocks of b calls (releases at b, 2b, 3b,
    …). Public: a function of the call count only.

    Examples
    --------
    >>> release_schedule("doubling", 1, 20)
    [1, 3, 7, 15]
    >>> release_schedule("doubling", 1, 20, max_block=4)
    [1, 3, 7, 11, 15, 19]
    >>> release_schedule("fixed", 5, 20)
    [5, 10, 15, 20]
    """
    ends, end, index = [], 0, 0
    while end + block_length(schedule, block, max_block, index) <= n_calls:
        end += block_length(schedule, block, max_block, index)
        ends.append(end)
        index += 1
    return ends


def _stack(parts: tuple[Any, ...]) -> Any:
    """One array from a block's per-call parts (CSR if the parts are sparse)."""
    if sp.issparse(parts[0]):
        return sp.vstack(parts, format="csr")
    return np.concatenate(parts)


class ReleaseBlocks:
    """Calls of one stream grouped into blocks on a public schedule, with the arrays
    of the current block.

    Parameters
    ----------
    schedule, block, max_block
        As in :func:`block_length`.

    Attributes
    ----------
    n_calls : int
        Calls of the stream so far.
    n_releases : int
        Blocks handed over (:meth:`take`).
    block_calls : list of int
        The length in calls of each handed-over block.

    Notes
    -----
    The buffer holds raw rows until their block ends: an object holding a
    ``ReleaseBlocks`` is private state while a block is open.
    """

    def __init__(self, schedule: str = "doubling", block: int = 1,
                 max_block: int | None = None) -> None:
        self.schedule, self.block, self.max_block = schedule, int(block), max_block
        self.n_calls = 0
        self.n_releases = 0
        self.block_calls: list[int] = []
        self._start = 0  # calls before the current block
        self._first = 0  # the block that (re)started the schedule
        self._parts: list[tuple[Any, ...]] = []

    @property
    def next_release(self) -> int:
        """The call at whose end the current block ends."""
        return self._start + self.planned_length

    @property
    def planned_length(self) -> int:
        """The current block's length in calls on the schedule."""
        return block_length(self.schedule, self.block, self.max_block,
                            self.n_releases - self._first)

    @property
    def n_buffered(self) -> int:
        """Calls of the current block so far."""
        return len(self._parts)

    def restart(self) -> None:
        """Start the schedule again (blocks b, 2b, … from the next one), after the
        current block has been closed; the caller decides when, from public or
        released information only."""
        if self._parts:
            raise RuntimeError("ReleaseBlocks.restart: close the current block first.")
        self._first = self.n_releases

    def add(self, *arrays: Any, end_block: bool = False) -> bool:
        """Count one call and buffer its arrays; True if the call ends its block (on
        the schedule, or ``end_block``): then release from :meth:`rows` and
        :meth:`close` the block, or :meth:`undo` the call if the release failed."""
        self.n_calls += 1
        self._parts.append(arrays)
        return end_block or self.n_calls == self.next_release

    def undo(self) -> None:
        """Forget the last :meth:`add` (its release failed): the schedule stays the
        public function of the calls that went through."""
        self._parts.pop()
        self.n_calls -= 1

    def rows(self) -> tuple[Any, ...]:
        """Every buffered array stacked over the block's calls (one per position given
        to :meth:`add`)."""
        return tuple(_stack(parts) for parts in zip(*self._parts, strict=True))

    def close(self) -> None:
        """End the block after its release: record its length and drop its rows."""
        self.block_calls.append(self.n_calls - self._start)
        self._start = self.n_calls
        self.n_releases += 1
        self._parts = []

    def released_call(self) -> None:
        """Count one call that ended its block and was released from its own rows by
        the caller (a stream's first call through ``fit``): no rows are kept."""
        self.add()
        self.close()
