"""Least-squares probabilistic classifiers: :class:`LSPC` and its search :class:`LSPCCV`.

``lspc.py`` and ``lspc_cv.py`` hold the estimators' parameters, checks and short
``fit`` / ``predict``; ``_solver.py`` the numerics both use (Eq. (3) of the LSPC-new paper,
its weighted and class-wise blocks, the low-rank basis, the search's eigen paths).
"""

from .lspc import LSPC
from .lspc_cv import LSPCCV

__all__ = ["LSPC", "LSPCCV"]
