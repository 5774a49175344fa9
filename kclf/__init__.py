"""kclf: kernel probabilistic classifiers and the workflow that reproduces their papers.

The estimators follow scikit-learn's API; import them from the top level, e.g.
``from kclf import LSPC, LSPCCV``.
"""

from .lspc import LSPC
from .lspc_cv import LSPCCV

__version__ = "0.1.0"

__all__ = ["LSPC", "LSPCCV", "__version__"]
