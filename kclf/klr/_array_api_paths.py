"""Kernel logistic regression and its search in any array API namespace (private).

The same model as :mod:`kclf.klr._solver` (Roth, DAGM 2001: the penalised log-likelihood
``Phi`` and its Newton step, Eq. (9)), written against the array API standard so that it
runs on PyTorch or CuPy arrays on their device, or on ``array-api-strict`` arrays in the
tests, through the library's one Newton loop (:func:`kclf._newton.newton`, its step
halving and stopping rule).  NumPy inputs keep the NumPy path, whose LAPACK calls
(``dposv``, ``dsyrk``) and Hessian cache the standard cannot express.

* The dual step (:class:`DualProblem`) is the NumPy path's: ``(lam I + S K S) u = S K G``
  by conjugate gradients (:func:`kclf._newton.conjugate_gradients`), a column whose CG
  hits its cap continuing with direct solves (``xp.linalg.solve`` of the stacked
  matrices; the standard has no triangular solve, so no Cholesky solve either).
* The Nystroem step (:class:`PrimalProblem`) is the NumPy path's: Falkon's preconditioned
  Newton-CG (Meanti et al. 2020) on the dense design, ``(Phi^T W Phi + lam I) dw =
  Phi^T (y - pi) - lam w`` solved by conjugate gradients on Hessian products (``4 n m``
  flops each) preconditioned by the Hessian of an earlier iterate (:class:`HessianCache`,
  one eigendecomposition serving every lambda of a path), the Hessian formed from all
  rows (``2 n m^2``) only where no preconditioner is fresh enough; the same steps as the
  NumPy path, so the same iterates up to round-off.  The landmarks' candidate rows are
  found from a hash of the rows on their device (:func:`landmark_rows_of`), once per
  search, without copying the inputs to the host.
* The scores of the search are :class:`kclf.lspc._array_api_paths.FoldScores`', in the
  namespace; only the (n_lams, n_tasks) table comes back to the host.

Float32 inputs are fitted in float64 on their device (a ``UserWarning`` says so): the
Newton loop's ascent test and stopping rule ask for relative changes of ``Phi`` of 1e-12
and ``tol = 1e-6``, below or at float32's resolution of ``Phi``; measured, a float32 fit
stopped as converged far from the optimum (:class:`kclf.KernelLogisticRegression`,
"Array API").
"""

from __future__ import annotations

import numpy as np

from .._array_api import compute_dtype, device, to_numpy
from .._newton import NewtonProblem, conjugate_gradients, newton
from ..kernels import gram
from ._solver import (
    AUTO_CG_MIN_N,
    CG_TOL_FLOOR,
    CHOLESKY_BATCH_ENTRIES,
    landmark_rows,
)

# the seed of the row hash of landmark_rows_of (any: the rows chosen do not depend on it)
ROW_HASH_SEED = 0


def expit(xp, F):
    """``1 / (1 + exp(-F))`` (0 where ``exp(-F)`` overflows)."""
    return 1.0 / (1.0 + xp.exp(-F))


def _cols(xp, a, cols):
    """The columns ``cols`` (an index array of ``xp``) of ``a`` (last axis)."""
    return xp.take(a, cols, axis=a.ndim - 1)


def _index(xp, idx, like):
    """The NumPy indices ``idx`` as an index array of ``xp`` on ``like``'s device."""
    return xp.asarray(np.asarray(idx, dtype=np.int64), device=device(like))


def _assemble(xp, parts, where, T):
    """One (n, T) array from the column blocks ``parts`` placed at the NumPy column
    indices ``where`` (together a permutation of ``range(T)``; no fancy assignment)."""
    order = np.concatenate(where)
    return _cols(xp, xp.concat(parts, axis=1), _index(xp, np.argsort(order), parts[0]))


def loglik(xp, Y, F, weights):
    """``sum_i c_i [y_i f_i - log(1 + e^{f_i})]`` per column."""
    L = Y * F - xp.logaddexp(xp.zeros_like(F), F)
    return xp.sum(L if weights is None else weights * L, axis=0)


def _lam(xp, lam, T, like):
    """``(lam_np, lam_xp)``: one lambda per column, on the host and on ``like``'s device."""
    lam_np = np.broadcast_to(np.asarray(lam, dtype=float), (T,)).copy()
    return lam_np, xp.asarray(lam_np, dtype=like.dtype, device=device(like))


class LogisticProblem(NewtonProblem):
    """``Phi = sum_i c_i [y_i f_i - log(1 + e^{f_i})] - lam/2 penalty`` per column of
    ``Y``, the penalty ``alpha^T K alpha = sum(A * F)`` in the dual, ``||w||^2`` in the
    weights (:meth:`penalty`)."""

    def penalty(self, x, z):
        raise NotImplementedError

    def objective(self, x, z, cols):
        xp = self.xp
        fit = loglik(xp, _cols(xp, self.Y, cols), z, self.weights)
        return fit - 0.5 * _cols(xp, self.lam, cols) * self.penalty(x, z)


class DualProblem(LogisticProblem):
    """:class:`kclf.klr._solver.DualProblem` in ``xp`` for a kernel ``K`` (n, n) shared
    by the columns of ``Y`` (n, T): the step ``D = (G - S u) / lam`` with ``(lam I + S K
    S) u = S K G`` (that class's docstring), by CG or by direct solves, the CG tolerance
    tightened 1000-fold for a step that halving cannot make an ascent (:meth:`refine`).
    ``weights``: (n, 1) row weights of ``xp`` or None."""

    def __init__(self, xp, K, Y, lam, *, weights=None, solver="direct", cg_tol=1e-6):
        n, T = Y.shape
        self.xp, self.K, self.Y, self.weights = xp, K, Y, weights
        self.lam_np, self.lam = _lam(xp, lam, T, Y)
        self.cg_max_iter = max(2 * n, 100)
        self.ctol = np.full(T, float(cg_tol))
        self.direct = np.full(T, solver != "cg")

    def penalty(self, A, F):
        return self.xp.sum(A * F, axis=0)

    def direction(self, A, F, cols):
        xp, K = self.xp, self.K
        c = to_numpy(cols, xp)
        la = _cols(xp, self.lam, cols)
        P = expit(xp, F)
        D = P * (1.0 - P)
        G = _cols(xp, self.Y, cols) - P
        if self.weights is not None:
            D, G = self.weights * D, self.weights * G
        G = G - la * A
        S = xp.sqrt(D)
        rhs = S * (K @ G)
        parts, where = [], []
        cg = np.flatnonzero(~self.direct[c])
        if cg.size:
            cgx = _index(xp, cg, A)
            Sc, lc = _cols(xp, S, cgx), _cols(xp, la, cgx)

            def matvec(V, sub):
                s = _cols(xp, Sc, sub)
                return _cols(xp, lc, sub) * V + s * (K @ (s * V))

            tol = xp.asarray(self.ctol[c[cg]], dtype=A.dtype, device=device(A))
            bc = _cols(xp, rhs, cgx)
            U, _, ok = conjugate_gradients(matvec, bc, xp.zeros_like(bc), tol, self.cg_max_iter)
            ok = to_numpy(ok, xp)
            self.direct[c[cg[~ok]]] = True
            parts.append(_cols(xp, U, _index(xp, np.flatnonzero(ok), U)))
            where.append(cg[ok])
        d = np.flatnonzero(self.direct[c])
        if d.size:
            dx = _index(xp, d, A)
            parts.append(self._direct(_cols(xp, S, dx), _cols(xp, rhs, dx), self.lam_np[c[d]]))
            where.append(d)
        U = _assemble(xp, parts, where, c.size)
        dA = (G - S * U) / la
        return dA, K @ dA

    def _direct(self, S, rhs, lam):
        """``(lam_t I + S_t K S_t) u_t = rhs_t`` per column, stacked, at most
        ``CHOLESKY_BATCH_ENTRIES`` matrix entries at a time."""
        xp, K = self.xp, self.K
        n, T = rhs.shape
        eye = xp.eye(n, dtype=K.dtype, device=device(K))
        step = max(1, CHOLESKY_BATCH_ENTRIES // max(n * n, 1))
        out = []
        for lo in range(0, T, step):
            hi = min(T, lo + step)
            s = S[:, lo:hi].T  # (t, n)
            la = xp.asarray(lam[lo:hi], dtype=K.dtype, device=device(K))
            M = s[:, :, None] * K[None, :, :] * s[:, None, :] + la[:, None, None] * eye
            out.append(xp.linalg.solve(M, rhs[:, lo:hi].T[:, :, None])[:, :, 0].T)
        return xp.concat(out, axis=1)

    def refine(self, failed, cols):
        xp = self.xp
        c, bad = to_numpy(cols, xp), to_numpy(failed, xp)
        retry = bad & ~self.direct[c] & (self.ctol[c] > CG_TOL_FLOOR)
        self.ctol[c[retry]] = np.maximum(self.ctol[c[retry]] * 1e-3, CG_TOL_FLOOR)
        return xp.asarray(retry, device=device(failed))


class HessianCache:
    """:class:`kclf.klr._solver.HessianCache` in ``xp``: per column ``t`` of a primal fit
    on the design ``Phi`` (n, m), the Gram matrix ``Phi^T W Phi`` at some earlier iterate,
    kept as its eigendecomposition ``V diag(e) V^T`` (:meth:`refresh`), so that
    ``(G + lam I)^{-1} r = V (V^T r / (e + lam))`` for every ``lam`` of a lambda path
    costs two products of ``m^2`` and no new factorisation.  The standard has no
    triangular solve (the NumPy path's Cholesky solve); a Gram matrix is refreshed about
    1.4 times per lambda path where a factor is needed for every lambda (27 against 171 on
    ``bench_gpu.py --small``'s search), so one ``eigh`` per refresh costs less than an
    inverse or a solve per lambda.  Eigenvalues below 0 (round-off of a positive
    semi-definite matrix) count as 0."""

    def __init__(self, xp, Phi):
        self.xp, self.Phi, self.eigen = xp, Phi, {}

    def has(self, t):
        return t in self.eigen

    def refresh(self, t, d):
        """The Gram matrix of column ``t`` at the row weights ``d`` (n,)."""
        xp, Phi = self.xp, self.Phi
        e, V = xp.linalg.eigh(Phi.T @ (d[:, None] * Phi))
        self.eigen[t] = (xp.clip(e, 0.0, None), V)

    def solve(self, t, lam, r):
        """``(G_t + lam I)^{-1} r`` for the columns of ``r`` (m, k)."""
        e, V = self.eigen[t]
        return V @ ((V.T @ r) / (e + lam)[:, None])


class PrimalProblem(LogisticProblem):
    """kLOGREG in the weights ``w`` of a dense design ``Phi`` (n, m) of ``xp`` (the
    Nystroem features): ``Phi(w) = sum_i c_i [y_i f_i - log(1 + e^{f_i})] - lam/2
    ||w||^2``, ``f = Phi w``, by :class:`kclf.klr._solver.PrimalProblem`'s steps (Falkon's
    preconditioned Newton-CG): a column's first step, and a step whose CG does not reach
    the relative residual ``eta`` within ``cg_max_iter`` iterations, is the exact Newton
    step at a refreshed Gram matrix (:class:`HessianCache`, ``n m^2`` flops); every other
    step is conjugate gradients on Hessian products (``4 n m`` flops each, one matrix
    product for all running columns), preconditioned by the cached Hessian, started from
    the preconditioned gradient.  The same rule as the NumPy path: with ``cg_max_iter =
    6`` a step costs at most ``28 n m`` flops against the exact step's ``2 n m^2``, less
    from ``m = 15`` features on.  ``cache``: shared along a lambda path (its keys the
    columns of ``Y``)."""

    def __init__(self, xp, Phi, Y, lam, *, weights=None, cache=None, eta=0.1, cg_max_iter=6):
        self.xp, self.Phi, self.Y, self.weights = xp, Phi, Y, weights
        self.lam_np, self.lam = _lam(xp, lam, Y.shape[1], Y)
        self.cache = HessianCache(xp, Phi) if cache is None else cache
        self.eta, self.cg_max_iter = eta, cg_max_iter

    def penalty(self, W, F):
        return self.xp.sum(W * W, axis=0)

    def direction(self, W, F, cols):
        xp, Phi, cache = self.xp, self.Phi, self.cache
        c = to_numpy(cols, xp)
        lam = self.lam_np[c]
        P = expit(xp, F)
        D = P * (1.0 - P)
        R = _cols(xp, self.Y, cols) - P
        if self.weights is not None:
            D, R = self.weights * D, self.weights * R
        la = _cols(xp, self.lam, cols)
        G = Phi.T @ R - la * W
        exact = np.array([not cache.has(t) for t in c], dtype=bool)
        for k in np.flatnonzero(exact):
            cache.refresh(int(c[k]), D[:, k])

        def precondition(Rs, ks):
            """The cached Hessians' solves of the columns of ``Rs`` (those at positions
            ``ks``, NumPy, among ``cols``)."""
            if not len(ks):
                return Rs
            return xp.concat(
                [cache.solve(int(c[k]), float(lam[k]), Rs[:, j : j + 1]) for j, k in enumerate(ks)],
                axis=1,
            )

        parts_w, parts_f, where = [], [], []
        inexact = np.flatnonzero(~exact)
        if inexact.size:
            ix = _index(xp, inexact, W)
            Dc, lam_c, Gc = _cols(xp, D, ix), _cols(xp, la, ix), _cols(xp, G, ix)

            def matvec(V, sub):
                FV = Phi @ V
                return Phi.T @ (_cols(xp, Dc, sub) * FV) + _cols(xp, lam_c, sub) * V, FV

            dWi, dFi, _, ok = conjugate_gradients(
                matvec,
                Gc,
                precondition(Gc, inexact),
                self.eta,
                self.cg_max_iter,
                lambda Rs, sub: precondition(Rs, inexact[to_numpy(sub, xp)]),
                track=True,
            )
            ok = to_numpy(ok, xp)
            for k in inexact[~ok]:  # the preconditioner has gone stale: refresh it
                cache.refresh(int(c[k]), D[:, k])
                exact[k] = True
            if ok.any():
                okx = _index(xp, np.flatnonzero(ok), dWi)
                parts_w.append(_cols(xp, dWi, okx))
                parts_f.append(_cols(xp, dFi, okx))
                where.append(inexact[ok])
        ex = np.flatnonzero(exact)
        if ex.size:
            dWe = precondition(_cols(xp, G, _index(xp, ex, G)), ex)
            parts_w.append(dWe)
            parts_f.append(Phi @ dWe)
            where.append(ex)
        return _assemble(xp, parts_w, where, c.size), _assemble(xp, parts_f, where, c.size)


def irls(xp, K, Y, lam, tol, max_iter, cg_tol, solver, weights=None):
    """:func:`kclf.klr._solver.irls` in ``xp`` (a shared kernel): ``(A, n_iter,
    converged)``, the last two NumPy."""
    if solver == "auto":
        solver = "direct" if Y.shape[0] < AUTO_CG_MIN_N else "cg"
    problem = DualProblem(xp, K, Y, lam, weights=weights, solver=solver, cg_tol=cg_tol)
    A = xp.zeros_like(Y)
    r = newton(problem, A, K @ A, tol=tol, max_iter=max_iter)
    return r.x, to_numpy(r.n_iter, xp), to_numpy(r.converged, xp)


def landmark_rows_of(xp, X, sample_weight=None):
    """:func:`kclf.klr._solver.landmark_rows` of ``X`` (n, d) of ``xp`` (the same rows, so
    the same landmarks for the same ``random_state``) without copying ``X`` to the host:
    a hash per row is computed on its device and only the ``n`` hashes come back, then
    the rows whose hash is shared (equal rows, or a collision of distinct ones: rare) or
    not finite are compared exactly on the host (:func:`rows_by_hash`).

    The hash is ``h_i = sum_j x_ij r_j`` accumulated one column at a time (``r_j`` drawn
    in ``[0.5, 1) / d``): elementwise IEEE products and sums are correctly rounded, so
    equal rows (``-0.0 == 0.0`` included, as :func:`numpy.unique` compares them) get equal
    hashes bit for bit on any device, where a matrix product's blocking could round them
    apart; with ``|r_j| < 1 / d`` no partial sum of finite inputs overflows."""
    n, d = X.shape
    r = np.random.default_rng(ROW_HASH_SEED).uniform(0.5, 1.0, d) / max(d, 1)
    h = xp.zeros(n, dtype=X.dtype, device=device(X))
    for j in range(d):
        h = h + X[:, j] * float(r[j])

    def read(idx):
        return to_numpy(xp.take(X, _index(xp, idx, X), axis=0), xp)

    return rows_by_hash(to_numpy(h, xp), read, sample_weight)


def rows_by_hash(h, read, sample_weight=None):
    """:func:`kclf.klr._solver.landmark_rows` given a hash ``h`` (n,) of the rows (equal
    rows have equal hashes) and ``read(idx)``, the rows ``idx`` (sorted) on the host: a
    row of positive weight whose hash no other such row has is distinct from all of
    them (its own first occurrence); the rest are resolved by the host function on their
    rows alone (an equal row has the same hash, so it is among them)."""
    n = h.size
    cand = np.arange(n) if sample_weight is None else np.flatnonzero(sample_weight > 0)
    hc = h[cand]
    ok = np.isfinite(hc)
    _, inv, counts = np.unique(hc[ok], return_inverse=True, return_counts=True)
    alone = counts[inv.ravel()] == 1
    shared = np.sort(np.concatenate([cand[ok][~alone], cand[~ok]]))
    firsts = shared[landmark_rows(read(shared))] if shared.size else shared
    return np.sort(np.concatenate([cand[ok][alone], firsts]))


def nystroem_map_of_rows(xp, X, kernel, sigma, n_components, random_state, rows, intercept):
    """``(offset, scale, nystroem, Phi)``: :func:`kclf.klr._solver.nystroem_map` and
    :func:`kclf.klr._solver.nystroem_design` in ``xp`` (scikit-learn's ``Nystroem`` fitted
    on arrays of ``xp``, the same landmarks drawn from ``rows``, :func:`landmark_rows_of`),
    ``Phi`` the dense design (n, m [+ 1])."""
    import sklearn
    from sklearn.kernel_approximation import Nystroem

    from ..kernels import _column_median

    Xr = xp.take(X, _index(xp, rows, X), axis=0)
    if kernel == "rbf":
        scale, kw = float(sigma), {"kernel": "rbf", "gamma": 0.5}
        offset = _column_median(Xr, xp, True)
    else:
        offset, scale, kw = None, 1.0, {"kernel": kernel}
    m = min(n_components, rows.size)
    nystroem = Nystroem(n_components=m, random_state=random_state, **kw)
    with sklearn.config_context(array_api_dispatch=True):  # also on a search's threads
        nystroem.fit(inputs(Xr, offset, scale))
        Phi = design(xp, X, offset, scale, nystroem, intercept)
    return offset, scale, nystroem, Phi


def inputs(X, offset, scale):
    """``(X - offset) / scale``."""
    return (X if offset is None else X - offset) / scale


def design(xp, X, offset, scale, nystroem, intercept):
    """The dense Nystroem design of ``X`` (with a last column of ones if ``intercept``)."""
    import sklearn
    from sklearn.metrics.pairwise import pairwise_kernels

    kw = {"gamma": nystroem.gamma} if nystroem.kernel == "rbf" else {}
    with sklearn.config_context(array_api_dispatch=True):
        C = pairwise_kernels(
            inputs(X, offset, scale), nystroem.components_, metric=nystroem.kernel, **kw
        )
    Phi = finite(xp, C @ nystroem.normalization_.T)
    if intercept:
        Phi = xp.concat(
            [Phi, xp.ones((Phi.shape[0], 1), dtype=Phi.dtype, device=device(Phi))], axis=1
        )
    return Phi


def finite(xp, K):
    """``K``, or the NumPy path's one-line ``ValueError`` where it is not finite."""
    if not bool(xp.all(xp.isfinite(K))):
        from ._solver import finite_kernel

        finite_kernel(np.array([np.inf]))
    return K


def unsupported(estimator):
    """``ValueError`` naming the first parameter of a kernel logistic regression (or its
    search) that the array API path does not implement: a callable kernel."""
    if callable(estimator.kernel):
        raise ValueError(
            f"{type(estimator).__name__}: a callable kernel is not supported for array API "
            "inputs (array_api_dispatch=True); pass NumPy arrays for it"
        )


def supported(estimator):
    """Whether the array API path implements the parameters of ``estimator`` (its tags'
    ``array_api_support``)."""
    return not callable(estimator.kernel)


def fit_klr(est, xp, X, y, sample_weight):
    """:meth:`kclf.KernelLogisticRegression.fit` on arrays of ``xp``: binary or
    one-vs-rest, exact or Nystroem, every array on their device; returns ``(n_iter_`` of
    ``xp``, the converged flags (NumPy))."""
    from .._validation import check_precomputed, class_labels, validate_data
    from ..lspc._array_api_paths import host_weights

    X, y = validate_data(est, X, y, dtype=[xp.float64, xp.float32])
    if est.kernel == "precomputed":
        check_precomputed(X)
    classes, yi = class_labels(to_numpy(y, xp), "KernelLogisticRegression")
    c = classes.size
    unsupported(est)
    X = compute_dtype(est, xp, X)
    dev = device(X)
    sw = None if sample_weight is None else host_weights(sample_weight, X.shape[0])
    est.sigma_ = est._fit_width(X, sw)
    Y_np = (yi == 1)[:, None].astype(float) if c == 2 else np.eye(c)[yi]
    Y = xp.asarray(Y_np, dtype=X.dtype, device=dev)
    w = None if sw is None else xp.asarray(sw[:, None], dtype=X.dtype, device=dev)
    if est.n_components is not None:
        est.nystroem_offset_, est.nystroem_scale_, est.nystroem_, Phi = nystroem_map_of_rows(
            xp,
            X,
            est.kernel,
            est.sigma_,
            est.n_components,
            est.random_state,
            landmark_rows_of(xp, X, sw),
            est.fit_intercept,
        )
        problem = PrimalProblem(xp, Phi, Y, float(est.lam), weights=w)
        W = xp.zeros((Phi.shape[1], c if c > 2 else 1), dtype=X.dtype, device=dev)
        r = newton(problem, W, Phi @ W, tol=est.tol, max_iter=est.max_iter)
        est.coef_ = r.x[:, 0] if c == 2 else r.x
        n_iter, conv = to_numpy(r.n_iter, xp), to_numpy(r.converged, xp)
    else:
        K = finite(xp, gram(est.kernel, X, None, est.sigma_))
        if est.fit_intercept:
            K = K + 1.0
        A, n_iter, conv = irls(
            xp, K, Y, float(est.lam), est.tol, est.max_iter, est.cg_tol, est.solver, w
        )
        est.dual_coef_ = A[:, 0] if c == 2 else A
        est.intercept_ = xp.sum(est.dual_coef_, axis=0) * float(est.fit_intercept)
        est.X_fit_ = X if est.kernel == "precomputed" else xp.asarray(X, copy=True)
    est.classes_ = xp.asarray(classes, device=dev)
    return xp.asarray(n_iter, device=dev), conv


def raw(est, xp, X):
    """The latent function ``f`` of test inputs ``X`` of ``xp`` (in the fitted
    coefficients' dtype, on their device)."""
    coef = est.coef_ if est.n_components is not None else est.dual_coef_
    X = xp.astype(X, coef.dtype)
    if est.n_components is not None:
        Phi = design(
            xp, X, est.nystroem_offset_, est.nystroem_scale_, est.nystroem_, est.fit_intercept
        )
        return Phi @ est.coef_
    K = X if est.kernel == "precomputed" else gram(est.kernel, X, est.X_fit_, est.sigma_)
    return finite(xp, K) @ est.dual_coef_ + est.intercept_


def class_probabilities(xp, F, dtype):
    """Eq. (2)'s probabilities of the latent ``F`` (binary: two columns; one-vs-rest:
    normalised), in ``dtype``."""
    P = expit(xp, F)
    if F.ndim == 1:
        P = xp.stack([1.0 - P, P], axis=1)
    else:
        P = P / xp.sum(P, axis=1, keepdims=True)
    return xp.astype(P, dtype)


def _dual_path(paths, xp, K, trx, vax, Ytr, lams, conv, w_tr):
    """Every (task, lambda) of a fold by one IRLS call: (n_va, n_lams, T)."""
    T, L = Ytr.shape[1], lams.size
    Ktr = xp.take(xp.take(K, trx, axis=0), trx, axis=1)
    if paths.fit_intercept:
        Ktr = Ktr + 1.0
    # columns task-major, as the NumPy path's np.repeat(Ytr, L, axis=1)
    reps = _index(xp, np.repeat(np.arange(T), L), Ytr)
    A, _, converged = irls(
        xp,
        Ktr,
        xp.take(Ytr, reps, axis=1),
        np.tile(lams, T),
        paths.tol,
        paths.max_iter,
        paths.cg_tol,
        paths.solver,
        w_tr,
    )
    conv.append(converged)
    F = xp.take(xp.take(K, vax, axis=0), trx, axis=1) @ A
    if paths.fit_intercept:
        F = F + xp.sum(A, axis=0)
    P = xp.reshape(expit(xp, F), (F.shape[0], T, L))
    return xp.permute_dims(P, (0, 2, 1))


def _primal_path(paths, xp, Phi, trx, vax, Ytr, lams, conv, w_tr, problem=PrimalProblem):
    """The lambdas from the largest to the smallest, each fit (all tasks at once)
    started from the previous one's solution and preconditioned by its Hessians
    (:class:`HessianCache`): (n_va, n_lams, T).  ``problem``: the Newton problem's class
    (:class:`kclf.klr._array_api_pairs.PairColumnsProblem` for pairs: ``w_tr`` then one
    column of row weights per column of ``Ytr``)."""
    train, valid = xp.take(Phi, trx, axis=0), xp.take(Phi, vax, axis=0)
    cache = HessianCache(xp, train)
    W = xp.zeros((Phi.shape[1], Ytr.shape[1]), dtype=Phi.dtype, device=device(Phi))
    F = train @ W
    out = [None] * lams.size
    for li in np.argsort(-lams, kind="stable"):
        problem_li = problem(xp, train, Ytr, float(lams[li]), weights=w_tr, cache=cache)
        r = newton(problem_li, W, F, tol=paths.tol, max_iter=paths.max_iter)
        W, F = r.x, r.z
        conv.append(to_numpy(r.converged, xp))
        out[li] = expit(xp, valid @ W)
    return xp.stack(out, axis=1)
