"""The numerics of kernel logistic regression (kLOGREG) and its search (private).

Roth, "Probabilistic discriminative kernel classifiers for multi-class problems"
(DAGM 2001); equation numbers refer to that paper, the objective ``Phi`` is the one of
:class:`kclf.KernelLogisticRegression`.  The IRLS solvers of Eq. (9) know nothing of
estimators: :func:`irls` fits many 0/1 columns sharing one kernel (conjugate gradients or
direct steps), :func:`irls_stacked` many small problems with their own kernels (pairwise
coupling's pairs) by stacked LAPACK solves, :func:`irls_primal` the low-rank (Nystroem)
form in the weights, whose features :func:`nystroem_map` and :func:`nystroem_design`
give.  :class:`IRLSPaths` is :class:`kclf.KernelLogisticRegressionCV`'s search: every
lambda and task of a fold by one solver call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from scipy.special import expit
from sklearn.kernel_approximation import Nystroem

from .._scoring import score_proba
from ..coupling import couple
from ..kernels import gram

# solver="auto" uses CG above this many training samples, a direct solve below
AUTO_CG_MIN_N = 128
# smallest relative CG residual asked for when a step has to be recomputed
CG_TOL_FLOOR = 1e-14
# memory cap (float64 entries) for one batch of stacked direct-solve matrices
CHOLESKY_BATCH_ENTRIES = 2**24


def penalised_loglik(F, A, Y, lam):
    """``Phi`` per column: ``sum_i [y_i f_i - log(1 + e^{f_i})] - lam/2 alpha^T K alpha``,
    where ``F = K A`` so ``alpha^T K alpha = sum(A * F)``."""
    return np.sum(Y * F - np.logaddexp(0.0, F), axis=0) - 0.5 * lam * np.sum(A * F, axis=0)


def batched_cg(matvec, B, X0, tol, max_iter):
    """Conjugate gradients for ``T`` independent SPD systems ``A_t x_t = b_t`` at once.

    ``matvec(V, cols)`` returns ``[A_t v_t]`` for the columns ``cols`` of ``V``; the
    products of all columns still running are formed together, so a shared matrix is
    applied as one matrix-matrix product.  A column stops when
    ``||b_t - A_t x_t|| <= tol_t ||b_t||`` (``tol`` a scalar or one per column).
    Returns ``(X, n_iterations, converged)``, ``converged`` a boolean per column (False
    where ``max_iter`` was reached first).
    """
    X = np.array(X0, dtype=float, copy=True)
    all_cols = np.arange(B.shape[1])
    R = B - matvec(X, all_cols)
    thresh = (np.asarray(tol) * np.linalg.norm(B, axis=0)) ** 2
    rr = np.einsum("ij,ij->j", R, R)
    P = R.copy()
    active = rr > thresh
    it = 0
    while active.any() and it < max_iter:
        a = np.flatnonzero(active)
        Pa = P[:, a]
        AP = matvec(Pa, a)
        step = rr[a] / np.einsum("ij,ij->j", Pa, AP)
        X[:, a] += step * Pa
        Ra = R[:, a] - step * AP
        rr_new = np.einsum("ij,ij->j", Ra, Ra)
        R[:, a] = Ra
        P[:, a] = Ra + (rr_new / rr[a]) * Pa
        rr[a] = rr_new
        active[a] = rr_new > thresh[a]
        it += 1
    return X, it, ~active


def _direct_solve(K, S, rhs, lam):
    """Solve ``(lam_t I + S_t K S_t) v_t = rhs_t`` per column by stacked LAPACK solves."""
    n, T = rhs.shape
    out = np.empty_like(rhs)
    step = max(1, CHOLESKY_BATCH_ENTRIES // max(n * n, 1))
    eye = np.eye(n)
    for lo in range(0, T, step):
        sl = slice(lo, min(T, lo + step))
        s = S[:, sl].T
        M = s[:, :, None] * K[None] * s[:, None, :]
        M += lam[sl, None, None] * eye
        out[:, sl] = np.linalg.solve(M, rhs[:, sl].T[:, :, None])[:, :, 0].T
    return out


def irls(
    K,
    Y,
    lam,
    tol=1e-6,
    max_iter=100,
    cg_tol=1e-6,
    solver="auto",
    A0=None,
    cg_max_iter=None,
):
    """Fit kLOGREG for every column of ``Y`` (n, T) by IRLS, Eq. (9).

    Each step solves Eq. (9), ``(K + lam W^{-1}) alpha_new = K alpha + e`` with
    ``e = (y - pi) / W``, in the equivalent form that needs no ``W^{-1}`` (the guard for
    ``W -> 0``: confidently fitted points have ``W_ii = pi_i (1 - pi_i) -> 0``).  With
    ``b = W f + (y - pi)`` and ``S = W^{1/2}``,

        (lam I + S K S) v = S K b,     alpha_new = (b - S v) / lam,

    which follows from ``(WK + lam I) alpha_new = b`` (Eq. 9 multiplied by ``W``) and
    ``(WK + lam I)^{-1} = (I - S (lam I + S K S)^{-1} S K) / lam``.  The matrix
    ``lam I + S K S`` is symmetric with eigenvalues in ``[lam, lam + ||K|| / 4]``.  It is
    solved by conjugate gradients warm-started from the previous step's ``v``
    (``solver="cg"``; a step that fails to raise ``Phi`` is recomputed with a 1000 times
    smaller CG tolerance, down to 1e-14), or by a dense LAPACK solve (``"direct"``;
    ``"auto"`` picks it for n < 128, where it is exact and cheaper than CG's Python
    loop).  CG needs about ``sqrt(kappa)`` iterations, ``kappa`` up to
    ``1 + ||K|| / (4 lam)``: at small ``lam`` (e.g. 1e-7 at n = 300, ``kappa ~ 1e7``) it
    cannot reach ``cg_tol`` within ``cg_max_iter``, and an inexact step stalls IRLS far
    from the optimum.  A column whose CG stops at the cap is therefore solved by the
    direct solver, for that step and every later one.  (Jacobi preconditioning was
    measured to double CG's iterations here: the spread comes from ``K``'s spectrum,
    not from the diagonal.)  A step that lowers ``Phi`` is halved (at most 30 times).
    A column stops when the relative change of ``Phi`` is at most ``tol``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric positive semi-definite kernel (with the intercept's ``+1`` if wanted).
    Y : ndarray of shape (n, T)
        0/1 targets, one column per problem.
    lam : float or ndarray of shape (T,)
        Regularisation per column.
    A0 : ndarray of shape (n, T) or None
        Starting ``alpha`` (warm start), default 0.

    Returns
    -------
    A : ndarray of shape (n, T)
    n_iter : ndarray of shape (T,)
        IRLS steps per column.
    converged : ndarray of shape (T,) of bool
    """
    n, T = Y.shape
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (T,)).copy()
    if solver == "auto":
        solver = "direct" if n < AUTO_CG_MIN_N else "cg"
    cg_max_iter = max(2 * n, 100) if cg_max_iter is None else cg_max_iter
    A = np.zeros((n, T)) if A0 is None else np.array(A0, dtype=float, copy=True)
    F = K @ A
    obj = penalised_loglik(F, A, Y, lam)
    ctol = np.full(T, float(cg_tol))
    # columns solved by the direct solver (all of them, or those whose CG hit the cap)
    direct = np.full(T, solver != "cg")
    n_iter = np.zeros(T, dtype=int)
    converged = np.zeros(T, dtype=bool)
    active = np.ones(T, dtype=bool)
    for _ in range(max_iter):
        a = np.flatnonzero(active)
        if a.size == 0:
            break
        Fa, Ya, la = F[:, a], Y[:, a], lam[a]
        Pa = expit(Fa)
        Wa = Pa * (1.0 - Pa)
        S = np.sqrt(Wa)
        A_old, F_old, obj_old = A[:, a], F[:, a], obj[a]
        # the step D = alpha_new - alpha solves (lam I + W K) D = G, G = y - pi - lam alpha
        # (the gradient of Phi is K G): D = (G - S u) / lam with (lam I + S K S) u = S K G
        G = Ya - Pa - la * A_old
        rhs = S * (K @ G)
        U = np.zeros_like(rhs)
        cg = np.flatnonzero(~direct[a])
        if cg.size:

            def matvec(Vc, cols, S=S[:, cg], la=la[cg]):
                s = S[:, cols]
                return la[cols] * Vc + s * (K @ (s * Vc))

            U[:, cg], _, ok = batched_cg(matvec, rhs[:, cg], U[:, cg], ctol[a[cg]], cg_max_iter)
            direct[a[cg[~ok]]] = True
        d = np.flatnonzero(direct[a])
        if d.size:
            U[:, d] = _direct_solve(K, S[:, d], rhs[:, d], la[d])
        A_new = A_old + (G - S * U) / la
        F_new = K @ A_new
        obj_new = penalised_loglik(F_new, A_new, Ya, la)
        bad = obj_new < obj_old - 1e-12 * np.abs(obj_old)
        for _ in range(30):
            if not bad.any():
                break
            b = np.flatnonzero(bad)
            A_new[:, b] = 0.5 * (A_new[:, b] + A_old[:, b])
            F_new[:, b] = 0.5 * (F_new[:, b] + F_old[:, b])
            obj_new[b] = penalised_loglik(F_new[:, b], A_new[:, b], Ya[:, b], la[b])
            bad[b] = obj_new[b] < obj_old[b] - 1e-12 * np.abs(obj_old[b])
        keep = ~bad
        A[:, a[keep]] = A_new[:, keep]
        F[:, a[keep]] = F_new[:, keep]
        n_iter[a] += 1
        change = np.abs(obj_new - obj_old) / np.maximum(np.abs(obj_new), 1e-300)
        converged[a] = keep & (change <= tol)
        obj[a[keep]] = obj_new[keep]
        # an inexact CG step that cannot be improved by halving: retry it more exactly
        retry = bad & ~direct[a] & (ctol[a] > CG_TOL_FLOOR)
        ctol[a[retry]] = np.maximum(ctol[a[retry]] * 1e-3, CG_TOL_FLOOR)
        active[a[converged[a] | (bad & ~retry)]] = False
    return A, n_iter, converged


def _spd_solve_stack(M, B):
    """``M[p]^{-1} B[p]`` for a stack of symmetric positive definite matrices: one
    LAPACK ``dposv`` (Cholesky) per matrix, half the flops of the batched LU of
    ``np.linalg.solve``; a matrix whose factorisation fails (not positive
    definite in floating point) is solved by LU."""
    X = np.array(B, dtype=float, copy=True)
    for p in range(M.shape[0]):
        # M[p] is symmetric, so its transpose is the Fortran-ordered view LAPACK takes
        _, x, info = scipy.linalg.lapack.dposv(M[p].T, X[p], overwrite_a=0, overwrite_b=0)
        X[p] = x if info == 0 else np.linalg.solve(M[p], B[p])
    return X


def irls_stacked(K, Y, lam, tol=1e-6, max_iter=100):
    """:func:`irls` with ``solver="direct"`` for ``P`` problems, each with its own kernel.

    The same IRLS steps (Eq. 9 in the form ``(lam I + S K S) v = S K b``), step halving
    and stopping rule as :func:`irls`, but every step of all ``P`` problems is one
    stacked LAPACK solve and a few stacked matrix products: for many small problems
    (the ``c (c - 1) / 2`` pairs of pairwise coupling) there is no per-problem Python
    overhead.

    Parameters
    ----------
    K : ndarray of shape (P, n, n)
        One symmetric positive semi-definite kernel per problem.
    Y : ndarray of shape (P, n)
        0/1 targets.
    lam : float or ndarray of shape (P,)

    Returns
    -------
    A : ndarray of shape (P, n)
    n_iter : ndarray of shape (P,)
    converged : ndarray of shape (P,) of bool
    """
    P, n = Y.shape
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (P,)).copy()
    M_buf = np.empty_like(K)

    def kmul(Ks, V):
        return np.matmul(Ks, V[:, :, None])[:, :, 0]

    def objective(F, A, Y, la):
        return np.sum(Y * F - np.logaddexp(0.0, F), axis=1) - 0.5 * la * np.sum(A * F, axis=1)

    A = np.zeros((P, n))
    F = np.zeros((P, n))
    obj = objective(F, A, Y, lam)
    n_iter = np.zeros(P, dtype=int)
    converged = np.zeros(P, dtype=bool)
    active = np.ones(P, dtype=bool)
    for _ in range(max_iter):
        a = np.flatnonzero(active)
        if a.size == 0:
            break
        Ka = K if a.size == P else K[a]
        Ya, la = Y[a], lam[a]
        A_old, F_old, obj_old = A[a], F[a], obj[a]
        Pa = expit(F_old)
        S = np.sqrt(Pa * (1.0 - Pa))
        G = Ya - Pa - la[:, None] * A_old
        rhs = S * kmul(Ka, G)
        M = np.einsum("pi,pij,pj->pij", S, Ka, S, out=M_buf[: a.size])
        M.reshape(a.size, -1)[:, :: n + 1] += la[:, None]
        U = _spd_solve_stack(M, rhs)
        A_new = A_old + (G - S * U) / la[:, None]
        F_new = kmul(Ka, A_new)
        obj_new = objective(F_new, A_new, Ya, la)
        bad = obj_new < obj_old - 1e-12 * np.abs(obj_old)
        for _ in range(30):
            if not bad.any():
                break
            b = np.flatnonzero(bad)
            A_new[b] = 0.5 * (A_new[b] + A_old[b])
            F_new[b] = 0.5 * (F_new[b] + F_old[b])
            obj_new[b] = objective(F_new[b], A_new[b], Ya[b], la[b])
            bad[b] = obj_new[b] < obj_old[b] - 1e-12 * np.abs(obj_old[b])
        keep = ~bad
        A[a[keep]] = A_new[keep]
        F[a[keep]] = F_new[keep]
        n_iter[a] += 1
        change = np.abs(obj_new - obj_old) / np.maximum(np.abs(obj_new), 1e-300)
        converged[a] = keep & (change <= tol)
        obj[a[keep]] = obj_new[keep]
        active[a[converged[a] | bad]] = False
    return A, n_iter, converged


def irls_primal(Phi, Y, lam, tol=1e-6, max_iter=100):
    """kLOGREG with the low-rank kernel ``K ~ Phi Phi^T`` (Nystroem features).

    The same objective in the weights ``w = Phi^T alpha`` (Eq. 6 with design matrix
    ``Phi``): each step solves ``(Phi^T W Phi + lam I) w = Phi^T W q`` of size
    ``n_components`` by Cholesky.  Returns ``(Wt, n_iter, converged)``, ``Wt`` of shape
    (n_components, T).
    """
    n, m = Phi.shape
    T = Y.shape[1]
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (T,))
    Wt = np.zeros((m, T))
    n_iter = np.zeros(T, dtype=int)
    converged = np.zeros(T, dtype=bool)
    for t in range(T):
        w = np.zeros(m)
        f = np.zeros(n)
        obj = -n * np.log(2.0)  # Phi at w = 0
        for _ in range(max_iter):
            p = expit(f)
            W = p * (1.0 - p)
            H = (Phi * W[:, None]).T @ Phi
            H[np.diag_indices(m)] += lam[t]
            g = Phi.T @ (Y[:, t] - p) - lam[t] * w
            step = scipy.linalg.cho_solve(scipy.linalg.cho_factor(H), g)
            size = 1.0
            for _ in range(30):
                w_new = w + size * step
                f_new = Phi @ w_new
                obj_new = np.sum(Y[:, t] * f_new - np.logaddexp(0.0, f_new)) - 0.5 * lam[t] * (
                    w_new @ w_new
                )
                if obj_new >= obj - 1e-12 * abs(obj):
                    break
                size *= 0.5
            n_iter[t] += 1
            change = abs(obj_new - obj) / max(abs(obj_new), 1e-300)
            w, f, obj = w_new, f_new, obj_new
            if change <= tol:
                converged[t] = True
                break
        Wt[:, t] = w
    return Wt, n_iter, converged


def nystroem_map(X, kernel, sigma, n_components, random_state):
    """``(offset, nystroem)``: the Nystroem feature map ``K ~ Phi Phi^T`` of rank
    ``min(n_components, n)`` fitted on ``X - offset``, its landmarks drawn with
    ``random_state``; ``sigma`` the Gaussian width (rbf only).

    scikit-learn's Gaussian kernel expands ``||x||^2 + ||y||^2 - 2 x.y``, which loses all
    precision on uncentred inputs; the kernel is translation invariant, so the inputs are
    centred at their coordinate-wise median first (``offset``; None for other kernels).
    """
    if kernel == "rbf":
        kw = {"kernel": "rbf", "gamma": 1.0 / (2.0 * sigma**2)}
    else:
        kw = {"kernel": kernel}
    offset = np.median(X, axis=0) if kernel == "rbf" else None
    nystroem = Nystroem(n_components=min(n_components, X.shape[0]), random_state=random_state, **kw)
    nystroem.fit(X if offset is None else X - offset)
    return offset, nystroem


def nystroem_design(X, offset, nystroem, fit_intercept):
    """The design matrix ``Phi`` of :func:`nystroem_map`'s features (n, m), with a last
    column of ones for the intercept (footnote 3) if ``fit_intercept``."""
    Phi = nystroem.transform(X if offset is None else X - offset)
    if fit_intercept:
        Phi = np.hstack([Phi, np.ones((Phi.shape[0], 1))])
    return Phi


@dataclass(frozen=True)
class IRLSPaths:
    """:class:`kclf.KernelLogisticRegressionCV`'s search over a sigma x lambda grid for
    the model of these settings: per (sigma, fold) the kernel (or the Nystroem features,
    ``n_components``) once, then every lambda and task (or one-vs-rest class) by one IRLS
    call; per pair for pairwise coupling."""

    kernel: object
    multi_class: str
    scoring: str
    tol: float
    max_iter: int
    cg_tol: float
    solver: str
    fit_intercept: bool
    n_components: int | None = None
    random_state: object = None

    def irls(self, K, Y, lam, conv):
        """:func:`irls` at these solver settings; appends the fits' converged flags to
        ``conv``."""
        A, _, converged = irls(K, Y, lam, self.tol, self.max_iter, self.cg_tol, self.solver)
        conv.append(converged)
        return A

    def features(self, X, sigma):
        """Nystroem features of all of ``X`` (with the intercept's column), as the final
        ``KernelLogisticRegression(n_components, random_state)`` fitted on ``X`` makes."""
        sigma = None if np.isnan(sigma) else float(sigma)
        offset, nystroem = nystroem_map(X, self.kernel, sigma, self.n_components, self.random_state)
        return nystroem_design(X, offset, nystroem, self.fit_intercept)

    def primal_path(self, Phi, tr, va, Ytr, lams, conv):
        """:meth:`binary_path` in Nystroem features ``Phi`` (n, m)."""
        T, L = Ytr.shape[1], lams.size
        W, _, converged = irls_primal(
            Phi[tr], np.repeat(Ytr, L, axis=1), np.tile(lams, T), self.tol, self.max_iter
        )
        conv.append(converged)
        return expit(Phi[va] @ W).reshape(va.size, T, L).transpose(2, 0, 1)

    def binary_path(self, K, tr, va, Ytr, lams, conv):
        """P(positive) on the validation fold, shape (n_lams, n_va, n_tasks)."""
        if self.n_components is not None:
            return self.primal_path(K, tr, va, Ytr, lams, conv)
        T, L = Ytr.shape[1], lams.size
        Ktr = K[np.ix_(tr, tr)]
        if self.fit_intercept:
            Ktr += 1.0
        A = self.irls(Ktr, np.repeat(Ytr, L, axis=1), np.tile(lams, T), conv)
        F = K[np.ix_(va, tr)] @ A
        if self.fit_intercept:
            F += A.sum(axis=0)
        return expit(F).reshape(va.size, T, L).transpose(2, 0, 1)

    def pairwise_path(self, K, tr, va, yi_tr, c, lams, conv):
        """Coupled class posteriors on the validation fold, shape (n_lams, n_va, c)."""
        L = lams.size
        R = np.full((L, va.size, c, c), 0.5)
        counts = np.bincount(yi_tr, minlength=c)
        for i in range(c):
            for j in range(i + 1, c):
                idx = tr[(yi_tr == i) | (yi_tr == j)]
                y = (yi_tr[(yi_tr == i) | (yi_tr == j)] == i).astype(float)[:, None]
                Kp = K[np.ix_(idx, idx)]
                if self.fit_intercept:
                    Kp += 1.0
                A = self.irls(Kp, np.repeat(y, L, axis=1), lams, conv)
                F = K[np.ix_(va, idx)] @ A
                if self.fit_intercept:
                    F += A.sum(axis=0)
                r = expit(F).T
                R[:, :, i, j] = r
                R[:, :, j, i] = 1.0 - r
        N = counts[:, None] + counts[None, :]
        return np.stack([couple(R[li], N) for li in range(L)])

    def search(self, X, y, labels, folds, table, classes, naive_path):
        """Add every (task, sigma, lambda)'s fold scores to ``table`` by the warm paths
        above (``classes``: the labels of ``y``; ``naive_path(X, sigma, tr, va, y, lams,
        conv)`` the posteriors of one fit per lambda, for pairwise coupling in Nystroem
        features); returns the converged flags of every IRLS fit of the search."""
        sigmas, lams = table.sigmas, table.lams
        c, n_tasks = classes.size, labels.shape[1]
        conv = []  # converged flags of every IRLS fit of the search
        naive = self.n_components is not None and c > 2 and self.multi_class == "pairwise"
        if c > 2 and self.multi_class == "pairwise" and not naive:
            for k, (tr, _) in enumerate(folds):
                missing = np.setdiff1d(np.arange(c), labels[tr, 0])
                if missing.size:
                    raise ValueError(
                        f"KernelLogisticRegressionCV: the training part of fold {k} holds no "
                        f"example of class {classes[missing[0]].item()!r}; pairwise coupling "
                        "needs every class in every fold (give at least cv examples of each "
                        "class, or multi_class='ovr')"
                    )
        for si, sigma in enumerate(sigmas if n_tasks else ()):
            if naive:
                K = None
            elif self.n_components is not None:
                K = self.features(X, sigma)  # the design matrix Phi, not a kernel
            else:
                K = gram(self.kernel, X, None, None if np.isnan(sigma) else sigma)
            for tr, va in folds:
                if naive:
                    Ps = [naive_path(X, sigma, tr, va, y, lams, conv)]
                elif c == 2:
                    P1 = self.binary_path(K, tr, va, labels[tr].astype(float), lams, conv)
                    Ps = [np.stack([1.0 - P1[..., t], P1[..., t]], axis=2) for t in range(n_tasks)]
                elif self.multi_class == "ovr":
                    Ytr = np.eye(c)[labels[tr, 0]]
                    P = self.binary_path(K, tr, va, Ytr, lams, conv)
                    Ps = [P / P.sum(axis=2, keepdims=True)]
                else:
                    Ps = [self.pairwise_path(K, tr, va, labels[tr, 0], c, lams, conv)]
                sc = [
                    [score_proba(Ps[t][li], labels[va, t], self.scoring) for t in range(n_tasks)]
                    for li in range(lams.size)
                ]
                table.add(si, np.array(sc, dtype=float).reshape(lams.size, n_tasks))
        return np.concatenate(conv) if conv else np.ones(0, dtype=bool)
