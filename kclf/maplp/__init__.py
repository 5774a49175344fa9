"""The MAP kernel classifier trained by linear programming: :class:`MAPLP`.

``maplp.py`` holds the estimator, ``_solver.py`` its linear programme.
"""

from .maplp import MAPLP

__all__ = ["MAPLP"]
