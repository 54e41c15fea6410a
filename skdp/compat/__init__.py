"""Adapters that let skdp estimators run inside other machine-learning libraries.

Each adapter lives in its own module and imports its library only when that module is
imported, so ``import skdp`` never needs them:

river
    :class:`skdp.compat.river.RiverClassifier` — an skdp classifier as a river
    classifier (``learn_one``, ``predict_one``, ``predict_proba_one``) that learns on a
    public batch schedule, so river's progressive validation never pays ε per
    prediction. Needs ``pip install "skdp[river]"``.
"""

__all__: list[str] = []
