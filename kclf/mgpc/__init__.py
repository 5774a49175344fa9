"""The manifold Gaussian process classifier :class:`ManifoldGPC` and the paper's
baseline :class:`WeightedRidgeLogistic`.

``mgpc.py`` holds the estimator, ``_solver.py`` its Laplace and EP inference (public, on
a given covariance, in ``inference.py``), ``_evidence_walk.py`` the walk over the
hyper-parameter grid by the evidence;
``ridge_logistic.py`` the baseline, ``_ridge_solver.py`` its Newton and gradient steps.
"""

from .mgpc import ManifoldGPC
from .ridge_logistic import WeightedRidgeLogistic

__all__ = ["ManifoldGPC", "WeightedRidgeLogistic"]
