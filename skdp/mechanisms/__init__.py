"""Differentially private mechanisms: pure numpy, no scikit-learn.

Each mechanism validates its parameters before drawing any randomness and states
its guarantee, with the theorem it comes from, in its docstring.
"""

from .between_thresholds import BetweenThresholds
from .binary_tree import BinaryTreeCounter
from .challenge_bt import ChallengeBT
from .exponential import exponential_mechanism, report_noisy_max
from .hist_sparse import HistSparse
from .histogram import (
    HistogramRelease,
    StableHistogram,
    discrete_laplace_tail,
    private_histogram,
    private_histogram_error,
    stable_histogram,
    stable_histogram_min_size,
    truncated_discrete_laplace_edge_mass,
)
from .laplace import discrete_laplace, geometric_mechanism, laplace_mechanism, laplace_noise
from .reorder_slice_compute import ReorderSliceCompute, one_sided_geometric
from .sparse_vector import AboveThreshold
from .stopper import Stopper

__all__ = [
    "AboveThreshold",
    "BetweenThresholds",
    "BinaryTreeCounter",
    "ChallengeBT",
    "HistSparse",
    "HistogramRelease",
    "ReorderSliceCompute",
    "StableHistogram",
    "Stopper",
    "discrete_laplace",
    "discrete_laplace_tail",
    "exponential_mechanism",
    "geometric_mechanism",
    "laplace_mechanism",
    "laplace_noise",
    "one_sided_geometric",
    "private_histogram",
    "private_histogram_error",
    "report_noisy_max",
    "stable_histogram",
    "stable_histogram_min_size",
    "truncated_discrete_laplace_edge_mass",
]
