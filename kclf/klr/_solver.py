"""The numerics of kernel logistic regression (kLOGREG) and its search (private).

Roth, "Probabilistic discriminative kernel classifiers for multi-class problems"
(DAGM 2001); equation numbers refer to that paper, the objective ``Phi`` is the one of
:class:`kclf.KernelLogisticRegression`.  The IRLS solvers of Eq. (9) know nothing of
estimators: they are the models' steps (:class:`DualProblem`, :class:`PrimalProblem`) in
the library's one Newton loop (:func:`kclf._newton.newton`).  :func:`irls` fits many 0/1
columns sharing one kernel (conjugate gradients or direct steps) or many small problems
with their own kernels (pairwise coupling's pairs, by stacked LAPACK solves),
:func:`irls_primal` the low-rank (Nystroem) form in the weights, whose features
:func:`nystroem_map` and :func:`nystroem_design` give.  :class:`IRLSPaths` is
:class:`kclf.KernelLogisticRegressionCV`'s search: every lambda and task of a fold by one
solver call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.special import expit
from sklearn.kernel_approximation import Nystroem
from sklearn.metrics.pairwise import pairwise_kernels

from .._distinct import distinct_rows
from .._newton import NewtonProblem, conjugate_gradients, newton
from .._parallel import serial_blas
from .._scoring import score_proba
from .._validation import warn_convergence
from ..coupling import couple_pairs
from ..kernels import gram

# solver="auto" uses CG above this many training samples, a direct solve below
AUTO_CG_MIN_N = 128
# smallest relative CG residual asked for when a step has to be recomputed
CG_TOL_FLOOR = 1e-14
# memory cap (float64 entries) for one batch of stacked direct-solve matrices
CHOLESKY_BATCH_ENTRIES = 2**24
# up to this many features the Nystroem path factorises (Cholesky, the SVD of the
# landmarks' kernel) on one BLAS thread: a factorisation of 1001 features took 21 ms on
# one thread and 0.48 s on two beside one other busy process (this project's 2-core
# machine), as LSPC's eigendecompositions (kclf.lspc._solver.SERIAL_EIGH_MAX)
SERIAL_FACTOR_MAX = 2048


def warn_fit(message, stacklevel=2):
    """:func:`kclf._validation.warn_convergence` from the caller's caller."""
    warn_convergence(message, stacklevel=stacklevel + 1)


def kernel_matrix(kernel, X, Y=None, sigma=None):
    """:func:`kclf.kernels.gram` checked by :func:`finite_kernel` (an overflow raises
    that one line, not numpy's warnings first)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return finite_kernel(gram(kernel, X, Y, sigma))


def finite_kernel(K):
    """``K``, or a one-line ``ValueError`` where it holds a non-finite entry (the linear
    kernel of inputs beyond 1e154 overflows; the Gaussian kernel never does)."""
    if not np.all(np.isfinite(K)):
        raise ValueError(
            "KernelLogisticRegression: the kernel of X overflows (an inner product beyond "
            "1e308): rescale X, or use kernel='rbf', whose default width follows any scale"
        )
    return K


def penalised_loglik(F, A, Y, lam, weights=None):
    """``Phi`` per column: ``sum_i c_i [y_i f_i - log(1 + e^{f_i})] - lam/2 alpha^T K
    alpha`` (``c_i`` the sample weights, default 1), where ``F = K A`` so ``alpha^T K alpha
    = sum(A * F)``."""
    loglik = Y * F - np.logaddexp(0.0, F)
    if weights is not None:
        loglik = weights * loglik
    return np.sum(loglik, axis=0) - 0.5 * lam * np.sum(A * F, axis=0)


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


def column_weights(weights, cols):
    """The sample weights of the columns ``cols``: ``weights`` None, one column shared by
    all (n, 1), or one per column (n, T)."""
    if weights is None or weights.shape[1] == 1:
        return weights
    return weights[:, cols]


class DualProblem(NewtonProblem):
    """kLOGREG's objective ``Phi`` in ``alpha`` for :func:`kclf._newton.newton`: one
    problem per column of ``Y`` (n, T), with one shared kernel ``K`` (n, n) or one per
    column (T, n, n, the pairs of pairwise coupling).

    The step is Eq. (9), ``(K + lam W^{-1}) alpha_new = K alpha + e`` with ``e = (y - pi) /
    W``, in the equivalent form that needs no ``W^{-1}`` (the guard for ``W -> 0``:
    confidently fitted points have ``W_ii = pi_i (1 - pi_i) -> 0``).  The step ``D =
    alpha_new - alpha`` solves ``(lam I + W K) D = G``, ``G = y - pi - lam alpha`` (the
    gradient of ``Phi`` is ``K G``); with ``S = W^{1/2}``,

        D = (G - S u) / lam,     (lam I + S K S) u = S K G,

    from ``(lam I + W K)^{-1} = (I - S (lam I + S K S)^{-1} S K) / lam``.  The matrix
    ``lam I + S K S`` is symmetric with eigenvalues in ``[lam, lam + ||K|| / 4]``.  It is
    solved by conjugate gradients warm-started from zero (``solver="cg"``; a step that
    fails to raise ``Phi`` is recomputed with a 1000 times smaller CG tolerance, down to
    1e-14, :meth:`refine`), or by stacked Cholesky solves (``"direct"``).  CG needs about
    ``sqrt(kappa)`` iterations, ``kappa`` up to ``1 + ||K|| / (4 lam)``: at small ``lam``
    (e.g. 1e-7 at n = 300, ``kappa ~ 1e7``) it cannot reach ``cg_tol`` within
    ``cg_max_iter``, and an inexact step stalls IRLS far from the optimum.  A column
    whose CG stops at the cap is therefore solved directly, for that step and every
    later one.  (Jacobi preconditioning was measured to double CG's iterations here: the
    spread comes from ``K``'s spectrum, not from the diagonal.)

    Sample weights ``c_i`` (``weights``, (n,) or (n, T)) multiply each row's
    log-likelihood: ``W`` becomes ``c pi (1 - pi)`` and ``y - pi`` becomes ``c (y - pi)``;
    a row of weight 0 gets ``alpha_i = 0``.
    """

    def __init__(self, K, Y, lam, *, weights=None, solver="direct", cg_tol=1e-6, cg_max_iter=None):
        n, T = Y.shape
        self.K, self.Y = K, Y
        self.lam = np.broadcast_to(np.asarray(lam, dtype=float), (T,)).copy()
        self.weights = None if weights is None else np.asarray(weights, dtype=float)
        if self.weights is not None and self.weights.ndim == 1:
            self.weights = self.weights[:, None]
        self.cg_max_iter = max(2 * n, 100) if cg_max_iter is None else cg_max_iter
        self.ctol = np.full(T, float(cg_tol))
        # columns solved directly (all of them, or those whose CG hit its cap)
        self.direct = np.full(T, solver != "cg")

    def kernels(self, cols):
        """The kernel of the columns ``cols``: the shared one, or their stack."""
        if self.K.ndim == 2 or cols.size == self.K.shape[0]:
            return self.K
        return self.K[cols]

    def kmul(self, V, cols, K=None):
        """``K_t v_t`` for the columns ``cols`` (``K``: :meth:`kernels` of ``cols``)."""
        K = self.kernels(cols) if K is None else K
        if K.ndim == 2:
            return K @ V
        return np.matmul(K, V.T[:, :, None])[:, :, 0].T

    def objective(self, A, F, cols):
        return penalised_loglik(
            F, A, self.Y[:, cols], self.lam[cols], column_weights(self.weights, cols)
        )

    def direction(self, A, F, cols):
        la, c = self.lam[cols], column_weights(self.weights, cols)
        P = expit(F)
        D = P * (1.0 - P)
        G = self.Y[:, cols] - P
        if c is not None:
            D, G = c * D, c * G
        G -= la * A
        S = np.sqrt(D)
        Kc = self.kernels(cols)
        rhs = S * self.kmul(G, cols, Kc)
        U = np.zeros_like(rhs)
        cg = np.flatnonzero(~self.direct[cols])
        if cg.size:

            def matvec(V, sub, S=S[:, cg], la=la[cg], cols=cols[cg]):
                s = S[:, sub]
                return la[sub] * V + s * self.kmul(s * V, cols[sub], Kc if Kc.ndim == 2 else None)

            U[:, cg], _, ok = conjugate_gradients(
                matvec, rhs[:, cg], U[:, cg], self.ctol[cols[cg]], self.cg_max_iter
            )
            self.direct[cols[cg[~ok]]] = True
        d = np.flatnonzero(self.direct[cols])
        if d.size:
            U[:, d] = self._direct_solve(S[:, d], rhs[:, d], la[d], Kc, d)
        dA = (G - S * U) / la
        return dA, self.kmul(dA, cols, Kc)

    @staticmethod
    def _direct_solve(S, rhs, lam, Kc, sub):
        """``(lam_t I + S_t K_t S_t) u_t = rhs_t`` per column by stacked Cholesky solves,
        at most ``CHOLESKY_BATCH_ENTRIES`` matrix entries at a time (``Kc`` the shared
        kernel or the stack of the active columns, ``sub`` these columns' places in it)."""
        n, T = rhs.shape
        out = np.empty_like(rhs)
        step = max(1, CHOLESKY_BATCH_ENTRIES // max(n * n, 1))
        for lo in range(0, T, step):
            sl = slice(lo, min(T, lo + step))
            s = S[:, sl].T
            K = Kc[None] if Kc.ndim == 2 else Kc[sub[sl]]
            M = s[:, :, None] * K * s[:, None, :]
            M.reshape(M.shape[0], -1)[:, :: n + 1] += lam[sl, None]
            out[:, sl] = _spd_solve_stack(M, rhs[:, sl].T).T
        return out

    def refine(self, failed, cols):
        """An inexact CG step that halving cannot make an ascent: retry it more exactly."""
        retry = failed & ~self.direct[cols] & (self.ctol[cols] > CG_TOL_FLOOR)
        self.ctol[cols[retry]] = np.maximum(self.ctol[cols[retry]] * 1e-3, CG_TOL_FLOOR)
        return retry


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
    weights=None,
):
    """Fit kLOGREG for every column of ``Y`` (n, T) by IRLS, Eq. (9)
    (:class:`DualProblem`'s steps in :func:`kclf._newton.newton`'s loop: step halving, a
    column stops when the relative change of ``Phi`` is at most ``tol``).

    Parameters
    ----------
    K : ndarray of shape (n, n) or (T, n, n)
        Symmetric positive semi-definite kernel (with the intercept's ``+1`` if wanted),
        shared by the columns or one per column (the pairs of pairwise coupling, always
        solved directly).
    Y : ndarray of shape (n, T)
        0/1 targets, one column per problem.
    lam : float or ndarray of shape (T,)
        Regularisation per column.
    solver : {"auto", "cg", "direct"}
        ``"auto"``: direct below ``AUTO_CG_MIN_N`` samples (where it is exact and cheaper
        than CG's Python loop), else CG.
    A0 : ndarray of shape (n, T) or None
        Starting ``alpha`` (warm start), default 0.
    weights : ndarray of shape (n,) or (n, T), or None
        Sample weights of the log-likelihood's rows.

    Returns
    -------
    A : ndarray of shape (n, T)
    n_iter : ndarray of shape (T,)
        IRLS steps per column.
    converged : ndarray of shape (T,) of bool
    """
    n = Y.shape[0]
    if solver == "auto":
        solver = "direct" if n < AUTO_CG_MIN_N or K.ndim == 3 else "cg"
    problem = DualProblem(
        K, Y, lam, weights=weights, solver=solver, cg_tol=cg_tol, cg_max_iter=cg_max_iter
    )
    A = np.zeros(Y.shape) if A0 is None else np.array(A0, dtype=float, copy=True)
    r = newton(problem, A, problem.kmul(A, np.arange(Y.shape[1])), tol=tol, max_iter=max_iter)
    return r.x, r.n_iter, r.converged


class Design:
    """A design matrix ``Phi = C N^T`` in factored form (``N`` None: ``Phi = C``).

    Nystroem features are ``Phi = C N^T`` with ``C`` the kernel between the inputs and the
    landmarks (and a last column of ones for the intercept) and ``N = K_mm^{-1/2}``.  Fits
    take the design formed (:meth:`formed`, ``n m^2`` flops once per width): where the
    landmarks are nearly collinear (few input dimensions, a wide kernel) ``N`` is large
    (scikit-learn floors ``K_mm``'s eigenvalues at 1e-12), and the factored Hessian ``N
    (C^T W C) N^T`` carries round-off of ``eps ||N||^2 ||C^T W C||``, far above a small
    ``lam``: it was not positive definite, or its Newton steps took ten times as many
    iterations to probabilities 0.5 % off.  Predictions apply the factored form (``n m +
    m^2`` per column)."""

    def __init__(self, C, N=None):
        self.C, self.N = C, N

    @property
    def shape(self):
        return self.C.shape

    def formed(self):
        """The design with ``Phi = C N^T`` formed (``n m^2`` flops, once), the form fits
        take (class docstring)."""
        return self if self.N is None else Design(self.C @ self.N.T)

    def row_space(self, idx):
        """``(design, Q)``: the rows ``idx`` in coordinates ``v`` of their row space, ``w =
        Q v`` (``Phi_idx^T = Q R``, the design ``R^T``), where they are fewer than the
        features; else ``(self.rows(idx), None)``.  The penalty ``||w||^2`` puts the
        maximiser of a fit on these rows in that space (a part of ``w`` orthogonal to it
        changes no ``f`` on them and only adds to the penalty), so the fit in ``v`` is the
        same problem in ``len(idx)`` unknowns: Hessians and factorisations of that size
        (pairwise coupling's pairs in a shared basis)."""
        self._require_formed("row_space")
        sub = self.rows(idx)
        if len(idx) >= self.shape[1]:
            return sub, None
        Q, R = scipy.linalg.qr(sub.C.T, mode="economic", check_finite=False)
        return Design(np.ascontiguousarray(R.T)), Q

    def rows(self, idx):
        """The design of the rows ``idx``."""
        return Design(self.C[idx], self.N)

    def hessian_cache(self):
        """An empty :class:`HessianCache` for fits on this design."""
        return HessianCache()

    def forward(self, V, cols=None):
        """``Phi V`` (``cols``: the columns of ``V``, unused: one design for all)."""
        return self.C @ (V if self.N is None else self.N.T @ V)

    def backward(self, R, cols=None):
        """``Phi^T R``."""
        out = self.C.T @ R
        return out if self.N is None else self.N @ out

    def gram(self, d):
        """``Phi^T diag(d) Phi`` (d >= 0) of the formed design by one symmetric rank-k
        update."""
        self._require_formed("gram")
        # the transpose of a C-ordered array is Fortran-ordered: no copy for dsyrk
        S = np.sqrt(d)[:, None] * self.C
        G = scipy.linalg.blas.dsyrk(1.0, S.T, trans=0)
        return np.triu(G) + np.triu(G, 1).T

    def _require_formed(self, what):
        if self.N is not None:
            raise ValueError(f"Design.{what} needs the formed design (Design.formed())")


class HessianCache:
    """Per column ``t`` of a primal fit, the Gram matrix ``Phi^T W Phi`` at some earlier
    iterate and the Cholesky factor of it plus ``lam I``: the preconditioner of
    :class:`PrimalProblem`'s steps, kept along a lambda path (a new ``lam`` only needs a
    new factorisation, ``m^3 / 3`` flops, not a new Gram matrix, ``n m^2 / 2``)."""

    def __init__(self):
        self.grams, self.factors = {}, {}

    def has(self, cols):
        """Whether each column of ``cols`` has a Gram matrix."""
        return np.array([t in self.grams for t in cols], dtype=bool)

    def refresh(self, design, cols, D):
        """The Gram matrices of the columns ``cols`` at the weights ``D[:, k]``."""
        for k, t in enumerate(cols):
            self.grams[t] = design.gram(D[:, k])
            self.factors.pop(t, None)

    def solve(self, cols, lam, R):
        """``(G_t + lam_t I)^{-1} r_t`` per column (Cholesky on one BLAS thread up to
        ``SERIAL_FACTOR_MAX`` features)."""
        out = np.empty_like(R)
        with serial_blas(R.shape[0] <= SERIAL_FACTOR_MAX):
            for k, t in enumerate(cols):
                if self.factors.get(t, (None,))[0] != lam[k]:
                    H = self.grams[t].copy()
                    H[np.diag_indices_from(H)] += lam[k]
                    self.factors[t] = (lam[k], scipy.linalg.cho_factor(H))
                out[:, k] = scipy.linalg.cho_solve(self.factors[t][1], R[:, k], check_finite=False)
        return out


def stacked_product(M, V, cols, transpose=False):
    """``M[t] v`` (``M[t]^T v`` with ``transpose``) for each column ``v`` of ``V`` and its
    ``t`` in ``cols`` (increasing), from the stack ``M`` (T, a, b).  Products are bound by
    reading ``M``, and gathering ``M[cols]`` costs more than reading all of it: the
    products of every column are formed unless few are asked for."""
    T = M.shape[0]
    if cols.size * 4 <= T:
        M, full = M[cols], V
    else:
        full = V
        if cols.size < T:
            full = np.zeros(V.shape[:1] + (T,))
            full[:, cols] = V
    if transpose:
        out = np.matmul(full.T[:, None, :], M)[:, 0, :].T
    else:
        out = np.matmul(M, full.T[:, :, None])[:, :, 0].T
    return out if out.shape[1] == cols.size else out[:, cols]


class StackedDesigns:
    """One design per column (``A[t]``, shape (T, n, k)), as a :class:`Design` for
    :class:`PrimalProblem`: many small fits (pairwise coupling's pairs) in one Newton
    loop, each pass over all of them one batched product.  Designs with fewer rows or
    features are padded with zeros: a row of weight 0 (the fit's ``weights``) and a
    feature that is 0 on every row (its weight stays 0, the penalty's maximiser) change
    no fit."""

    def __init__(self, A):
        self.A = A

    @property
    def shape(self):
        return self.A.shape[1:]

    def hessian_cache(self):
        return StackedHessianCache(self.A.shape[0], self.A.shape[2])

    def stack(self, cols):
        """The designs of the columns ``cols`` (increasing)."""
        return self.A if cols.size == self.A.shape[0] else self.A[cols]

    def forward(self, V, cols):
        return stacked_product(self.A, V, cols)

    def backward(self, R, cols):
        return stacked_product(self.A, R, cols, transpose=True)

    def gram(self, D, cols):
        """The upper triangles of ``Phi_t^T diag(d_t) Phi_t`` of the columns ``cols``,
        shape (len(cols), k, k) (one symmetric rank-k update each; the lower triangles
        0)."""
        out = np.empty((cols.size,) + self.A.shape[2:] * 2)
        for j, t in enumerate(cols):
            S = np.sqrt(D[:, j])[:, None] * self.A[t]
            out[j] = scipy.linalg.blas.dsyrk(1.0, S.T, trans=0)
        return out


class StackedHessianCache:
    """:class:`HessianCache` of :class:`StackedDesigns` (``T`` columns of ``k``
    features): the Gram matrices and the inverses of ``G_t + lam_t I`` (by their
    Cholesky factors) in stacks, every column's update and solve one batched call."""

    def __init__(self, T, k):
        self.grams, self.inverses = np.empty((T, k, k)), np.empty((T, k, k))
        self.known, self.lam = np.zeros(T, dtype=bool), np.full(T, np.nan)

    def has(self, cols):
        return self.known[cols]

    def refresh(self, design, cols, D):
        self.grams[cols] = design.gram(D, cols)
        self.known[cols], self.lam[cols] = True, np.nan

    def solve(self, cols, lam, R):
        stale = self.lam[cols] != lam
        if stale.any():
            with serial_blas(R.shape[0] <= SERIAL_FACTOR_MAX):
                for t, la in zip(cols[stale], lam[stale], strict=True):
                    self.inverses[t] = spd_inverse(self.grams[t], la)
                    self.lam[t] = la
        return stacked_product(self.inverses, R, cols)


def spd_inverse(G, lam):
    """``(G + lam I)^{-1}`` for a symmetric positive semi-definite ``G`` given by its
    upper triangle (the lower one 0) and ``lam > 0``: LAPACK ``dpotrf`` and ``dpotri``,
    from the Cholesky factor, ``m^3`` flops."""
    H = G.copy()
    k = np.arange(H.shape[0])
    H[k, k] += lam
    L, info = scipy.linalg.lapack.dpotrf(H, lower=False, clean=True, overwrite_a=True)
    if info == 0:
        inv, info = scipy.linalg.lapack.dpotri(L, lower=False, overwrite_c=True)
    if info != 0:  # not positive definite in floating point
        H = G + np.triu(G, 1).T
        H[k, k] += lam
        return np.linalg.inv(H)
    inv += inv.T  # the upper triangle mirrored, its diagonal doubled
    inv[k, k] *= 0.5
    return inv


class PairBases:
    """The orthonormal bases ``Q_t`` (T, m, k) of :func:`stack_pairs`' row spaces:
    ``bases @ W`` is every column's weights ``Q_t w_t`` in the shared features."""

    def __init__(self, Q):
        self.Q = Q

    def __matmul__(self, W):
        return np.matmul(self.Q, W.T[:, :, None])[:, :, 0].T


def pair_chunks(sizes, m):
    """The fits of ``sizes`` rows each on ``m`` shared features in groups for
    :func:`stack_pairs`, by increasing size (little padding), each stack of designs (of
    fewer rows than features) or of Hessians (:class:`PairDesigns`) at most
    ``CHOLESKY_BATCH_ENTRIES`` entries."""
    order = np.argsort(sizes, kind="stable")
    chunks, start = [], 0
    for end in range(1, order.size + 1):
        n = sizes[order[end - 1]]
        entries = n * n if n < m else m * m
        if end > start + 1 and (end - start) * entries > CHOLESKY_BATCH_ENTRIES:
            chunks.append(order[start : end - 1])
            start = end - 1
    chunks.append(order[start:])
    return chunks


class PairDesigns:
    """The fits of pairwise coupling's pairs in the shared features, as a :class:`Design`
    for :class:`PrimalProblem`: pair ``t``'s rows are two blocks of the design (its two
    classes' rows), ``blocks[first[t]]`` in the column's rows ``[0, n_first)`` and
    ``blocks[second[t]]`` in ``[h, h + n_second)`` (``h`` the largest block), the other
    rows of weight 0.  A class's block is in every pair of that class, so each pass over
    all pairs is one matrix product per block with the columns of its pairs, reading the
    design once (a stack of the pairs' rows, :class:`StackedDesigns`, holds every row
    ``c - 1`` times and is read that many times over, bound by memory)."""

    def __init__(self, blocks, first, second):
        self.blocks, self.first, self.second = blocks, first, second
        self.h = max(b.shape[0] for b in blocks)

    @property
    def shape(self):
        return (2 * self.h, self.blocks[0].shape[1])

    def hessian_cache(self):
        return StackedHessianCache(self.first.size, self.shape[1])

    def _positions(self, cols):
        """Per block: the positions in ``cols`` of its pairs as first and as second
        block."""
        first, second = self.first[cols], self.second[cols]
        for k, B in enumerate(self.blocks):
            q1, q2 = np.flatnonzero(first == k), np.flatnonzero(second == k)
            if q1.size or q2.size:
                yield B, q1, q2

    def forward(self, V, cols):
        h, F = self.h, np.zeros((2 * self.h, cols.size))
        for B, q1, q2 in self._positions(cols):
            G = B @ V[:, np.concatenate([q1, q2])]
            F[: B.shape[0], q1] = G[:, : q1.size]
            F[h : h + B.shape[0], q2] = G[:, q1.size :]
        return F

    def backward(self, R, cols):
        h, out = self.h, np.zeros((self.shape[1], cols.size))
        for B, q1, q2 in self._positions(cols):
            n = B.shape[0]
            out[:, np.concatenate([q1, q2])] += B.T @ np.hstack([R[:n, q1], R[h : h + n, q2]])
        return out

    def gram(self, D, cols):
        """The upper triangles of the pairs' ``Phi_t^T diag(d_t) Phi_t`` (as
        :meth:`StackedDesigns.gram`): one symmetric rank-k update per block."""
        h, m = self.h, self.shape[1]
        out = np.empty((cols.size, m, m))
        for j, t in enumerate(cols):
            G = np.zeros((m, m), order="F")
            for off, k in ((0, self.first[t]), (h, self.second[t])):
                B = self.blocks[k]
                S = np.sqrt(D[off : off + B.shape[0], j])[:, None] * B
                G = scipy.linalg.blas.dsyrk(1.0, S.T, beta=1.0, c=G, trans=0, overwrite_c=True)
            out[j] = G
        return out


def pair_blocks(design, index, targets, weights):
    """:func:`stack_pairs` of pairs in the shared features as :class:`PairDesigns`: each
    pair's rows split by its targets into two blocks (its two classes), equal row sets one
    block."""
    keys, blocks, ends = {}, [], np.zeros((len(index), 2), dtype=int)
    for t, (idx, y) in enumerate(zip(index, targets, strict=True)):
        for side, rows in enumerate((idx[y], idx[~y])):
            key = rows.tobytes()
            if key not in keys:
                keys[key] = len(blocks)
                blocks.append(np.ascontiguousarray(design.C[rows]))
            ends[t, side] = keys[key]
    train = PairDesigns(blocks, ends[:, 0], ends[:, 1])
    n2, T, h = train.shape[0], len(index), train.h
    Y, c = np.zeros((n2, T)), np.zeros((n2, T))
    for t, (y, w) in enumerate(zip(targets, weights, strict=True)):
        n1 = int(y.sum())
        Y[:n1, t] = 1.0
        c[:n1, t] = 1.0 if w is None else w[y]
        c[h : h + y.size - n1, t] = 1.0 if w is None else w[~y]
    return train, Y, c, None


def stack_pairs(design, index, targets, weights):
    """``(train, Y, c, bases)``: the fits on the rows ``index[t]`` of ``design`` with
    0/1 ``targets[t]`` and sample weights ``weights[t]`` (or None) as one
    :class:`StackedDesigns` (each in the coordinates of its row space,
    :meth:`Design.row_space`), padded with rows of weight 0; ``bases`` their
    :class:`PairBases`, or None where every fit is in the shared features.  Where every
    fit has at least as many rows as features: :class:`PairDesigns` (:func:`pair_blocks`)."""
    targets = [np.asarray(y, dtype=bool) for y in targets]
    if all(idx.size >= design.shape[1] for idx in index):
        design._require_formed("stack_pairs")
        return pair_blocks(design, index, targets, weights)
    spaces = [design.row_space(idx) for idx in index]
    n = max(idx.size for idx in index)
    k = max(sub.shape[1] for sub, _ in spaces)
    T, m = len(index), design.shape[1]
    A, Y, c = np.zeros((T, n, k)), np.zeros((n, T)), np.zeros((n, T))
    Q = None if all(q is None for _, q in spaces) else np.zeros((T, m, k))
    for t, ((sub, q), idx) in enumerate(zip(spaces, index, strict=True)):
        A[t, : idx.size, : sub.shape[1]] = sub.C
        Y[: idx.size, t] = targets[t]
        c[: idx.size, t] = 1.0 if weights[t] is None else weights[t]
        if Q is not None:
            Q[t, :, : sub.shape[1]] = np.eye(m) if q is None else q
    return StackedDesigns(A), Y, c, None if Q is None else PairBases(Q)


class PrimalProblem(NewtonProblem):
    """kLOGREG with the low-rank kernel ``K ~ Phi Phi^T`` (Nystroem features, a
    :class:`Design`) for :func:`kclf._newton.newton`: the same objective in the weights
    ``w = Phi^T alpha`` (Eq. 6 with design matrix ``Phi``), ``Phi(w) = sum_i c_i [y_i f_i -
    log(1 + e^{f_i})] - lam/2 ||w||^2`` with ``f = Phi w`` (``c_i`` the sample weights).

    The Newton step solves ``(Phi^T W Phi + lam I) d = g``, ``g = Phi^T c (y - pi) - lam
    w`` (``W = c pi (1 - pi)``), of size ``m`` (the number of features).  Forming the
    Hessian costs ``n m^2 / 2`` flops, a product with it two passes over ``Phi`` (``2 n
    m``).  As Falkon does (Meanti et al. 2020, "Kernel methods through the roof": Nystroem
    and preconditioned Newton-CG), the step is solved by conjugate gradients on Hessian
    products, preconditioned by the Hessian ``Phi^T W' Phi + lam I`` of an earlier iterate
    (:class:`HessianCache`: exact where ``W`` has not moved): the preconditioned step
    itself first, then at most ``cg_max_iter`` CG iterations to a relative residual of
    ``eta``; a column that does not reach it refreshes its Hessian at the current ``W``
    and takes the exact Newton step.  The steps are inexact Newton steps (Dembo,
    Eisenstat & Steihaug 1982) whose residual is at most ``eta`` times the gradient: the
    iteration converges to the same maximiser, linearly at a rate of about ``eta`` where
    the preconditioner is not refreshed.  ``eta = 0.1`` and 6 iterations cost the fewest
    passes and Hessians on the lambda paths of ``benchmarks/bench_klr_scale.py``'s data
    (a Hessian of 25,000 rows costs about 60 passes on this project's 2-core machine;
    tried: ``eta`` 0.1, 0.01, 0.001 with 3 to 10 iterations); the probabilities then
    differ from the fits at ``tol = 1e-14`` by less than 1e-4.
    """

    def __init__(self, design, Y, lam, *, weights=None, cache=None, eta=0.1, cg_max_iter=6):
        T = Y.shape[1]
        self.design, self.Y = design, Y
        self.lam = np.broadcast_to(np.asarray(lam, dtype=float), (T,)).copy()
        self.weights = None if weights is None else np.asarray(weights, dtype=float)
        if self.weights is not None and self.weights.ndim == 1:
            self.weights = self.weights[:, None]
        self.cache = design.hessian_cache() if cache is None else cache
        self.eta, self.cg_max_iter = eta, cg_max_iter

    def objective(self, W, F, cols):
        loglik = self.Y[:, cols] * F - np.logaddexp(0.0, F)
        c = column_weights(self.weights, cols)
        if c is not None:
            loglik = c * loglik
        return np.sum(loglik, axis=0) - 0.5 * self.lam[cols] * np.sum(W * W, axis=0)

    def direction(self, W, F, cols):
        P = expit(F)
        D = P * (1.0 - P)
        R = self.Y[:, cols] - P
        c = column_weights(self.weights, cols)
        if c is not None:
            D, R = c * D, c * R
        lam = self.lam[cols]
        G = self.design.backward(R, cols) - lam * W
        exact = ~self.cache.has(cols)
        if exact.any():
            self.cache.refresh(self.design, cols[exact], D[:, exact])
        dW = self.cache.solve(cols, lam, G)
        dF = np.empty_like(F)
        inexact = np.flatnonzero(~exact)
        if inexact.size:
            Dc, lam_c, cols_c = D[:, inexact], lam[inexact], cols[inexact]

            def matvec(V, sub):
                FV = self.design.forward(V, cols_c[sub])
                return self.design.backward(Dc[:, sub] * FV, cols_c[sub]) + lam_c[sub] * V, FV

            dW[:, inexact], dF[:, inexact], _, ok = conjugate_gradients(
                matvec,
                G[:, inexact],
                dW[:, inexact],
                self.eta,
                self.cg_max_iter,
                lambda Rs, sub: self.cache.solve(cols_c[sub], lam_c[sub], Rs),
                track=True,
            )
            stale = inexact[~ok]  # the preconditioner has gone stale: refresh it
            if stale.size:
                self.cache.refresh(self.design, cols[stale], D[:, stale])
                dW[:, stale] = self.cache.solve(cols[stale], lam[stale], G[:, stale])
                exact[stale] = True
        if exact.any():
            dF[:, exact] = self.design.forward(dW[:, exact], cols[exact])
        return dW, dF


def irls_primal(design, Y, lam, tol=1e-6, max_iter=100, W0=None, weights=None, cache=None):
    """kLOGREG in Nystroem features (:class:`PrimalProblem` on a :class:`Design`, or a
    plain design matrix) for every column of ``Y``.  Returns ``(Wt, n_iter, converged)``,
    ``Wt`` of shape (n_components, T)."""
    if not isinstance(design, Design | StackedDesigns | PairDesigns):
        design = Design(np.asarray(design, dtype=float))
    problem = PrimalProblem(design, Y, lam, weights=weights, cache=cache)
    W = np.zeros((design.shape[1], Y.shape[1])) if W0 is None else np.array(W0, dtype=float)
    F = design.forward(W, np.arange(Y.shape[1]))
    r = newton(problem, W, F, tol=tol, max_iter=max_iter)
    return r.x, r.n_iter, r.converged


def landmark_rows(X, sample_weight=None):
    """The rows Nystroem's landmarks are drawn from: the distinct rows of positive weight,
    each at its first occurrence, in order (:func:`kclf._distinct.distinct_rows` of the
    inputs alone).  A repeated row is one candidate (two equal landmarks add nothing to
    the feature space but a singular ``K_mm``), and a row of weight 0 none, so data with
    integer weights and the same data with its rows repeated (0: left out) draw from the
    same rows; with at least as many landmarks as such rows they take them all and fit
    the same model."""
    first, _, _ = distinct_rows(X, np.zeros(X.shape[0], dtype=int), sample_weight)
    return np.sort(first)


def nystroem_map(X, kernel, sigma, n_components, random_state, sample_weight=None):
    """``(offset, scale, nystroem)``: the Nystroem feature map ``K ~ Phi Phi^T`` of rank
    ``min(n_components, #landmark rows)`` fitted on ``(X - offset) / scale``, its
    landmarks drawn with ``random_state`` from :func:`landmark_rows`; ``sigma`` the
    Gaussian width (rbf only).

    scikit-learn's Gaussian kernel expands ``||x||^2 + ||y||^2 - 2 x.y``, which loses all
    precision on uncentred inputs, and overflows (``inf * 0``: NaN) on inputs of 1e300;
    the kernel is translation invariant and a function of ``(x - x') / sigma``, so the
    inputs are centred at the landmark rows' coordinate-wise median (not for sparse
    inputs, which centring would make dense) and divided by ``sigma`` first (the kernel
    is then the Gaussian of width 1; ``offset`` None and ``scale`` 1 for other kernels).
    """
    rows = landmark_rows(X, sample_weight)
    if kernel == "linear":  # every inner product is at most the largest squared norm
        with np.errstate(over="ignore"):
            finite_kernel(np.max(abs(X).power(2).sum(axis=1) if sp.issparse(X) else X * X))
    if kernel == "rbf":
        scale, kw = float(sigma), {"kernel": "rbf", "gamma": 0.5}
        offset = None if sp.issparse(X) else np.median(X[rows], axis=0)
    else:
        offset, scale, kw = None, 1.0, {"kernel": kernel}
    nystroem = Nystroem(n_components=min(n_components, rows.size), random_state=random_state, **kw)
    with serial_blas(min(n_components, rows.size) <= SERIAL_FACTOR_MAX):  # its SVD
        nystroem.fit(nystroem_inputs(X[rows], offset, scale))
    return offset, scale, nystroem


def nystroem_inputs(X, offset, scale):
    """The inputs of :func:`nystroem_map`'s feature map: ``(X - offset) / scale``."""
    return (X if offset is None else X - offset) / scale


def nystroem_design(X, offset, scale, nystroem, fit_intercept):
    """The design of :func:`nystroem_map`'s features (n, m) as a :class:`Design` ``C
    N^T`` (``C`` the kernel to the landmarks, ``N`` scikit-learn's normalisation), with a
    last column of ones for the intercept (footnote 3) if ``fit_intercept``."""
    Xs = nystroem_inputs(X, offset, scale)
    kw = {"gamma": nystroem.gamma} if nystroem.kernel == "rbf" else {}
    with np.errstate(over="ignore", invalid="ignore"):
        C = pairwise_kernels(Xs, nystroem.components_, metric=nystroem.kernel, **kw)
    C = finite_kernel(C)
    N = finite_kernel(nystroem.normalization_)
    if fit_intercept:
        C = np.hstack([C, np.ones((C.shape[0], 1))])
        N = scipy.linalg.block_diag(N, np.ones((1, 1)))
    return Design(C, N)


def check_pair_folds(labels, folds, classes):
    """A one-line ``ValueError`` where the training part of a fold lacks a class (the
    pairwise search needs every pair in every fold); ``labels`` (n, 1) class indices."""
    for k, (tr, _) in enumerate(folds):
        missing = np.setdiff1d(np.arange(classes.size), labels[tr, 0])
        if missing.size:
            raise ValueError(
                f"KernelLogisticRegressionCV: the training part of fold {k} holds no "
                f"example of class {classes[missing[0]].item()!r}; pairwise coupling "
                "needs every class in every fold (give at least cv examples of each "
                "class, or multi_class='ovr')"
            )


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
    #: ``multi_class="multinomial"``: :func:`kclf.klr._multinomial.multinomial_path`
    softmax_path: object = None

    def irls(self, K, Y, lam, conv, weights=None):
        """:func:`irls` at these solver settings; appends the fits' converged flags to
        ``conv``."""
        A, _, converged = irls(
            K, Y, lam, self.tol, self.max_iter, self.cg_tol, self.solver, weights=weights
        )
        conv.append(converged)
        return A

    def features(self, X, sigma, sample_weight=None):
        """The Nystroem design of all of ``X`` (with the intercept's column), as the final
        ``KernelLogisticRegression(n_components, random_state)`` fitted on ``X`` makes."""
        sigma = None if np.isnan(sigma) else float(sigma)
        offset, scale, nystroem = nystroem_map(
            X, self.kernel, sigma, self.n_components, self.random_state, sample_weight
        )
        return nystroem_design(X, offset, scale, nystroem, self.fit_intercept)

    def primal_path(self, train, valid, Ytr, lams, conv, w_tr=None, basis=None):
        """:meth:`binary_path` in Nystroem features (the :class:`Design` of the training and
        of the validation rows; ``basis``: the orthonormal ``Q`` of
        :meth:`Design.row_space` when ``train`` is in its coordinates): the lambdas from the
        largest to the smallest, each fit (all tasks at once) started from the previous
        one's solution and preconditioned by its Hessians (:class:`HessianCache`)."""
        T, L = Ytr.shape[1], lams.size
        cache = train.hessian_cache()
        W = np.zeros((train.shape[1], T))
        F = np.zeros((train.shape[0], T))
        out = np.empty((L, valid.shape[0], T))
        for li in np.argsort(-lams, kind="stable"):
            problem = PrimalProblem(train, Ytr, lams[li], weights=w_tr, cache=cache)
            r = newton(problem, W, F, tol=self.tol, max_iter=self.max_iter)
            W, F = r.x, r.z
            conv.append(r.converged)
            out[li] = expit(valid.forward(W if basis is None else basis @ W))
        return out

    def binary_path(self, K, tr, va, Ytr, lams, conv, w_tr=None):
        """P(positive) on the validation fold, shape (n_lams, n_va, n_tasks) (``w_tr``: the
        training rows' weights)."""
        if self.n_components is not None:
            return self.primal_path(K.rows(tr), K.rows(va), Ytr, lams, conv, w_tr)
        T, L = Ytr.shape[1], lams.size
        Ktr = K[np.ix_(tr, tr)]
        if self.fit_intercept:
            Ktr += 1.0
        A = self.irls(Ktr, np.repeat(Ytr, L, axis=1), np.tile(lams, T), conv, w_tr)
        F = K[np.ix_(va, tr)] @ A
        if self.fit_intercept:
            F += A.sum(axis=0)
        return expit(F).reshape(va.size, T, L).transpose(2, 0, 1)

    def pairwise_path(self, K, tr, va, yi_tr, c, lams, conv, w_tr=None):
        """Coupled class posteriors on the validation fold, shape (n_lams, n_va, c)
        (``w_tr``: the training rows' weights, passed to the pairs and summed into the
        pairs' weights ``n_ij``).  In Nystroem features ``K`` is the design of all rows
        (formed once), shared by every pair: each pair's lambda path is
        :meth:`primal_path` on its rows of it (:meth:`Design.row_space`)."""
        L = lams.size
        iu, ju = np.triu_indices(c, k=1)
        r_all = np.empty((L, va.size, iu.size))
        counts = np.bincount(yi_tr, weights=w_tr, minlength=c)
        index = [tr[(yi_tr == i) | (yi_tr == j)] for i, j in zip(iu, ju, strict=True)]
        if self.n_components is not None:  # K: the design shared by the pairs
            valid = K.rows(va)
            for chunk in pair_chunks(np.array([idx.size for idx in index]), K.shape[1]):
                parts = [(yi_tr == iu[p]) | (yi_tr == ju[p]) for p in chunk]
                targets = [yi_tr[in_pair] == iu[p] for p, in_pair in zip(chunk, parts)]
                w = [None if w_tr is None else w_tr[in_pair] for in_pair in parts]
                train, Y, cw, basis = stack_pairs(K, [index[p] for p in chunk], targets, w)
                r = self.primal_path(train, valid, Y, lams, conv, cw, basis)
                r_all[:, :, chunk] = r
        for p, (i, j) in enumerate(zip(iu, ju, strict=True)):
            if self.n_components is not None:
                break  # fitted above
            idx, in_pair = index[p], (yi_tr == i) | (yi_tr == j)
            y = (yi_tr[in_pair] == i).astype(float)[:, None]
            w = None if w_tr is None else w_tr[in_pair]
            Kp = K[np.ix_(idx, idx)]
            if self.fit_intercept:
                Kp += 1.0
            A = self.irls(Kp, np.repeat(y, L, axis=1), lams, conv, w)
            F = K[np.ix_(va, idx)] @ A
            if self.fit_intercept:
                F += A.sum(axis=0)
            r_all[:, :, p] = expit(F).T
        N = counts[:, None] + counts[None, :]
        P = np.empty((L, va.size, c))
        start = None
        for li in np.argsort(-lams, kind="stable"):  # each from the previous lambda's
            P[li] = start = couple_pairs(r_all[li], N, start=start)
        return P

    def search(self, X, labels, folds, table, classes, sample_weight=None):
        """Add every (task, sigma, lambda)'s fold scores to ``table`` by the warm paths
        above, one width at a time or several at once (:meth:`kclf._search.ScoreTable.run`;
        ``classes``: the class labels); returns the converged flags of every IRLS fit of
        the search.  With ``sample_weight`` each fold is fitted with its training rows'
        weights and scored with its validation rows' weights."""
        sigmas, lams = table.sigmas, table.lams
        c, n_tasks = classes.size, labels.shape[1]
        if c > 2 and self.multi_class == "pairwise":
            check_pair_folds(labels, folds, classes)
        sw = sample_weight

        def width(si):
            sigma, conv, scores = sigmas[si], [], []
            if self.n_components is not None:
                K = self.features(X, sigma, sw).formed()  # the design of all rows
            else:
                K = kernel_matrix(self.kernel, X, None, None if np.isnan(sigma) else sigma)
            for tr, va in folds:
                w_tr, w_va = (None, None) if sw is None else (sw[tr], sw[va])
                if c == 2:
                    Ytr = labels[tr].astype(float)
                    P1 = self.binary_path(K, tr, va, Ytr, lams, conv, w_tr)
                    Ps = [np.stack([1.0 - P1[..., t], P1[..., t]], axis=2) for t in range(n_tasks)]
                elif self.multi_class == "ovr":
                    Ytr = np.eye(c)[labels[tr, 0]]
                    P = self.binary_path(K, tr, va, Ytr, lams, conv, w_tr)
                    Ps = [P / P.sum(axis=2, keepdims=True)]
                elif self.multi_class == "multinomial":  # K: the design, shared by folds
                    Ytr = np.eye(c)[labels[tr, 0]]
                    Ps = [
                        self.softmax_path(
                            K.rows(tr), K.rows(va), Ytr, lams, self.tol, self.max_iter, conv, w_tr
                        )
                    ]
                else:
                    Ps = [self.pairwise_path(K, tr, va, labels[tr, 0], c, lams, conv, w_tr)]
                sc = [
                    [
                        score_proba(Ps[t][li], labels[va, t], self.scoring, w_va)
                        for t in range(n_tasks)
                    ]
                    for li in range(lams.size)
                ]
                scores.append(np.array(sc, dtype=float).reshape(lams.size, n_tasks))
            return scores, np.concatenate(conv) if conv else np.ones(0, dtype=bool)

        conv = table.run(width) if n_tasks else []
        return np.concatenate(conv) if conv else np.ones(0, dtype=bool)
