"""Fork detection and per-event randomness for private online streams.

A fitted private online learner holds private state that continues its release; two
copies of it continued separately would release two continuations of one private state
(twice the privacy loss). :class:`_StreamLedger` is shared by every copy of one stream so
that the second continuation is refused. :func:`keyed_generator` gives each
data-dependent event of a stream its own counter-based generator, so the noise a
mechanism sees does not depend on how the stream was cut into ``partial_fit`` blocks.
"""

import uuid
import weakref

import numpy as np

__all__ = ["keyed_generator"]

_LIVE_STREAMS = weakref.WeakValueDictionary()


class _StreamLedger:
    """Shared by every copy of one fitted stream, to detect forks.

    ``copy``/``deepcopy`` return the same object and unpickling in a process where
    the stream is alive re-attaches to it (as :class:`~skdp.PrivacyBudget` does), so
    all copies see one block counter. A copy whose own block count lags behind it
    was continued elsewhere: continuing it too would release a second continuation
    of the same private state, so it is refused. (Across processes the counter
    cannot be shared: a copy unpickled elsewhere only knows its own past.)
    """

    def __init__(self, stream_id=None, blocks=0):
        self.id = stream_id or uuid.uuid4().hex
        self.blocks = blocks
        _LIVE_STREAMS[self.id] = self

    def advance(self):
        self.blocks += 1

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_attach_stream, (self.id, self.blocks))


def _attach_stream(stream_id, blocks):
    live = _LIVE_STREAMS.get(stream_id)
    if live is None:
        return _StreamLedger(stream_id, blocks)
    live.blocks = max(live.blocks, blocks)
    return live


def keyed_generator(entropy, index, generator=None):
    """A Philox generator keyed by (entropy, index), reusing ``generator`` if given.

    Each (stream seed, event index) pair gets its own counter-based stream; re-keying an
    existing generator costs microseconds, unlike a new ``SeedSequence``.

    Parameters
    ----------
    entropy : int in [0, 2**64)
        The stream's seed, drawn once from ``random_state`` at stream start.
    index : int in [0, 2**64)
        The event (e.g. update or switch number, times the number of roles, plus role).
    generator : numpy.random.Generator over Philox, optional
        Re-keyed in place and returned.

    Returns
    -------
    numpy.random.Generator
    """
    key = np.array([entropy, index], dtype=np.uint64)
    if generator is None:
        return np.random.Generator(np.random.Philox(key=key))
    generator.bit_generator.state = {
        "bit_generator": "Philox",
        "state": {"counter": np.zeros(4, dtype=np.uint64), "key": key},
        "buffer": np.zeros(4, dtype=np.uint64), "buffer_pos": 4,
        "has_uint32": 0, "uinteger": 0,
    }
    return generator
