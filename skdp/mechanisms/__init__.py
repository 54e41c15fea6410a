"""Differentially private mechanisms: pure numpy, no scikit-learn.

Each mechanism validates its parameters before drawing any randomness and states
its guarantee, with the theorem it comes from, in its docstring.
"""

from .exponential import exponential_mechanism, report_noisy_max
from .laplace import discrete_laplace, geometric_mechanism, laplace_mechanism, laplace_noise
from .sparse_vector import AboveThreshold

__all__ = [
    "AboveThreshold",
    "discrete_laplace",
    "exponential_mechanism",
    "geometric_mechanism",
    "laplace_mechanism",
    "laplace_noise",
    "report_noisy_max",
]
