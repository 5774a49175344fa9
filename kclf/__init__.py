"""kclf: kernel probabilistic classifiers with a scikit-learn API.

The estimators follow scikit-learn's API; import them from the top level, e.g.
``from kclf import LSPC, LSPCCV``. Feature extraction (SURF, HMM kernels) lives in
``kclf.features`` and needs the ``features`` extra.
"""

from .corrlog import CorrLog
from .coupling import PairwiseCoupling, couple
from .klr import KernelLogisticRegression, KernelLogisticRegressionCV
from .lspc import LSPC, LSPCCV
from .maplp import MAPLP
from .mgpc import ManifoldGPC, WeightedRidgeLogistic
from .platt import PlattScaled

__version__ = "0.3.0.dev0"  # the one source: pyproject.toml reads it (setuptools dynamic)

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
