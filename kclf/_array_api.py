"""Array API support (private): the namespace of the inputs, moving arrays between it and
NumPy, and the few operations the standard leaves out that the kernel estimators need.

Under ``sklearn.config_context(array_api_dispatch=True)`` an estimator that declares
``array_api_support`` takes the inputs' namespace (PyTorch, CuPy, ``array-api-strict``)
from :func:`get_namespace` and computes in it, on the inputs' device, as scikit-learn's
own estimators do (its user guide, "Array API support").  NumPy inputs, and every input
without dispatch, keep the NumPy code paths.  The namespaces come from
``array-api-compat`` (the ``array-api`` extra: ``pip install kclf[array-api]``); the
library itself imports neither PyTorch nor CuPy.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn import get_config


def get_namespace(*arrays):
    """``(xp, is_array_api)``: the namespace of ``arrays`` when scikit-learn's
    ``array_api_dispatch`` is on and they are not NumPy arrays, else ``(numpy, False)``.

    ``None``, sparse matrices and whatever is not an array API array (lists, DataFrames)
    are passed over.  Arrays of two namespaces are a ``TypeError``
    (``array_api_compat.array_namespace``'s).
    """
    if not get_config()["array_api_dispatch"]:
        return np, False
    arrays = [a for a in arrays if a is not None and not sp.issparse(a)]
    arrays = [a for a in arrays if not isinstance(a, np.ndarray | np.generic | list | tuple | str)]
    if not arrays:
        return np, False
    try:
        import array_api_compat
    except ImportError as exc:  # pragma: no cover - the extra is installed in the tests
        raise ImportError(
            "array API dispatch needs the array-api-compat package: pip install kclf[array-api]"
        ) from exc
    arrays = [a for a in arrays if array_api_compat.is_array_api_obj(a)]
    if not arrays:  # DataFrames and other array-likes: NumPy's path converts them
        return np, False
    xp = array_api_compat.array_namespace(*arrays)
    if array_api_compat.is_numpy_namespace(xp):
        return np, False
    return xp, True


def fitted_namespace(estimator, attribute):
    """``(xp, is_array_api)`` of the fitted array ``attribute`` of ``estimator``: the
    namespace it was fitted in, whether or not dispatch is on now."""
    value = getattr(estimator, attribute)
    if isinstance(value, np.ndarray | np.generic) or sp.issparse(value):
        return np, False
    import array_api_compat

    return array_api_compat.array_namespace(value), True


def input_namespace(estimator, X, attribute="X_fit_"):
    """``(xp, is_array_api)`` of the test inputs ``X`` of a fitted ``estimator``, which must
    be those of its fitted ``attribute``: a model fitted on NumPy arrays predicts on NumPy
    (or array-like) inputs, one fitted on another namespace's arrays on that namespace's,
    under ``array_api_dispatch``; else a ``ValueError`` naming both."""
    fit_xp, fit_is = fitted_namespace(estimator, attribute)
    xp, is_xp = get_namespace(X)
    if fit_is != is_xp or (is_xp and xp.__name__ != fit_xp.__name__):
        fitted = fit_xp.__name__ if fit_is else "numpy"
        given = xp.__name__ if is_xp else type(X).__name__
        hint = (
            ""
            if fit_is == is_xp or get_config()["array_api_dispatch"]
            else (" (array_api_dispatch is off)")
        )
        raise ValueError(
            f"{type(estimator).__name__} was fitted on {fitted} arrays and is given "
            f"{given} inputs{hint}: predict with arrays of the namespace it was fitted on"
        )
    return xp, is_xp


def same_namespace(method):
    """A prediction method that, under ``array_api_dispatch``, first checks with
    scikit-learn's ``check_same_namespace`` that ``X`` is of the namespace and device of
    the fitted attribute ``_namespace_attribute`` (one line naming the method otherwise),
    for the estimators whose tags declare ``array_api_support``."""

    @functools.wraps(method)
    def checked(self, X, *args, **kwargs):
        if get_config()["array_api_dispatch"] and self.__sklearn_tags__().array_api_support:
            from sklearn.utils._array_api import check_same_namespace
            from sklearn.utils.validation import check_is_fitted

            check_is_fitted(self)
            attribute = getattr(self, "_namespace_attribute", "classes_")
            check_same_namespace(X, self, attribute=attribute, method=method.__name__)
        return method(self, X, *args, **kwargs)

    return checked


def device(x):
    """The device of the array ``x`` (``"cpu"`` for NumPy)."""
    if isinstance(x, np.ndarray):
        return "cpu"
    import array_api_compat

    return array_api_compat.device(x)


def to_numpy(x, xp=None):
    """``x`` as a NumPy array (copied off its device); ``xp`` (None: ``x``'s own
    namespace) is only a hint, since a target or sample weights may come in another
    namespace than ``X`` ("everything follows X", scikit-learn's mixed-input check)."""
    if xp is np or isinstance(x, np.ndarray | np.generic | float | int):
        return np.asarray(x)
    import array_api_compat

    if array_api_compat.is_array_api_obj(x):
        xp = array_api_compat.array_namespace(x)
    name = xp.__name__
    if "cupy" in name:
        return x.get()
    if "torch" in name:
        return x.detach().cpu().numpy()
    if name == "array_api_strict":
        return np.asarray(xp.asarray(x, device=xp.Device("CPU_DEVICE")))
    return np.asarray(x)


def from_numpy(a, xp, device_):
    """The NumPy array ``a`` in the namespace ``xp`` on ``device_``."""
    if xp is np:
        return np.asarray(a)
    return xp.asarray(a, device=device_)


def float_dtype(xp, X):
    """The floating dtype to compute in: ``X``'s (float32 or float64)."""
    return X.dtype if X.dtype in (xp.float32, xp.float64) else xp.float64


def compute_dtype(estimator, xp, X):
    """``X`` in float64: the logistic models' float32 inputs are upcast, with a
    ``UserWarning`` (:mod:`kclf.klr._array_api_paths`' docstring: the one Newton loop's
    ascent test and tolerance are below float32's resolution of the objective)."""
    if X.dtype == xp.float64:
        return X
    warnings.warn(
        f"{type(estimator).__name__}: float32 inputs are fitted in float64 on their device "
        "(the Newton solver's ascent test and tolerance are below float32's resolution); "
        "its fitted arrays are float64, its probabilities float32",
        UserWarning,
        stacklevel=4,
    )
    return xp.astype(X, xp.float64)


def add_to_diagonal(xp, A, value):
    """``A + value * I`` for a square ``A`` (a new array)."""
    n = A.shape[0]
    return A + value * xp.eye(n, dtype=A.dtype, device=device(A))


def symmetrize(xp, A):
    """``(A + A^T) / 2``: a matrix product's round-off makes a Gram matrix slightly
    asymmetric, which ``eigh`` of some namespaces would read from one triangle only."""
    return 0.5 * (A + A.T)


def rank_auc(xp, y, scores, weights=None):
    """ROC AUC of ``scores`` ((n,)) against 0/1 labels ``y`` ((n,)) by the Mann-Whitney
    statistic, ties counting one half, each row weighing ``weights`` ((n,) float64, or
    None for one): ``sum_{i pos, j neg} w_i w_j ([s_i > s_j] + [s_i = s_j] / 2)`` over
    ``W_pos W_neg``, what ``sklearn.metrics.roc_auc_score`` gives with ``sample_weight``.
    NaN where the positive or the negative weight is zero.  With unit weights every sum is
    an integer, exact in float64."""
    n = scores.shape[0]
    dev = device(scores)
    w = xp.ones(n, dtype=xp.float64, device=dev) if weights is None else weights
    positive = y == 1
    zero = xp.zeros_like(w)
    w_pos = xp.where(positive, w, zero)
    w_neg = w - w_pos
    total_pos, total_neg = float(xp.sum(w_pos)), float(xp.sum(w_neg))
    if total_pos == 0 or total_neg == 0:
        return math.nan
    order = xp.argsort(scores)
    s = xp.take(scores, order)
    # cum[k]: the negatives' weight among the k smallest scores
    cum = xp.concat(
        [xp.zeros(1, dtype=xp.float64, device=dev), xp.cumulative_sum(xp.take(w_neg, order))]
    )
    below = xp.take(cum, xp.searchsorted(s, s, side="left"))
    upto = xp.take(cum, xp.searchsorted(s, s, side="right"))
    won = xp.sum(xp.take(w_pos, order) * (below + 0.5 * (upto - below)))
    return float(won) / (total_pos * total_neg)
