"""The MAP kernel classifier trained by linear programming: :class:`MAPLP`.
"""

from .maplp import MAPLP

__all__ = ["MAPLP"]
