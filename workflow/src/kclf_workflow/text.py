"""Values as messages and logs show them: NumPy's scalars and arrays as the plain Python
numbers and lists they hold (``1``, not ``np.int64(1)``; ``[0.5, 2.0]``, not
``array([0.5, 2. ])``)."""

from __future__ import annotations

import numpy as np


def plain(value):
    """``value`` with every NumPy scalar and array in it (in dicts, lists and tuples too)
    made a Python number or list."""
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(plain(v) for v in value)
    return value
