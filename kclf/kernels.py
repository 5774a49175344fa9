"""Kernel functions shared by every estimator.

Conventions used throughout kclf:

* Gaussian kernel ``k(x, x') = exp(-||x - x'||^2 / (2 sigma^2))`` (LSPC-new paper,
  below Eq. (2)); the MAPLP paper's ``exp(-gamma ||x - z||^2)`` is the same with
  ``gamma = 1 / (2 sigma^2)``.
* ``sigma=None`` means the median heuristic :func:`median_sigma`.
* ``kernel`` is ``"rbf"``, ``"linear"``, ``"precomputed"`` or a callable
  ``f(X, Y) -> (n_X, n_Y) array``.  With ``"precomputed"`` the estimator's ``fit``
  takes the square training Gram matrix and ``predict*`` take the
  ``(n_test, n_train)`` cross-kernel.
* Inputs may be dense arrays or ``scipy.sparse`` matrices (CSR, CSC); the rbf and
  linear kernels of sparse inputs equal the dense arrays' to round-off.

Arrays of another array API namespace (PyTorch, CuPy, ``array-api-strict``) under
scikit-learn's ``array_api_dispatch`` are computed in their namespace, on their device:
the same formulas, every function below but the callable kernel.

Any scale of the inputs: the squared distances are computed on the inputs divided by a
power of two ``u`` (:func:`unit_of`; the largest magnitude of the inputs then lies in
[1/2, 1)), which is exact, and returned in those units with ``u``
(:func:`scaled_squared_distances`); the Gaussian kernel divides the width by the same
``u`` (:func:`gaussian`).  In the range where nothing under- or overflows this changes
no bit (every product and sum commutes with a power-of-two scaling); beyond it, inputs
scaled by 1e-300 or 1e300 give the kernel of the unscaled inputs to round-off where the
plain squares would under- or overflow (every distance 0, or infinite).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._array_api import get_namespace, to_numpy
from ._validation import check_sigma

KERNELS = ("rbf", "linear", "precomputed")


def _as_float(X):
    """``X`` as a float64 array, or a float64 CSR matrix if sparse; an array of another
    array API namespace as it is (float32 or float64)."""
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    xp, is_xp = get_namespace(X)
    if is_xp:
        return X
    return np.asarray(X, dtype=float)


def _max_abs(X):
    if sp.issparse(X):
        return float(np.abs(X.data).max()) if X.nnz else 0.0
    xp, is_xp = get_namespace(X)
    if is_xp:
        return float(xp.max(xp.abs(X))) if X.shape[0] * X.shape[1] else 0.0
    return float(np.abs(X).max()) if X.size else 0.0


def unit_of(*arrays):
    """The power of two ``u = 2^e`` with the largest magnitude of ``arrays`` in
    ``[u / 2, u)`` (1 when they are all zero, empty or not finite): dividing by it is
    exact and leaves magnitudes of order one."""
    m = max((_max_abs(A) for A in arrays), default=0.0)
    if m == 0 or not np.isfinite(m):
        return 1.0
    return float(np.ldexp(1.0, int(np.frexp(m)[1])))


def _row_norms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    xp, is_xp = get_namespace(X)
    if is_xp:
        return xp.sum(X * X, axis=1)
    return np.einsum("ij,ij->i", X, X)


def _product(X, Y):
    P = X @ Y.T
    if sp.issparse(P):
        return P.toarray()
    return P if get_namespace(P)[1] else np.asarray(P)


def scaled_squared_distances(X, Y=None, unit=None):
    """``(D, u)``: the squared distances ``||x_i - y_j||^2 / u^2`` (clipped at 0 against
    round-off) and the power of two ``u`` (:func:`unit_of` of ``X`` and ``Y`` unless
    given), so the distances themselves are ``D * u^2``.

    Dense inputs are first translated by the coordinate-wise median ``c`` of ``Y`` (of
    ``X`` when ``Y`` is None), which leaves every distance unchanged: the expansion
    ``||x||^2 + ||y||^2 - 2 x.y`` (one matrix product) loses about
    ``eps (||x||^2 + ||y||^2)`` to cancellation, all of the distance when the data sit far
    from the origin (an offset of 1e8 leaves none of it); translated, the error becomes
    ``eps (||x - c||^2 + ||y - c||^2)``, independent of where the data sit.  (The median,
    not the mean: one far outlier does not move it, and on data exactly representable
    after the shift it translates exactly, so a shifted set gives the same bits.)  Sparse
    inputs (either of them) are not translated, which would make them dense: their error
    is ``eps (||x||^2 + ||y||^2)``, the dense one's wherever the column medians are 0, as
    for most columns of sparse data.
    """
    X = _as_float(X)
    same = Y is None or Y is X
    Y = X if same else _as_float(Y)
    u = unit_of(X) if same and unit is None else unit_of(X, Y) if unit is None else unit
    xp, is_xp = get_namespace(X, Y)
    sparse = sp.issparse(X) or sp.issparse(Y)
    if sparse:
        X = X * (1.0 / u)
        Y = X if same else Y * (1.0 / u)
    else:
        if u != 1.0:
            X = X / u
            Y = X if same else Y / u
        c = _column_median(Y, xp, is_xp)
        X = X - c
        Y = X if same else Y - c
    xx = _row_norms(X)
    yy = xx if same else _row_norms(Y)
    D = xx[:, None] + yy[None, :] - 2.0 * _product(X, Y)
    if is_xp:
        D = xp.maximum(D, xp.zeros_like(D))
        if same:
            D = xp.where(xp.eye(D.shape[0], dtype=xp.bool, device=D.device), 0.0, D)
        return D, u
    np.maximum(D, 0.0, out=D)
    if same:
        np.fill_diagonal(D, 0.0)
    return D, u


def _column_median(Y, xp, is_xp):
    """The coordinate-wise median of the rows of ``Y`` (zeros for no rows)."""
    if not is_xp:
        return np.median(Y, axis=0) if Y.shape[0] else np.zeros(Y.shape[1])
    n = Y.shape[0]
    if n == 0:
        return xp.zeros(Y.shape[1], dtype=Y.dtype, device=Y.device)
    S = xp.sort(Y, axis=0)
    return S[n // 2, :] if n % 2 else 0.5 * (S[n // 2 - 1, :] + S[n // 2, :])


def squared_distances(X, Y=None):
    """Squared Euclidean distances ``||x_i - y_j||^2``, clipped at 0 against round-off
    (:func:`scaled_squared_distances` times ``u^2``; they under- or overflow where the
    inputs' squares do, which the kernels avoid by staying in the scaled units)."""
    D, u = scaled_squared_distances(X, Y)
    if u != 1.0:
        D *= u * u
    return D


def gaussian(D, sigma, unit=1.0, out=None):
    """``exp(-D / (2 (sigma / unit)^2))``: the Gaussian kernel of squared distances ``D``
    in units of ``unit`` (:func:`scaled_squared_distances`), into ``out`` if given.

    Where ``(sigma / unit)^2`` underflows to 0 (a width far below the distances) the
    kernel is its limit, 1 at distance 0 and 0 elsewhere.
    """
    s = np.float64(check_sigma(sigma)) / unit
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        factor = -1.0 / (2.0 * s**2)
    xp, is_xp = get_namespace(D)
    if is_xp:
        if not np.isfinite(factor):
            return xp.astype(D == 0, D.dtype)
        return xp.exp(D * float(factor))
    if not np.isfinite(factor):
        K = (np.asarray(D) == 0).astype(float)
        if out is None:
            return K
        out[...] = K
        return out
    out = np.multiply(D, factor, out=out)
    return np.exp(out, out=out)


def rbf_kernel(X, Y=None, sigma=1.0):
    """Gaussian kernel matrix ``exp(-||x - y||^2 / (2 sigma^2))``."""
    check_sigma(sigma)
    D, u = scaled_squared_distances(X, Y)
    return gaussian(D, sigma, u, out=D)


def grams(kernel, X, sigmas):
    """Yield ``(sigma, K(X, X))`` for each width of a grid search.

    For the Gaussian kernel the squared distances are computed once for all widths
    (the values equal :func:`rbf_kernel`'s bit for bit); other kernels have no width
    and give the same matrix for every entry of ``sigmas``.
    """
    if kernel == "rbf":
        D, u = scaled_squared_distances(X)
        for sigma in sigmas:
            yield sigma, gaussian(D, sigma, u)
        return
    K = gram(kernel, X)
    for sigma in sigmas:
        yield sigma, K


def pair_weights(w):
    """The weights of the pairs ``i < j`` (upper triangle, ``np.triu_indices`` order) and
    of each row with itself for the weighted median: a row of weight ``w_i`` stands for
    ``w_i`` copies, so a pair weighs ``w_i w_j`` and the copies of a row among themselves
    ``w_i (w_i - 1) / 2`` pairs at distance 0 (``max(., 0)`` for a weight below one)."""
    iu = np.triu_indices(w.size, k=1)
    return w[iu[0]] * w[iu[1]], np.maximum(w * (w - 1.0) / 2.0, 0.0)


def weighted_median(values, weights):
    """The median of ``values`` each repeated ``weights`` times: with ``T`` the total
    weight and the values sorted, the mean of the values at positions ``floor((T - 1) /
    2)`` and ``ceil((T - 1) / 2)`` of the repeated sequence (``np.median`` of the repeated
    values for integer weights); NaN for a total weight of 0."""
    keep = weights > 0
    values, weights = values[keep], weights[keep]
    if not values.size:
        return np.nan
    order = np.argsort(values, kind="stable")
    values, cum = values[order], np.cumsum(weights[order])
    p = (cum[-1] - 1.0) / 2.0
    lo = values[min(np.searchsorted(cum, np.floor(p), side="right"), values.size - 1)]
    hi = values[min(np.searchsorted(cum, np.ceil(p), side="right"), values.size - 1)]
    return float(np.mean([lo, hi]))


def median_sigma(X, max_samples=1000, sample_weight=None):
    """Median heuristic: the median of the pairwise distances ``||x_i - x_j||`` (i < j).

    At most ``max_samples`` rows, evenly spaced in the given order, are used so the
    cost stays bounded and the result is deterministic.  Falls back to 1.0 when all
    rows coincide.  ``sample_weight``: the median of the distances of the data with row
    ``i`` repeated ``w_i`` times (:func:`pair_weights`, :func:`weighted_median`), so
    integer weights give the median of the repeated rows and a zero weight that of the
    rows without it (with ``n <= max_samples``; above, the evenly spaced rows are
    chosen by position).  Computed in the units of :func:`scaled_squared_distances`, so
    any scale of ``X`` gives the same median relative to it.
    """
    X = _as_float(X)
    n = X.shape[0]
    xp, is_xp = get_namespace(X)
    if sample_weight is None:
        w = None
    else:
        w = to_numpy(sample_weight) if is_xp else np.asarray(sample_weight, dtype=float)
    if n > max_samples:
        rows = np.linspace(0, n - 1, max_samples).astype(int)
        X = xp.take(X, xp.asarray(rows, device=X.device), axis=0) if is_xp else X[rows]
        w = None if w is None else w[rows]
    D, u = scaled_squared_distances(X)
    if is_xp:  # the distances of at most max_samples rows: their median on the host
        D = to_numpy(D)
    iu = np.triu_indices(X.shape[0], k=1)
    d = np.sqrt(D[iu])
    if w is None:
        med = float(np.median(d)) if d.size else 0.0
    else:
        pairs, selves = pair_weights(w)
        med = weighted_median(np.r_[d, np.zeros(w.size)], np.r_[pairs, selves])
    med *= u
    return med if med > 0 else 1.0


def gram(kernel, X, Y=None, sigma=1.0):
    """Kernel matrix between rows of ``X`` and ``Y`` (``Y=None``: ``X`` with itself).

    For ``kernel="precomputed"`` ``X`` is returned as is (already a kernel).
    """
    if kernel == "rbf":
        return rbf_kernel(X, Y, sigma)
    if kernel == "linear":
        X = _as_float(X)
        return _product(X, X if Y is None else _as_float(Y))
    if kernel == "precomputed":
        return X if get_namespace(X)[1] else np.asarray(X, dtype=float)
    if callable(kernel):
        K = np.asarray(kernel(X, X if Y is None else Y), dtype=float)
        return K
    raise ValueError(f"kernel must be one of {KERNELS} or a callable, got {kernel!r}")
