"""A tiny private learner for tests of the continual-release wrapper: it releases one
geometric count of positive labels (ε-DP under adding or removing a row) and records
which rows each release was fitted on (the labels' row ids), (column 0 of X holds row ids), so tests
can check how the wrapper routes rows and the audit can compute a release's exact law."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from skdp.base import PrivateEstimatorMixin
from skdp.mechanisms import geometric_mechanism

#: Rows seen by every fit, in order: a list of arrays of row ids (tests reset it).
FITS: list = []


class NoisyCountClassifier(PrivateEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Predicts ``classes_[1]`` when the noisy count of positive labels (label 1) is
    more than half the rows (the row count is treated as public in these tests)."""

    def __init__(self, epsilon=1.0, classes=None, random_state=None, budget=None):
        self.epsilon = epsilon
        self.classes = classes
        self.random_state = random_state
        self.budget = budget

    def fit(self, X, y):
        X, y = np.asarray(X), np.asarray(y)
        FITS.append(X[:, 0].astype(int).copy())
        self.true_count_ = int(np.count_nonzero(y == 1))
        key = self._charge(self.epsilon, 0.0, "count", accumulate=False)
        self.noisy_count_ = int(geometric_mechanism(self.true_count_, self.epsilon,
                                                    random_state=self._release_generator(key)))
        self.classes_ = np.asarray(self.classes if self.classes is not None
                                   else np.unique(y))
        self.n_rows_ = y.size
        return self

    def predict(self, X):
        label = self.classes_[-1] if 2 * self.noisy_count_ > self.n_rows_ else self.classes_[0]
        return np.full(np.shape(X)[0], label)
