"""Parameter and input checks the estimators share (private).

Every estimator declares its parameters' types and ranges in scikit-learn's
``_parameter_constraints`` and validates them at the top of ``fit`` (``_fit_context``);
the errors (``InvalidParameterError``, a ``ValueError`` and ``TypeError``) name the
parameter.  What those constraints cannot say is here: the entries of a grid, rules
between two parameters, the shape of a precomputed kernel, and the classes of a target
(one wording for every estimator).  :func:`warn_convergence` is the one way a solver
reports that it stopped at its iteration cap.
"""

from __future__ import annotations

import warnings
from numbers import Real

import numpy as np
from sklearn import get_config
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import validate_data as _validate_data

from ._array_api import get_namespace, to_numpy

#: A finite number > 0 (an ``Interval`` never admits NaN or infinity).
POSITIVE = Interval(Real, 0, None, closed="neither")
#: ``kernel`` of every kernel estimator.
KERNEL = [StrOptions({"rbf", "linear", "precomputed"}), callable]


def validate_data(estimator, X="no_validation", y="no_validation", **kwargs):
    """scikit-learn's ``validate_data``, except that an estimator computing with NumPy only
    (no ``array_api_support`` in its tags) given array API arrays under
    ``array_api_dispatch`` (PyTorch tensors, CuPy or array-api-strict arrays) warns once per
    call and computes on NumPy copies of them; its results are then NumPy arrays."""
    if get_config()["array_api_dispatch"] and not estimator.__sklearn_tags__().array_api_support:
        X, y = (_numpy_copy(estimator, a) for a in (X, y))
    return _validate_data(estimator, X, y, **kwargs)


def _numpy_copy(estimator, a):
    if isinstance(a, str) or a is None:  # validate_data's "no_validation", or no target
        return a
    xp, is_array_api = get_namespace(a)
    if not is_array_api:
        return a
    warnings.warn(
        f"{type(estimator).__name__} computes with NumPy only: its {xp.__name__} input is "
        "copied to NumPy in host memory and its results are NumPy arrays (LSPC, LSPCCV, "
        "KernelLogisticRegression, KernelLogisticRegressionCV and PairwiseCoupling of them "
        "compute in the input's namespace and on its device)",
        UserWarning,
        stacklevel=4,
    )
    return to_numpy(a, xp)


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
    ``(n_test, n_train)``.  Errors name the expected shape.  An array of another array
    API namespace (:mod:`kclf._array_api`) is checked, and returned, in it."""
    xp, is_xp = get_namespace(K)
    if not is_xp:
        K = np.asarray(K, dtype=float)
    if K.ndim != 2:
        raise ValueError(f"precomputed kernel {name} must be 2-D, got shape {tuple(K.shape)}")
    if n_train is None and K.shape[0] != K.shape[1]:
        raise ValueError(
            f"precomputed kernel {name} must be square (n_samples, n_samples) at fit, "
            f"got shape {tuple(K.shape)}"
        )
    if n_train is not None and K.shape[1] != n_train:
        raise ValueError(
            f"precomputed kernel {name} must have {n_train} columns (one per training "
            f"sample), got shape {tuple(K.shape)}"
        )
    if not bool(xp.all(xp.isfinite(K))):
        raise ValueError(f"precomputed kernel {name} contains NaN or infinity")
    return K


def one_class_message(name, label, *, binary=False):
    """The error of an estimator ``name`` fitted on a target with the one class ``label``:
    every estimator that needs two classes says it in these words."""
    need = "exactly two classes (binary classification)" if binary else "at least two classes"
    if isinstance(label, np.generic):
        label = label.item()  # 3, not np.int64(3)
    return f"{name} needs {need} in y, got one class: {label!r}"


def class_labels(y, name):
    """``(classes, y_index)`` of class labels ``y`` with at least two classes.

    ``y`` must be a classification target (scikit-learn's
    ``check_classification_targets``); ``ValueError`` (:func:`one_class_message`) if it
    holds one class only.
    """
    check_classification_targets(y)
    classes, y_index = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(one_class_message(name, classes[0]))
    return classes, y_index


def binary_labels(y, name):
    """``(classes, y_index)`` of a binary target ``y``: exactly two classes.

    ``ValueError`` for a target of another type (scikit-learn's ``type_of_target``:
    multiclass, or continuous -- "Unknown label type", as scikit-learn words it) or of
    one class only (:func:`one_class_message`).
    """
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    if y_type.startswith("continuous"):
        raise ValueError(
            f"Unknown label type: {y_type}. Only binary classification is supported: y "
            "must hold two classes"
        )
    if y_type != "binary":
        raise ValueError(
            f"Only binary classification is supported. The type of the target is {y_type}."
        )
    classes, y_index = np.unique(y, return_inverse=True)
    if classes.size != 2:
        raise ValueError(one_class_message(name, classes[0], binary=True))
    return classes, y_index


def label_matrix(Y, n):
    """``Y`` as an int (n, m) 0/1 multilabel indicator matrix; ``ValueError`` for another
    shape, another number of rows than ``n``, or entries other than 0 and 1 (naming the
    target type)."""
    Y = np.asarray(Y)
    if Y.ndim != 2:
        raise ValueError(
            f"Y must be a 2-D (n_samples, n_labels) 0/1 indicator matrix, got shape {Y.shape}"
        )
    if Y.shape[0] != n:
        raise ValueError(f"X and Y have different numbers of rows: {n} != {Y.shape[0]}")
    if Y.dtype.kind not in "biuf" or not np.all((Y == 0) | (Y == 1)):
        kind = type_of_target(Y, input_name="Y") if Y.dtype.kind in "biuf" else "unknown"
        if kind.startswith("continuous"):
            raise ValueError(
                f"Unknown label type: {kind}. Y must contain only 0 and 1 "
                "(a multilabel indicator matrix)"
            )
        raise ValueError(
            "Only binary labels are supported: Y must contain only 0 and 1 "
            f"(a multilabel indicator matrix); got target type {kind!r}"
        )
    return Y.astype(int)


def warn_convergence(message, stacklevel=2):
    """Warn ``sklearn.exceptions.ConvergenceWarning`` with ``message``: a solver stopped
    at its iteration cap (or its tolerance was not met).  ``stacklevel`` counts from the
    caller, as in ``warnings.warn``: 2 points at the caller's caller (the user's ``fit``).
    """
    warnings.warn(message, ConvergenceWarning, stacklevel=stacklevel + 1)
