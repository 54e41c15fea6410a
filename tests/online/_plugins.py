"""Test helpers shared by the online tests: base learners that use the protocol only."""


class ProtocolOnlySOA:
    """A plug-in base learner that is not an SOALearner: SOA over an explicit label matrix,
    through the protocol only (generic keys, predictions and first disagreements)."""

    def __init__(self, learner):
        self._soa = learner
        self.n_domain = learner.n_domain
        self.mistake_bound = learner.mistake_bound

    def predict_one(self, x):
        return self._soa.predict_one(x)

    def predict(self, x):
        return self._soa.predict(x)

    def update(self, x, y):
        self._soa = self._soa.copy()
        return self._soa.update(x, y)

    def copy(self):
        return ProtocolOnlySOA(self._soa)

    def hypothesis_key(self):
        return self._soa.hypothesis_key()
