"""Exceptions and warnings raised by skdp.

Every privacy-related failure derives from :class:`PrivacyError`, so a caller can
catch "anything privacy went wrong" in one clause, while the concrete classes keep
the standard-library base a caller would expect (``ValueError`` for bad
parameters, ``RuntimeError`` for a budget or a mechanism that cannot go on).
"""

__all__ = [
    "BudgetExhaustedError",
    "CapReachedError",
    "LedgerIntegrityError",
    "LedgerKeyError",
    "MechanismHaltedError",
    "PrivacyError",
    "PrivacyLeakWarning",
    "PrivacyParameterError",
    "PrivacyWarning",
    "StaleStateError",
]


class PrivacyError(Exception):
    """Base class of every privacy-related error skdp raises."""


class PrivacyParameterError(PrivacyError, ValueError):
    """An invalid privacy parameter: ε ≤ 0 or not finite, δ outside [0, 1), and so on.

    Raised before any randomness is drawn or any budget is spent.
    """


class BudgetExhaustedError(PrivacyError, RuntimeError):
    """A charge does not fit in what remains of a privacy budget.

    The budget (and the object that tried to spend it) is left exactly as it was
    before the call that raised.
    """


class CapReachedError(BudgetExhaustedError):
    """A charge would exceed a count cap that a privacy plan was paid for (hard queries,
    mechanism instances, releases, switches).

    The cap is checked in the same ledger transaction as the charge, so copies of one
    object answering concurrently (threads, processes, machines) can never pass it
    together. Nothing is recorded.
    """


class MechanismHaltedError(PrivacyError, RuntimeError):
    """An interactive mechanism (e.g. sparse vector after its cutoff) was asked
    for another answer after it halted.

    Answering would cost privacy the mechanism's guarantee does not cover, so it
    refuses; create a new instance (and pay for it) instead.
    """


class PrivacyWarning(UserWarning):
    """Something privacy-relevant the user should know, e.g. a learner that reached
    its update cap and stopped learning to keep its guarantee."""


class PrivacyLeakWarning(PrivacyWarning):
    """Something a release depends on was read from the private data instead of
    being passed as a public parameter (e.g. the label set inferred from ``y``
    when ``classes=`` was not given): the guarantee does not cover it."""


class StaleStateError(PrivacyError, RuntimeError):
    """A copy of private state (an older pickle, a second loader, a deepcopy
    branch) tried to continue a stream that another copy already continued.

    Continuing it would release a second continuation of the same private state,
    which the guarantee does not cover; continue the copy that is up to date.
    """


class LedgerIntegrityError(PrivacyError, RuntimeError):
    """A privacy ledger's charges do not verify: a charge row was deleted or
    altered, or the ledger cannot be found where its handle says it lives.

    Spending from such a ledger is refused: what it says was spent cannot be
    trusted, and a deleted charge would hand out privacy twice.
    """


class LedgerKeyError(LedgerIntegrityError):
    """A shared ledger was sealed with another ledger key than this process's, or the
    key is missing or unusable.

    The key (``$SKDP_LEDGER_KEY``, or the key file in this user's private ledger
    directory) makes the ledger's chain unforgeable by whoever can write the store; it
    is never stored in the database. Every machine that charges one ``postgresql://``
    ledger needs the same key. Spending is refused rather than starting a new chain.
    """
