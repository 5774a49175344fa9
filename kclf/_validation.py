"""Parameter and input checks the estimators share (private).

Every estimator declares its parameters' types and ranges in scikit-learn's
``_parameter_constraints`` and validates them at the top of ``fit`` (``_fit_context``);
the errors (``InvalidParameterError``, a ``ValueError`` and ``TypeError``) name the
parameter.  What those constraints cannot say is here: the entries of a grid, rules
between two parameters, and the shape of a precomputed kernel.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

#: A finite number > 0 (an ``Interval`` never admits NaN or infinity).
POSITIVE = Interval(Real, 0, None, closed="neither")
#: ``kernel`` of every kernel estimator.
KERNEL = [StrOptions({"rbf", "linear", "precomputed"}), callable]


def check_sigma(sigma, name="sigma"):
    """Raise ``ValueError`` naming ``name`` unless ``sigma`` is a finite positive number."""
    if not isinstance(sigma, Real) or not np.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"{name} must be a finite positive number, got {sigma!r}")
    return float(sigma)


def positive_grid(values, name):
    """``values`` as a non-empty 1-D float array of finite positive numbers (a scalar is
    a grid of one); else ``ValueError`` naming ``name``."""
    try:
        arr = np.atleast_1d(np.array(values, dtype=float))
    except (TypeError, ValueError):
        arr = np.array([np.nan])
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(
            f"{name} must be None, a positive number or a non-empty 1-D sequence of "
            f"finite positive numbers, got {values!r}"
        )
    return arr


def reject_with_precomputed(estimator, name, what):
    """``ValueError`` if the option ``name`` (``what`` it does) is set together with
    ``kernel="precomputed"``: it needs the inputs, not their Gram matrix."""
    if getattr(estimator, name) is not None and estimator.kernel == "precomputed":
        raise ValueError(f"{name} ({what}) is not available with kernel='precomputed'")


def check_precomputed(K, n_train=None, name="X"):
    """Validate a precomputed kernel: square at fit time (``n_train=None``), else
    ``(n_test, n_train)``.  Errors name the expected shape."""
    K = np.asarray(K, dtype=float)
    if K.ndim != 2:
        raise ValueError(f"precomputed kernel {name} must be 2-D, got shape {K.shape}")
    if n_train is None and K.shape[0] != K.shape[1]:
        raise ValueError(
            f"precomputed kernel {name} must be square (n_samples, n_samples) at fit, "
            f"got shape {K.shape}"
        )
    if n_train is not None and K.shape[1] != n_train:
        raise ValueError(
            f"precomputed kernel {name} must have {n_train} columns (one per training "
            f"sample), got shape {K.shape}"
        )
    if not np.all(np.isfinite(K)):
        raise ValueError(f"precomputed kernel {name} contains NaN or infinity")
    return K
