"""kclf: kernel probabilistic classifiers and the workflow that reproduces their papers.

The estimators follow scikit-learn's API; import them from the top level, e.g.
``from kclf import LSPC, LSPCCV``. Feature extraction (SURF, HMM kernels) lives in
``kclf.features`` and needs the ``features`` extra.
"""

from .corrlog import CorrLog
from .coupling import PairwiseCoupling, couple
from .klr import KernelLogisticRegression
from .klr_cv import KernelLogisticRegressionCV
from .lspc import LSPC
from .lspc_cv import LSPCCV
from .maplp import MAPLP
from .mgpc import ManifoldGPC
from .platt import PlattScaled
from .ridge_logistic import WeightedRidgeLogistic

__version__ = "0.2.0"  # the one source: pyproject.toml reads it (setuptools dynamic)

__all__ = [
    "LSPC",
    "LSPCCV",
    "MAPLP",
    "CorrLog",
    "KernelLogisticRegression",
    "KernelLogisticRegressionCV",
    "ManifoldGPC",
    "PairwiseCoupling",
    "PlattScaled",
    "WeightedRidgeLogistic",
    "couple",
    "__version__",
]
