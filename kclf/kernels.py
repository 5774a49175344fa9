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
"""

from __future__ import annotations

import numpy as np

from ._validation import check_sigma

KERNELS = ("rbf", "linear", "precomputed")


def squared_distances(X, Y=None):
    """Squared Euclidean distances ``||x_i - y_j||^2``, clipped at 0 against round-off.

    The expansion ``||x||^2 + ||y||^2 - 2 x.y`` (one matrix product) loses about
    ``eps (||x||^2 + ||y||^2)`` to cancellation, all of the distance when the data sit far
    from the origin (an offset of 1e8 leaves none of it).  Both sets are therefore first
    translated by the coordinate-wise median ``c`` of ``Y`` (of ``X`` when ``Y`` is None),
    which leaves every distance unchanged: the error becomes
    ``eps (||x - c||^2 + ||y - c||^2)``, independent of where the data sit.  (The median,
    not the mean: one far outlier does not move it, and on data exactly representable
    after the shift it translates exactly, so a shifted set gives the same bits.)
    """
    X = np.asarray(X, dtype=float)
    same = Y is None or Y is X
    Y = X if same else np.asarray(Y, dtype=float)
    c = np.median(Y, axis=0) if Y.shape[0] else np.zeros(Y.shape[1])
    X = X - c
    Y = X if same else Y - c
    xx = np.einsum("ij,ij->i", X, X)
    yy = xx if same else np.einsum("ij,ij->i", Y, Y)
    D = xx[:, None] + yy[None, :] - 2.0 * (X @ Y.T)
    np.maximum(D, 0.0, out=D)
    if same:
        np.fill_diagonal(D, 0.0)
    return D


def rbf_kernel(X, Y=None, sigma=1.0):
    """Gaussian kernel matrix ``exp(-||x - y||^2 / (2 sigma^2))``."""
    check_sigma(sigma)
    D = squared_distances(X, Y)
    D *= -1.0 / (2.0 * sigma**2)
    return np.exp(D, out=D)


def grams(kernel, X, sigmas):
    """Yield ``(sigma, K(X, X))`` for each width of a grid search.

    For the Gaussian kernel the squared distances are computed once for all widths
    (the values equal :func:`rbf_kernel`'s bit for bit); other kernels have no width
    and give the same matrix for every entry of ``sigmas``.
    """
    if kernel == "rbf":
        D = squared_distances(X)
        for sigma in sigmas:
            K = D * (-1.0 / (2.0 * check_sigma(sigma) ** 2))
            yield sigma, np.exp(K, out=K)
        return
    K = gram(kernel, X)
    for sigma in sigmas:
        yield sigma, K


def median_sigma(X, max_samples=1000):
    """Median heuristic: the median of the pairwise distances ``||x_i - x_j||`` (i < j).

    At most ``max_samples`` rows, evenly spaced in the given order, are used so the
    cost stays bounded and the result is deterministic.  Falls back to 1.0 when all
    rows coincide.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if n > max_samples:
        X = X[np.linspace(0, n - 1, max_samples).astype(int)]
    D = squared_distances(X)
    iu = np.triu_indices(X.shape[0], k=1)
    d = np.sqrt(D[iu])
    med = float(np.median(d)) if d.size else 0.0
    return med if med > 0 else 1.0


def gram(kernel, X, Y=None, sigma=1.0):
    """Kernel matrix between rows of ``X`` and ``Y`` (``Y=None``: ``X`` with itself).

    For ``kernel="precomputed"`` ``X`` is returned as is (already a kernel).
    """
    if kernel == "rbf":
        return rbf_kernel(X, Y, sigma)
    if kernel == "linear":
        Y = X if Y is None else Y
        return np.asarray(X, dtype=float) @ np.asarray(Y, dtype=float).T
    if kernel == "precomputed":
        return np.asarray(X, dtype=float)
    if callable(kernel):
        K = np.asarray(kernel(X, X if Y is None else Y), dtype=float)
        return K
    raise ValueError(f"kernel must be one of {KERNELS} or a callable, got {kernel!r}")
