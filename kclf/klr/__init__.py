"""Kernel logistic regression (kLOGREG): :class:`KernelLogisticRegression` and its search
:class:`KernelLogisticRegressionCV`.

``klr.py`` and ``klr_cv.py`` hold the estimators' parameters, checks and short ``fit`` /
``predict``; ``_solver.py`` the numerics both use (IRLS, Eq. (9) of Roth's paper, the
Nystroem form, the search's warm paths); ``_pairs.py`` all pairwise problems at once.
"""

from .klr import KernelLogisticRegression
from .klr_cv import KernelLogisticRegressionCV

__all__ = ["KernelLogisticRegression", "KernelLogisticRegressionCV"]
