"""Where the noise of a release comes from, and why no fitted object can replay it.

Threat: whoever holds a fitted estimator (its pickle, its attributes) and all rows but
one re-runs the release on both candidate data sets; if the object can regenerate the
release's noise (a generator whose state can be stepped back, or a key the noise was
derived from), the run that reproduces the published output names the data set, and
the guarantee is gone. So:

* A one-shot release (``fit`` of a batch learner) draws its noise from
  :func:`release_generator`: OS entropy, drawn at release time and never stored.
* A stream whose later events need noise (an online learner, ``partial_fit``) holds a
  :class:`StreamNoise`: event ``i``'s generator comes from a key that is *erased* once
  it is used (a puncturable PRF, Goldreich–Goldwasser–Micali tree over 64-bit event
  indices, SHA-256 as the length-doubling PRG): its keys derive the noise of events not
  yet run, never of one already drawn. A mid-stream object is still private running
  state and must not be published: its live mechanisms hold their noisy thresholds and
  counters, and the generators they draw from, in memory (one could be stepped back).
* A copy (``copy``, ``deepcopy``, pickle) of either kind of noise source carries no key
  and no generator state: it is re-keyed from OS entropy when it is recreated, so two
  copies never share future noise either. Generators handed to long-lived mechanisms are
  :class:`EphemeralGenerator` for that reason: a pickle of a mid-stream learner holds
  no state any generator could be stepped back from.

Testing mode: a ``random_state`` seed (see :func:`skdp._validation.check_random_state_mode`)
makes all of this reproducible from the seed (copies then keep their keys), which is
exactly why it is a documented testing mode and not a way to publish.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["EphemeralGenerator", "StreamNoise", "as_stream_noise", "child_generator",
           "release_generator"]

_DEPTH = 64  # event indices are 64-bit
_KEY_BYTES = 32


class EphemeralGenerator(np.random.Generator):
    """A numpy Generator whose copies and pickles are *fresh* generators (OS entropy).

    Its state never leaves the process: a pickle holds no bit-generator state to step
    back, and a copy draws independent noise rather than repeating this one's.
    """

    def __reduce__(self) -> tuple[Any, tuple[()]]:  # type: ignore[override]
        return (release_generator, ())

    def __copy__(self) -> EphemeralGenerator:
        return release_generator()

    def __deepcopy__(self, memo: dict[int, Any]) -> EphemeralGenerator:
        return release_generator()


def _observe(kind: str, index: int, material: object) -> None:
    """No-op; tests patch it to record every key a release's noise came from."""


def release_generator() -> EphemeralGenerator:
    """A generator seeded from OS entropy now; nothing that could recreate it is kept."""
    seed = np.random.SeedSequence()
    _observe("release", 0, seed.entropy)
    return EphemeralGenerator(np.random.PCG64(seed))


def child_generator(parent: np.random.Generator, seed: int | None = None) -> np.random.Generator:
    """A generator seeded by one draw of ``parent`` (or by ``seed``), of the same kind:
    the child of an :class:`EphemeralGenerator` is ephemeral too (a long-lived
    mechanism holding it keeps nothing a pickle could step back)."""
    bits = np.random.PCG64(int(parent.integers(2**63)) if seed is None else int(seed))
    return (EphemeralGenerator if isinstance(parent, EphemeralGenerator)
            else np.random.Generator)(bits)


def _children(node: bytes) -> tuple[bytes, bytes]:
    # SHA-256 with a one-byte domain separator as the GGM length-doubling PRG.
    return (hashlib.sha256(node + b"\x00").digest(), hashlib.sha256(node + b"\x01").digest())


def _leaf_key(index: int, leaf: bytes) -> NDArray[np.uint64]:
    _observe("event", index, leaf)
    return np.frombuffer(hashlib.sha256(leaf + b"noise").digest()[:16], dtype=np.uint64).copy()


def _rekey(generator: np.random.Generator, key: NDArray[np.uint64]) -> np.random.Generator:
    # Setting a Philox state costs a few µs; building a new bit generator, ~20.
    generator.bit_generator.state = {
        "bit_generator": "Philox",
        "state": {"counter": np.zeros(4, dtype=np.uint64), "key": key},
        "buffer": np.zeros(4, dtype=np.uint64), "buffer_pos": 4,
        "has_uint32": 0, "uinteger": 0,
    }
    return generator


class StreamNoise:
    """Forward-secure noise keys of one stream: event ``i``'s generator, once.

    The keys form a GGM tree over 64-bit indices; the object holds only the minimal set
    of subtree roots covering the events not yet run. :meth:`generator` ``(i)`` walks
    down from the root covering ``i``, keeps the siblings of its path and erases the
    rest, so event ``i`` (and any other event already run) can never be derived again.
    Sequential indices cost O(1) hashes each (the next index is a stored sibling).

    Parameters
    ----------
    root : bytes
        32 bytes of key.
    reproducible : bool
        False (OS entropy): copies and pickles are re-keyed from OS entropy and the
        generators are :class:`EphemeralGenerator`. True (testing mode, seeded): copies
        keep the keys, so a seeded run is reproducible — and replayable.
    """

    __slots__ = ("_cover", "_slots", "reproducible")

    def __init__(self, root: bytes, reproducible: bool = False) -> None:
        if len(root) != _KEY_BYTES:
            raise ValueError(f"StreamNoise needs a {_KEY_BYTES}-byte root key.")
        self._cover: dict[tuple[int, int], bytes] = {(0, 0): bytes(root)}
        self._slots: dict[int, np.random.Generator] = {}
        self.reproducible = bool(reproducible)

    @classmethod
    def fresh(cls) -> StreamNoise:
        """Keys from OS entropy (the default, unseeded mode)."""
        return cls(os.urandom(_KEY_BYTES))

    @classmethod
    def from_seed(cls, seed: int | np.random.Generator) -> StreamNoise:
        """Reproducible keys from a seed or a generator (testing mode)."""
        gen = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        return cls(gen.bytes(_KEY_BYTES), reproducible=True)

    def generator(self, index: int, slot: int | None = None) -> np.random.Generator:
        """The generator of event ``index``; its key is erased, so this works once.

        ``slot``: re-key and return the generator last handed out for this slot (a
        hot path's saving: a few µs instead of ~20 for a new bit generator). Only for a
        caller that is done with the slot's previous event — a learner whose one live
        mechanism of a kind is replaced at each event; it then holds only the current
        event's key, as a new generator would.
        """
        index = int(index)
        if not 0 <= index < 1 << _DEPTH:
            raise ValueError(f"event index must lie in [0, 2**{_DEPTH}), got {index}.")
        cover = self._cover
        for depth in range(_DEPTH, -1, -1):
            prefix = index >> (_DEPTH - depth)
            node = cover.pop((depth, prefix), None)
            if node is not None:
                break
        else:
            # Not a bug to work around: the noise of an event that already ran is gone
            # on purpose (forward security). A caller asking twice has a logic error.
            raise RuntimeError(f"the noise of stream event {index} was already used.")
        for level in range(depth + 1, _DEPTH + 1):
            bit = (index >> (_DEPTH - level)) & 1
            pair = _children(node)
            cover[(level, (index >> (_DEPTH - level)) ^ 1)] = pair[1 - bit]
            node = pair[bit]
        key = _leaf_key(index, node)
        if slot is not None and slot in self._slots:
            return _rekey(self._slots[slot], key)
        bits = np.random.Philox(key=key)
        gen = np.random.Generator(bits) if self.reproducible else EphemeralGenerator(bits)
        if slot is not None:
            self._slots[slot] = gen
        return gen

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        if self.reproducible:
            return (_restore, (dict(self._cover),))
        # No key leaves the process: the copy continues with fresh keys (its future
        # noise is independent of this object's, and neither can replay the past).
        return (StreamNoise.fresh, ())

    def __copy__(self) -> StreamNoise:
        return _restore(dict(self._cover)) if self.reproducible else StreamNoise.fresh()

    def __deepcopy__(self, memo: dict[int, Any]) -> StreamNoise:
        return self.__copy__()


def _restore(cover: dict[tuple[int, int], bytes]) -> StreamNoise:
    noise = StreamNoise(bytes(_KEY_BYTES), reproducible=True)
    noise._cover = cover
    return noise


def as_stream_noise(noise: StreamNoise | int) -> StreamNoise:
    """``noise`` itself, or reproducible keys seeded by an int (tests, testing mode)."""
    return noise if isinstance(noise, StreamNoise) else StreamNoise.from_seed(int(noise))
