"""Shared cases for the PrivateRandomizedSearchCV tests: every private skdp learner with a
hyperparameter to search, and small binary data they all take."""

import numpy as np

import skdp

rng = np.random.default_rng(0)
X = rng.integers(0, 2, size=(240, 6))
y = X[:, 0] | X[:, 1]

# Learner → a distribution over one of its real hyperparameters. Query-budgeted
# predictors (PERP, PrivatePredictor, SubsampleAggregatePredictor) are refused.
LEARNERS = {
    "AdaptivePrivateOnlineClassifier": {"beta": [0.05, 0.1]},
    "BatchSanitizedOnlineClassifier": {"on_failure": ["skip"]},
    "DPDecisionListClassifier": {"max_rules": [1, 2, 4]},
    "DPSOAClassifier": {"preset": ["practical"]},
    "DPWinnowClassifier": {"margin": [0.1, 0.2]},
    "OnlineDecisionListClassifier": {"max_length": [1, 2]},
    "PrivateExpertsClassifier": {"learning_rate": ["auto"]},
}


def learner(name, **params):
    return getattr(skdp, name)(classes=[0, 1], **params)
