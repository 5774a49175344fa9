"""The manifold Gaussian process classifier :class:`ManifoldGPC` and the paper's
baseline :class:`WeightedRidgeLogistic`.

``mgpc.py`` holds the estimator, ``ridge_logistic.py`` the baseline.
"""

from .mgpc import ManifoldGPC
from .ridge_logistic import WeightedRidgeLogistic

__all__ = ["ManifoldGPC", "WeightedRidgeLogistic"]
