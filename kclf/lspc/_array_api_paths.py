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

import math

import numpy as np

from .._array_api import add_to_diagonal, device, rank_auc, symmetrize, to_numpy
from ..kernels import gaussian, scaled_squared_distances
from ._solver import row_atoms

#: float64 entries of one row block of the design matrix (512 MB)
BLOCK_ENTRIES = 2**26
#: the log loss's probability floor, as :data:`kclf.metrics.EPS`
LOG_EPS = 1e-15


def row_block(n_cols):
    """Rows per block of an (n, n_cols) matrix."""
    return max(1, BLOCK_ENTRIES // max(n_cols, 1))


class Kernel:
    """The kernel matrix between the rows of ``X`` and ``C`` at any width, from one
    distance computation: ``rbf`` (:func:`kclf.kernels.scaled_squared_distances`, in
    power-of-two units), ``linear`` (``X C^T``) or ``precomputed`` (``X`` is the
    matrix)."""

    def __init__(self, xp, kernel, X, C=None):
        self.xp, self.kernel, self.unit = xp, kernel, 1.0
        if kernel == "rbf":
            self.D, self.unit = scaled_squared_distances(X, C)
        elif kernel == "linear":
            self.D = X @ (X if C is None else C).T
        else:
            self.D = X

    def block(self, sigma, rows=None):
        """The kernel's rows ``rows`` (an index array of ``xp``; None: all) at ``sigma``."""
        D = self.D if rows is None else self.xp.take(self.D, rows, axis=0)
        return gaussian(D, sigma, self.unit) if self.kernel == "rbf" else D


def on_device(xp, rows, step, dev):
    """The NumPy row indices ``rows`` in blocks of ``step``, as index arrays on ``dev``."""
    return [xp.asarray(rows[lo : lo + step], device=dev) for lo in range(0, rows.size, step)]


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


def rounded_argmax(xp, F, n_tasks, n_cls, ones):
    """The class of the largest ``max(0, output)`` (the first where they tie), (...,
    n_tasks), from the solved columns' outputs ``F`` (:func:`class_outputs`); for
    ``[ones, positives]`` without forming the negative class's outputs."""
    if not ones:
        C = class_outputs(xp, F, n_tasks, n_cls, ones)
        return xp.argmax(xp.maximum(C, xp.zeros_like(C)), axis=-1)
    zero = xp.zeros_like(F[..., :1])
    pos = xp.maximum(F[..., 1:], zero)
    neg = xp.maximum(F[..., :1] - F[..., 1:], zero)
    return xp.astype(pos > neg, xp.int64)


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

    def add_decisions(self, pred, y, w):
        """The error's part of :meth:`add`: ``pred`` (rows, n_lams, n_tasks) the decided
        class indices."""
        xp = self.xp
        self._count(pred.shape[0], w)
        wrong = xp.astype(pred != xp.broadcast_to(y[:, None, :], pred.shape), xp.float64)
        if w is not None:
            wrong = wrong * xp.astype(w, xp.float64)[:, None, None]
        self.total = self.total + xp.sum(wrong, axis=0)

    def _count(self, rows, w):
        # the weights' sum stays on the device until scores(): no wait for it per block
        xp = self.xp
        self.weight = self.weight + (rows if w is None else xp.sum(xp.astype(w, xp.float64)))

    def add(self, P, y, w):
        xp = self.xp
        rows = P.shape[0]
        if self.scoring == "error":
            self.add_decisions(xp.argmax(P, axis=-1), y, w)
            return
        self._count(rows, w)
        w = (
            xp.ones(rows, dtype=xp.float64, device=device(P))
            if w is None
            else xp.astype(w, xp.float64)
        )
        if self.scoring == "auc":
            self.parts.append((P[..., 1], y, w))
            return
        yb = xp.broadcast_to(y[:, None, :], P.shape[:-1])
        p = xp.take_along_axis(P, xp.reshape(yb, yb.shape + (1,)), axis=-1)[..., 0]
        p = xp.clip(xp.astype(p, xp.float64), LOG_EPS, 1.0)
        self.total = self.total - xp.sum(xp.log(p) * w[:, None, None], axis=0)

    def scores(self):
        xp = self.xp
        if self.scoring != "auc":
            return to_numpy(self.total, xp) / float(self.weight)
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


def basis_weights(sample_weight, rows):
    """The sample weights' form of Eq. (3) (:func:`kclf.lspc._solver.weighting`) on the
    training ``rows`` with the basis functions at ``rows`` too: ``(d, total)``, ``d`` the
    square roots of their weights (NumPy), ``total`` their sum; ``(None, None)``
    unweighted."""
    if sample_weight is None:
        return None, None
    w = sample_weight[rows]
    return np.sqrt(w), float(w.sum())


class ArrayAPISearch:
    """:class:`kclf.LSPCCV`'s search in the namespace ``xp``, the same arithmetic as
    :class:`kclf.lspc._solver.GridPaths`' (full basis): the exact model (the fold's
    training rows as its basis: one eigendecomposition of the fold's Gram matrix per
    (sigma, fold), or a singular value decomposition for a non-symmetric precomputed
    kernel) or the low-rank one (the shared centres ``C``: each fold's ``b x b`` system
    from sums of its row groups' Gram matrices), any rounding, scoring, number of classes
    or tasks, and sample weights (NumPy, (n,) or None).

    ``ind`` (n, n_tasks x n_cls) class indicators and ``labels`` (n, n_tasks) class
    indices are arrays of ``xp``; ``folds`` NumPy ``(train, validation)`` index pairs.
    """

    def __init__(self, xp, kernel, rounding, scoring, sample_weight=None):
        self.xp, self.kernel, self.rounding, self.scoring = xp, kernel, rounding, scoring
        self.sample_weight = sample_weight

    def _weights(self, rows, like):
        w = self.sample_weight
        if w is None:
            return None
        return self.xp.asarray(w[rows], dtype=like.dtype, device=device(like))

    def _path(self, A):
        """Eq. (4)'s ``max(0, alpha)`` for ``rounding="parameters"``."""
        return effective_alpha(self.xp, A, self.rounding)

    def _scores(self, outputs, va, labels, layout, step):
        """The (n_lams, n_tasks) scores of the validation rows ``va`` (NumPy indices):
        ``outputs(lo, hi, rows)`` gives the outputs of their rows ``lo:hi`` (``rows``: those
        indices on the device), (rows, n_lams x p), ``step`` rows at a time."""
        xp = self.xp
        n_tasks, n_cls, ones = layout
        p = n_tasks + 1 if ones else n_tasks * n_cls
        acc = None
        for lo, rows in zip(range(0, va.size, step), on_device(xp, va, step, device(labels))):
            hi = min(lo + step, va.size)
            F = outputs(lo, hi, rows)
            F = xp.reshape(F, (hi - lo, F.shape[1] // p, p))
            if acc is None:
                acc = FoldScores(xp, F.shape[1], n_tasks, self.scoring)
            y, w = xp.take(labels, rows, axis=0), self._weights(va[lo:hi], F)
            if self.scoring == "error" and self.rounding != "none":
                # the error needs the posteriors' argmax only: that of max(F, 0), which
                # share the positive normaliser (or are all 0, the posteriors uniform:
                # index 0 either way), as the NumPy path's BinaryFoldScores compares them
                acc.add_decisions(rounded_argmax(xp, F, n_tasks, n_cls, ones), y, w)
                continue
            P = round_outputs(xp, class_outputs(xp, F, n_tasks, n_cls, ones), self.rounding)
            acc.add(P, y, w)
        return acc.scores()

    def search_exact(self, X, ind, labels, folds, table):
        """Every (task, sigma, lambda)'s fold scores into ``table``, the exact model."""
        import array_api_extra as xpx  # the array-api extra, as array-api-compat

        xp = self.xp
        S, n_cls, ones = solved_columns(xp, ind, labels.shape[1], self.rounding)
        layout = (labels.shape[1], n_cls, ones)
        kern = Kernel(xp, self.kernel, X)
        dev = device(X)
        lams = xp.asarray(table.lams, dtype=X.dtype, device=dev)
        for si, sigma in enumerate(table.sigmas):
            K = kern.block(sigma)
            # the NumPy path's test: a precomputed kernel symmetric to round-off
            symmetric = self.kernel in ("rbf", "linear") or bool(
                xp.all(xpx.isclose(K, K.T, rtol=0.0, atol=1e-13 * float(xp.max(xp.abs(K)))))
            )
            for tr, va in folds:
                tr_x, va_x = xp.asarray(tr, device=dev), xp.asarray(va, device=dev)
                Ktr = xp.take(xp.take(K, tr_x, axis=0), tr_x, axis=1)
                Kva = xp.take(xp.take(K, va_x, axis=0), tr_x, axis=1)
                Str = xp.take(S, tr_x, axis=0)
                d, norm = basis_weights(self.sample_weight, tr)
                if d is None:
                    norm = float(tr.size)
                else:
                    # rows and basis columns both scaled by sqrt(w): the training Gram
                    # matrix stays symmetric, D K D (the NumPy path's identity)
                    d = xp.asarray(d, dtype=X.dtype, device=dev)
                    Ktr = Ktr * d[:, None] * d[None, :]
                    Kva = Kva * d[None, :]
                    Str = Str * d[:, None]
                if symmetric:
                    s, V = xp.linalg.eigh(symmetrize(xp, Ktr))
                    U = V
                else:
                    U, s, Vt = xp.linalg.svd(Ktr)
                    V = Vt.T
                B = U.T @ Str  # (m, p)
                # (H + lam I)^{-1} h = V G U^T Y_tr, G = (s/N) / (s^2/N + lam), all lams
                G = (s[None, :] / norm) / (s[None, :] * s[None, :] / norm + lams[:, None])
                GB = xp.reshape(G.T[:, :, None] * B[:, None, :], (B.shape[0], -1))
                A = self._path(V @ GB)

                def outputs(lo, hi, rows, Kva=Kva, A=A):
                    return Kva[lo:hi, :] @ A

                table.add(si, self._scores(outputs, va, labels, layout, row_block(A.shape[1])))

    def search_lowrank(self, X, C, ind, labels, folds, table, scale=None):
        """Every (task, sigma, lambda)'s fold scores into ``table`` on the shared centres
        ``C`` (``scale``: the square roots of the centres' weights where they are all the
        rows of positive weight, :func:`kclf.lspc._solver.weighting`); returns per width
        the full ``(K'^T W K', K'^T W S, N)`` for the refit."""
        xp = self.xp
        dev = device(X)
        n = X.shape[0]
        S, n_cls, ones = solved_columns(xp, ind, labels.shape[1], self.rounding)
        layout = (labels.shape[1], n_cls, ones)
        kern = Kernel(xp, self.kernel, X, C)
        w = self.sample_weight
        w_np = np.ones(n) if w is None else w
        col = None if scale is None else xp.asarray(scale, dtype=X.dtype, device=dev)
        order, bounds, atoms = row_atoms(n, folds)
        groups = [order[bounds[a] : bounds[a + 1]] for a in range(atoms.shape[0])]
        step = row_block(C.shape[0])
        # every block's row indices moved to the device once, not once per width
        group_blocks = [on_device(xp, rows, step, dev) for rows in groups]

        def design(sigma, rows):
            K = kern.block(sigma, rows)
            return K if col is None else K * col[None, :]

        systems = []
        for si, sigma in enumerate(table.sigmas):
            G, KS = [], []
            for rows, blocks in zip(groups, group_blocks):
                g = ks = 0.0
                for lo, part in zip(range(0, rows.size, step), blocks):
                    K = design(sigma, part)
                    Kw = K if w is None else K * self._weights(rows[lo : lo + step], K)[:, None]
                    g = g + Kw.T @ K
                    ks = ks + Kw.T @ xp.take(S, part, axis=0)
                G.append(g)
                KS.append(ks)
            for k, (tr, va) in enumerate(folds):
                inside = np.flatnonzero(atoms[:, k])
                m = float(w_np[tr].sum())
                H = sum(G[a] for a in inside) / m
                h = sum(KS[a] for a in inside) / m
                A = self._path(eigen_path(xp, H, h, table.lams))

                def outputs(lo, hi, rows, A=A, sigma=sigma):
                    return design(sigma, rows) @ A

                table.add(si, self._scores(outputs, va, labels, layout, step))
            systems.append((sum(G), sum(KS), float(w_np.sum())))
        return systems


def fit_alpha(xp, K, ind, lam, weights=None, basis=None, total=None):
    """The solution alpha~ (b, n_columns) of Eq. (3) on the design matrix ``K`` (n, b) for
    the indicator columns ``ind``: the loss's row ``weights`` (None: one), and the sample
    weights' form of :func:`kclf.lspc._solver.weighting` (``basis`` scales the columns,
    ``total`` the mean's count)."""
    m = float(K.shape[0]) if total is None else float(total)
    if basis is not None:
        K = K * basis[None, :]
    Kw = K if weights is None else K * weights[:, None]
    alpha = solve_shifted(xp, Kw.T @ K / m, Kw.T @ ind / m, lam)
    return alpha if basis is None else alpha * basis[:, None]


def decision_scores(xp, R, U, rounding):
    """:func:`kclf.lspc._solver.decision_scores` in ``xp``: the posteriors of the outputs
    ``R`` as scores, their ties at 0 and 1 broken by the unrounded outputs ``U``."""
    P = round_outputs(xp, R, rounding)
    below = xp.minimum(U, xp.zeros_like(U))
    if P.shape[1] == 2:
        s = 2.0 * P[:, 1] - 1.0
        if rounding != "none":
            s = xp.where(P[:, 1] == 1.0, 1.0 - 2.0 * below[:, 0], s)
            s = xp.where(P[:, 1] == 0.0, -1.0 + 2.0 * below[:, 1], s)
        return s
    if rounding == "none":
        return P
    T = xp.where(P == 0.0, below, P)
    one = P == 1.0
    others = xp.max(xp.where(one, -math.inf, below), axis=1, keepdims=True)
    return xp.where(one, 1.0 - others, T)


def supported(estimator):
    """Whether the array API path implements the parameters of an LSPC model (its tags'
    ``array_api_support``; class weights per task are refused at ``fit``)."""
    try:
        unsupported(estimator)
    except ValueError:
        return False
    return True


def unsupported(estimator, multitask=False):
    """``ValueError`` naming the first parameter of an LSPC model that the array API path
    does not implement (the class-wise basis, k-means centres, a callable kernel, class
    weights per task)."""
    if callable(estimator.kernel):
        what = "a callable kernel"
    elif estimator.basis != "full":
        what = f"basis={estimator.basis!r}"
    elif estimator.n_basis is not None and estimator.centers != "random":
        what = f"centers={estimator.centers!r}"
    elif multitask and estimator.class_weight is not None:
        what = "class_weight with a 2-D y of tasks"
    else:
        return
    raise ValueError(
        f"{type(estimator).__name__}: {what} is not supported for array API inputs "
        "(array_api_dispatch=True); pass NumPy arrays for it"
    )


def host_weights(sample_weight, n):
    """Sample weights as a float64 NumPy array of ``n`` non-negative entries, not all
    zero (scikit-learn's ``_check_sample_weight``), from any namespace."""
    from sklearn.utils.validation import _check_sample_weight

    w = to_numpy(sample_weight) if not isinstance(sample_weight, int | float) else sample_weight
    return _check_sample_weight(w, np.empty((n, 0)), dtype=np.float64, ensure_non_negative=True)


def effective_alpha(xp, alpha, rounding):
    """``max(0, alpha)`` for the original LSPC (Eq. 4), ``alpha`` otherwise."""
    return xp.maximum(alpha, xp.zeros_like(alpha)) if rounding == "parameters" else alpha


def fit_lspc(est, xp, X, y, centers, sample_weight):
    """:meth:`kclf.LSPC.fit` on arrays of ``xp``: the same model, every array on their
    device (``centers`` an ``(index, C)`` a search chose, or None)."""
    from sklearn.utils.validation import validate_data

    from .._validation import check_precomputed, class_labels
    from ..kernels import gram
    from ._solver import center_index, center_rows, sample_weights, weighting

    unsupported(est)
    X, y = validate_data(est, X, y, dtype=[xp.float64, xp.float32])
    if est.kernel == "precomputed":
        check_precomputed(X)
    classes, yi = class_labels(to_numpy(y, xp), "LSPC")
    n, dev = X.shape[0], device(X)
    sw = None if sample_weight is None else host_weights(sample_weight, n)
    est.sigma_ = est._check_params(X, sw)
    if est.n_basis is None:
        index, C = np.arange(n), None
    elif centers is not None:
        index, C = centers
    else:
        index = center_index(n, est.n_basis, est.random_state, sw)
        C = xp.take(X, xp.asarray(index, device=dev), axis=0)
    K = gram(est.kernel, X, C, est.sigma_)
    if not bool(xp.all(xp.isfinite(K))):
        raise ValueError("kernel matrix of X contains NaN or infinity")
    loss = sample_weights(yi, classes.size, est.class_weight, classes, sw)
    basis, total = weighting(sw, slice(None), index if C is None else center_rows(index, sw))
    ind = xp.asarray(np.eye(classes.size)[yi], dtype=X.dtype, device=dev)
    est.alpha_ = fit_alpha(
        xp,
        K,
        ind,
        est.lam,
        None if loss is None else xp.asarray(loss, dtype=X.dtype, device=dev),
        None if basis is None else xp.asarray(basis, dtype=X.dtype, device=dev),
        total,
    )
    est.classes_ = xp.asarray(classes, device=dev)
    est.center_index_ = None if est.n_basis is None else xp.asarray(index, device=dev)
    est.X_fit_ = C if C is not None else xp.asarray(X, copy=True)
    return est


def test_kernel(est, xp, X):
    """The kernel of test inputs ``X`` (of ``xp``) to the centres of a model fitted on
    arrays of ``xp``."""
    from sklearn.utils.validation import validate_data

    from .._validation import check_precomputed
    from ..kernels import gram

    if est.kernel == "precomputed":
        return check_precomputed(X, n_train=est.X_fit_.shape[0])
    X = validate_data(est, X, dtype=[xp.float64, xp.float32], reset=False)
    return gram(est.kernel, X, est.X_fit_, est.sigma_)


def search(est, xp, X, labels, folds, table, sample_weight):
    """:meth:`kclf.LSPCCV._search` on arrays of ``xp``: every fold's scores into ``table``;
    returns what the refit reuses (the centres, and per width the low-rank systems)."""
    from ._solver import center_index, center_rows

    dev, n = device(X), X.shape[0]
    if est.n_tasks_ is None:
        ind = np.eye(est.classes_.size)[labels[:, 0]]
    else:  # per searched task [negative, positive]
        ind = np.stack([1 - labels, labels], axis=2).reshape(n, -1).astype(float)
    ind = xp.asarray(ind, dtype=X.dtype, device=dev)
    labels_x = xp.asarray(labels, device=dev)
    paths = ArrayAPISearch(xp, est.kernel, est.rounding, est.scoring, sample_weight)
    reuse = {"centers": None, "systems": None, "scale": None, "ind": ind, "sigmas": table.sigmas}
    if labels.shape[1] == 0:
        return reuse
    if est.n_basis is None:
        paths.search_exact(X, ind, labels_x, folds, table)
        return reuse
    index = center_index(n, est.n_basis, est.random_state, sample_weight)
    C = xp.take(X, xp.asarray(index, device=dev), axis=0)
    rows = center_rows(index, sample_weight)
    scale = None if rows is None else np.sqrt(sample_weight[rows])
    reuse["systems"] = paths.search_lowrank(X, C, ind, labels_x, folds, table, scale)
    reuse.update(centers=(index, C), scale=scale)
    return reuse


def refit_tasks(est, xp, X, fit_tasks, sig_t, lam_t, reuse, sample_weight):
    """:meth:`kclf.LSPCCV._refit_tasks`' ``alpha`` (b, n_tasks, 2) on arrays of ``xp``:
    Eq. (3) per searched task at its (sigma, lambda), zero for the others."""
    dev, n = device(X), X.shape[0]
    n_searched = fit_tasks.size
    ind = reuse["ind"]  # (n, 2 x searched tasks)
    columns = {}
    for sigma in np.unique(sig_t):
        same = np.flatnonzero(np.isnan(sig_t) if np.isnan(sigma) else sig_t == sigma)
        if reuse["systems"] is not None:
            sigmas = reuse["sigmas"]
            si = int(np.flatnonzero(np.isnan(sigmas) | (sigmas == sigma))[0])
            G, KS, total = reuse["systems"][si]
            _, n_cls, ones = solved_columns(xp, ind, n_searched, est.rounding)
            H = G / total
            h = xp.reshape(
                class_outputs(xp, KS / total, n_searched, n_cls, ones), (KS.shape[0], -1)
            )
            scale = reuse["scale"]
        else:
            K = gram_of(est, X, None if np.isnan(sigma) else float(sigma))
            d, total = basis_weights(sample_weight, np.arange(n))
            if d is not None:
                d = xp.asarray(d, dtype=X.dtype, device=dev)
                Kw = K * d[None, :]
                W = xp.asarray(sample_weight, dtype=X.dtype, device=dev)
                H = (Kw * W[:, None]).T @ Kw / total
                h = (Kw * W[:, None]).T @ ind / total
            else:
                H, h = K.T @ K / n, K.T @ ind / n
            scale = None if d is None else to_numpy(d, xp)
        for lam in np.unique(lam_t[same]):
            tasks = same[lam_t[same] == lam]
            cols = np.stack([2 * tasks, 2 * tasks + 1], axis=1).ravel()
            a = solve_shifted(xp, H, xp.take(h, xp.asarray(cols, device=dev), axis=1), float(lam))
            if scale is not None:
                a = a * xp.asarray(scale, dtype=X.dtype, device=dev)[:, None]
            for q, t in enumerate(tasks):
                columns[int(fit_tasks[t])] = a[:, 2 * q : 2 * q + 2]
    b = next(iter(columns.values())).shape[0] if columns else n
    zero = xp.zeros((b, 2), dtype=X.dtype, device=dev)
    return xp.stack([columns.get(t, zero) for t in range(est.n_tasks_)], axis=1)


def gram_of(est, X, sigma, C=None):
    """The kernel of ``X`` to ``C`` (None: ``X``) at ``sigma`` for the model ``est``."""
    from ..kernels import gram

    return gram(est.kernel, X, C, sigma)


def tasks_proba(est, xp, X):
    """:meth:`kclf.LSPCCV._tasks_proba` on arrays of ``xp``: P(task positive | x)."""
    n, dev = X.shape[0], device(X)
    kernels = {}
    out = []
    for t in range(est.n_tasks_):
        const = est.task_constant_[t]
        if not np.isnan(const):
            out.append(xp.full((n,), float(const), dtype=X.dtype, device=dev))
            continue
        sigma = est.sigma_[t]
        key = "none" if np.isnan(sigma) else float(sigma)
        if key not in kernels:
            kernels[key] = (
                X
                if est.kernel == "precomputed"
                else gram_of(est, X, None if key == "none" else key, est.X_fit_)
            )
        F = kernels[key] @ effective_alpha(xp, est.alpha_[:, t, :], est.rounding)
        out.append(round_outputs(xp, F, est.rounding)[:, 1])
    return xp.stack(out, axis=1)


def log_odds(xp, P):
    """:func:`kclf._base.log_odds` in ``xp``: ``log p - log(1 - p)``, ``-+745`` at exactly
    0 or 1."""
    from .._base import CERTAIN_LOG_ODDS

    with np.errstate(divide="ignore"):
        L = xp.log(P) - xp.log1p(-P)
    return xp.clip(L, -CERTAIN_LOG_ODDS, CERTAIN_LOG_ODDS)
