"""LSPC and its sigma x lambda search in any array API namespace (private).

The same mathematics as :mod:`kclf.lspc._solver` (Eq. (3) of the LSPC-new paper, every
lambda of a (sigma, fold) from one eigendecomposition, the low-rank basis of ``b``
centres), written once against the array API standard so that it runs on PyTorch or CuPy
arrays on their device, or on ``array-api-strict`` arrays in the tests.  NumPy inputs keep
the NumPy path, whose BLAS-level tricks (symmetric rank-k updates, cache-blocked products,
single-threaded small eigendecompositions) the standard cannot express.

Distances are computed in a unit that is a power of two (:func:`design_distances`), so
that neither ``1e-300`` nor ``1e300`` times the inputs underflows or overflows; the
Gaussian kernel of width ``sigma`` is ``exp(-D / 2 (sigma / unit)^2)``.
"""

from __future__ import annotations

import numpy as np

from .._array_api import add_to_diagonal, device, median_rows, power_of_two_scale, rank_auc
from .._array_api import symmetrize, to_numpy

#: float64 entries of one row block of the design matrix (512 MB)
BLOCK_ENTRIES = 2**26
#: the log loss's probability floor, as :data:`kclf.metrics.EPS`
LOG_EPS = 1e-15


def row_block(n_cols):
    """Rows per block of an (n, n_cols) matrix."""
    return max(1, BLOCK_ENTRIES // max(n_cols, 1))


def design_distances(xp, X, C):
    """``(D, unit)``: the squared distances of the rows of ``X`` to the rows of ``C``,
    (n, b), in the unit ``unit`` (``||x - c||^2 = unit^2 D``).

    Both sets are translated by the coordinate-wise median of ``C`` (the expansion
    ``||x||^2 + ||c||^2 - 2 x.c`` then loses ``eps (||x - m||^2 + ||c - m||^2)`` instead of
    ``eps (||x||^2 + ||c||^2)``) and divided by the power of two nearest their largest
    coordinate (exact), so no square underflows or overflows whatever the inputs' scale.
    """
    m = median_rows(xp, C)
    Xc, Cc = X - m, C - m
    unit = power_of_two_scale(float(xp.max(xp.abs(xp.concat([Xc, Cc], axis=0)))))
    Xc, Cc = Xc / unit, Cc / unit
    xx = xp.sum(Xc * Xc, axis=1)
    cc = xp.sum(Cc * Cc, axis=1)
    D = xx[:, None] + cc[None, :] - 2.0 * (Xc @ Cc.T)
    return xp.maximum(D, xp.zeros_like(D)), unit


def median_distance(xp, X, max_samples=1000):
    """:func:`kclf.kernels.median_sigma` in ``xp``: the median pairwise distance of at
    most ``max_samples`` evenly spaced rows of ``X`` (1.0 if all coincide)."""
    n = X.shape[0]
    if n > max_samples:
        idx = np.linspace(0, n - 1, max_samples).astype(np.int64)
        X = xp.take(X, xp.asarray(idx, device=device(X)), axis=0)
    D, unit = design_distances(xp, X, X)
    k = X.shape[0]
    D = to_numpy(D, xp)
    d = np.sqrt(D[np.triu_indices(k, 1)])
    med = float(np.median(d)) * unit if d.size else 0.0
    return med if med > 0 else 1.0


class Kernel:
    """The kernel matrix between the rows of ``X`` and ``C`` at any width, from one
    distance computation: ``rbf`` (:func:`design_distances`), ``linear`` (``X C^T``) or
    ``precomputed`` (``X`` is the matrix)."""

    def __init__(self, xp, kernel, X, C=None):
        self.xp, self.kernel = xp, kernel
        if kernel == "rbf":
            self.D, self.unit = design_distances(xp, X, X if C is None else C)
        elif kernel == "linear":
            self.D = X @ (X if C is None else C).T
        else:
            self.D = X

    def block(self, sigma, rows=None):
        """The kernel's rows ``rows`` (a slice or an index array; None: all) at ``sigma``."""
        D = self.D if rows is None else (self.D[rows] if isinstance(rows, slice) else self.xp.take(self.D, rows, axis=0))
        if self.kernel != "rbf":
            return D
        return self.xp.exp(D * float(-0.5 * (self.unit / sigma) ** 2))


def round_outputs(xp, F, rounding):
    """Class posteriors of the raw outputs ``F`` (..., c): Eq. (6) / (4) (``max(0, F)``
    normalised) or Eq. (5) (``F`` normalised); uniform where the sum is zero."""
    c = F.shape[-1]
    P = F if rounding == "none" else xp.maximum(F, xp.zeros_like(F))
    Z = xp.sum(P, axis=-1, keepdims=True)
    ok = Z != 0
    safe = xp.where(ok, Z, xp.ones_like(Z))
    return xp.where(ok, P / safe, xp.full_like(P, 1.0 / c))


def solved_columns(xp, ind, n_tasks, rounding):
    """``(S, n_cls, ones)``: the right-hand sides of Eq. (3) for the class indicators
    ``ind`` (n, n_tasks x n_cls); with two classes per task (not for ``"parameters"``,
    whose ``max(0, alpha)`` is not linear) only ``[ones, positives]``, the negative
    column's solution being ``ones - positive``'s."""
    n_cls = ind.shape[1] // n_tasks
    if n_cls != 2 or rounding == "parameters":
        return ind, n_cls, False
    ones = xp.ones((ind.shape[0], 1), dtype=ind.dtype, device=device(ind))
    return xp.concat([ones, ind[:, 1::2]], axis=1), 2, True


def class_outputs(xp, F, n_tasks, n_cls, ones):
    """The outputs of the indicator columns (..., n_tasks, n_cls) from those of the
    solved columns ``F`` (..., p) (:func:`solved_columns`)."""
    if not ones:
        return xp.reshape(F, F.shape[:-1] + (n_tasks, n_cls))
    pos = F[..., 1:]
    return xp.stack([F[..., :1] - pos, pos], axis=-1)


class FoldScores:
    """The validation score of every (lambda, task) of one fold, from the posteriors of
    its rows added in blocks: ``add(P, y, w)`` with ``P`` (rows, n_lams, n_tasks, c), the
    class indices ``y`` (rows, n_tasks) and the row weights ``w`` (rows,) or None;
    ``scores()`` a NumPy (n_lams, n_tasks) array (NaN where AUC is undefined)."""

    def __init__(self, xp, n_lams, n_tasks, scoring):
        self.xp, self.scoring = xp, scoring
        self.n_lams, self.n_tasks = n_lams, n_tasks
        self.total, self.weight = 0.0, 0.0
        self.parts = []

    def add(self, P, y, w):
        xp = self.xp
        rows = P.shape[0]
        w = xp.ones(rows, dtype=xp.float64, device=device(P)) if w is None else w
        if self.scoring == "auc":
            self.parts.append((P[..., 1], y, w))
            return
        yb = xp.broadcast_to(y[:, None, :], P.shape[:-1])
        if self.scoring == "error":
            wrong = xp.astype(xp.argmax(P, axis=-1) != yb, xp.float64)
            self.total = self.total + xp.sum(wrong * w[:, None, None], axis=0)
        else:
            p = xp.take_along_axis(P, xp.reshape(yb, yb.shape + (1,)), axis=-1)[..., 0]
            p = xp.clip(xp.astype(p, xp.float64), LOG_EPS, 1.0)
            self.total = self.total - xp.sum(xp.log(p) * w[:, None, None], axis=0)
        self.weight = self.weight + float(xp.sum(w))

    def scores(self):
        xp = self.xp
        if self.scoring != "auc":
            return to_numpy(self.total, xp) / self.weight
        p1 = xp.concat([p for p, _, _ in self.parts], axis=0)
        y = xp.concat([y for _, y, _ in self.parts], axis=0)
        w = xp.concat([w for _, _, w in self.parts], axis=0)
        out = np.empty((self.n_lams, self.n_tasks))
        for li in range(self.n_lams):
            for t in range(self.n_tasks):
                out[li, t] = rank_auc(xp, y[:, t], p1[:, li, t], w)
        return out


def eigen_path(xp, H, h, lams):
    """``alpha(lam) = (H + lam I)^{-1} h`` for every lambda from one eigendecomposition
    ``H = V diag(s) V^T``: (b, n_lams x p), lambda-major."""
    s, V = xp.linalg.eigh(symmetrize(xp, H))
    R = V.T @ h  # (b, p)
    lam = xp.asarray(lams, dtype=H.dtype, device=device(H))
    G = 1.0 / (s[:, None] + lam[None, :])  # (b, L)
    GR = G[:, :, None] * R[:, None, :]  # (b, L, p)
    return V @ xp.reshape(GR, (V.shape[0], -1))


def solve_shifted(xp, H, h, lam):
    """``(H + lam I)^{-1} h`` (``H`` symmetric positive semi-definite, ``lam > 0``)."""
    return xp.linalg.solve(add_to_diagonal(xp, symmetrize(xp, H), lam), h)


def take_rows(xp, A, idx):
    """``A[idx]`` for a NumPy index array ``idx``: a slice when it is one contiguous run."""
    idx = np.asarray(idx)
    if idx.size and idx[-1] - idx[0] + 1 == idx.size and np.all(np.diff(idx) == 1):
        return A[int(idx[0]) : int(idx[-1]) + 1]
    return xp.take(A, xp.asarray(idx, device=device(A)), axis=0)


class ArrayAPISearch:
    """:class:`kclf.LSPCCV`'s search in the namespace ``xp``: the exact model (the fold's
    training rows as its basis) or the low-rank one (``centers``, rows of ``X``), the full
    basis, any rounding, scoring, number of classes or tasks, and row weights.

    ``ind`` (n, n_tasks x n_cls) class indicators and ``labels`` (n, n_tasks) class
    indices are arrays of ``xp``; ``folds`` NumPy ``(train, validation)`` index pairs;
    ``weights`` (n,) or None.
    """

    def __init__(self, xp, kernel, rounding, scoring):
        self.xp, self.kernel, self.rounding, self.scoring = xp, kernel, rounding, scoring

    def _score_fold(self, kern, sigma, rows, A, labels, weights, cols, n_tasks, n_cls, ones):
        """The scores (n_lams, n_tasks) of the validation ``rows`` (NumPy indices) from the
        parameters ``A`` (b, n_lams x p) on the basis columns ``cols`` (None: all)."""
        xp = self.xp
        n_lams = A.shape[1] // (n_tasks + 1 if ones else n_tasks * n_cls)
        acc = FoldScores(xp, n_lams, n_tasks, self.scoring)
        step = row_block(A.shape[0])
        for lo in range(0, rows.size, step):
            part = rows[lo : lo + step]
            K = kern.block(sigma, xp.asarray(part, device=device(A)))
            if cols is not None:
                K = xp.take(K, cols, axis=1)
            F = xp.reshape(K @ A, (part.size, n_lams, -1))
            P = round_outputs(xp, class_outputs(xp, F, n_tasks, n_cls, ones), self.rounding)
            w = None if weights is None else take_rows(xp, weights, part)
            acc.add(P, take_rows(xp, labels, part), w)
        return acc.scores()

    def _path(self, H, h, lams):
        A = eigen_path(self.xp, H, h, lams)
        if self.rounding == "parameters":
            A = self.xp.maximum(A, self.xp.zeros_like(A))
        return A

    def search_lowrank(self, X, C, ind, labels, weights, folds, table):
        """Every (task, sigma, lambda)'s fold scores into ``table`` on the shared centres
        ``C``; returns per width the full ``(K^T W K, K^T W S, W)`` for the refit and
        the solved columns' layout."""
        xp = self.xp
        n_tasks = labels.shape[1]
        S, n_cls, ones = solved_columns(xp, ind, n_tasks, self.rounding)
        kern = Kernel(xp, self.kernel, X, C)
        n = X.shape[0]
        w = xp.ones(n, dtype=X.dtype, device=device(X)) if weights is None else weights
        Sw = S * w[:, None]
        member = np.zeros((n, len(folds)), dtype=bool)
        for k, (tr, _) in enumerate(folds):
            member[tr, k] = True
        atoms, inverse = np.unique(member, axis=0, return_inverse=True)
        groups = [np.flatnonzero(inverse.ravel() == a) for a in range(atoms.shape[0])]
        w_np = to_numpy(w, xp).astype(float)
        systems = []
        for si, sigma in enumerate(table.sigmas):
            G, KS = [], []
            for rows in groups:
                g, ks = 0.0, 0.0
                for lo in range(0, rows.size, row_block(C.shape[0])):
                    part = rows[lo : lo + row_block(C.shape[0])]
                    K = kern.block(sigma, xp.asarray(part, device=device(X)))
                    g = g + K.T @ (K * take_rows(xp, w, part)[:, None])
                    ks = ks + K.T @ take_rows(xp, Sw, part)
                G.append(g)
                KS.append(ks)
            for k, (tr, va) in enumerate(folds):
                inside = np.flatnonzero(atoms[:, k])
                m = float(w_np[tr].sum())
                H = sum(G[a] for a in inside) / m
                h = sum(KS[a] for a in inside) / m
                A = self._path(H, h, table.lams)
                table.add(si, self._score_fold(kern, sigma, va, A, labels, weights, None, n_tasks, n_cls, ones))
            systems.append((sum(G), sum(KS), float(w_np.sum())))
        return systems, (n_cls, ones)

    def search_exact(self, X, ind, labels, weights, folds, table):
        """:meth:`search_lowrank` with each fold's training rows as its basis (Eq. 2)."""
        xp = self.xp
        n_tasks = labels.shape[1]
        S, n_cls, ones = solved_columns(xp, ind, n_tasks, self.rounding)
        kern = Kernel(xp, self.kernel, X)
        dev = device(X)
        for si, sigma in enumerate(table.sigmas):
            for tr, va in folds:
                tr_x = xp.asarray(tr, device=dev)
                Ktr = xp.take(kern.block(sigma, tr_x), tr_x, axis=1)
                Str = xp.take(S, tr_x, axis=0)
                if weights is None:
                    m = float(tr.size)
                    H, h = Ktr.T @ Ktr / m, Ktr.T @ Str / m
                else:
                    wtr = xp.take(weights, tr_x, axis=0)
                    m = float(xp.sum(wtr))
                    H, h = Ktr.T @ (Ktr * wtr[:, None]) / m, Ktr.T @ (Str * wtr[:, None]) / m
                A = self._path(H, h, table.lams)
                table.add(si, self._score_fold(kern, sigma, va, A, labels, weights, tr_x, n_tasks, n_cls, ones))
        return (n_cls, ones)


def fit_alpha(xp, K, ind, lam, weights):
    """The solution alpha~ (b, n_columns) of Eq. (3) on the design matrix ``K`` (n, b) for
    the indicator columns ``ind``, each row weighing ``weights`` (None: one)."""
    if weights is None:
        m = float(K.shape[0])
        return solve_shifted(xp, K.T @ K / m, K.T @ ind / m, lam)
    m = float(xp.sum(weights))
    Kw = K * weights[:, None]
    return solve_shifted(xp, Kw.T @ K / m, Kw.T @ ind / m, lam)


__all__ = ["ArrayAPISearch", "Kernel", "design_distances", "fit_alpha", "median_distance", "round_outputs"]
