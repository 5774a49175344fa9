"""Kernel logistic regression (kLOGREG) by iteratively re-weighted least squares.

Roth, "Probabilistic discriminative kernel classifiers for multi-class problems"
(DAGM 2001); equation numbers below refer to that paper.

The model is ``P(1 | x) = 1 / (1 + exp(-f(x)))`` with ``f(x) = sum_i alpha_i k(x_i, x)``
(Eq. 2 with the expansion Eq. 7).  ``alpha`` maximises the penalised conditional
log-likelihood

    Phi(alpha) = sum_i [y_i log pi_i + (1 - y_i) log(1 - pi_i)] - lam / 2 alpha^T K alpha,

the kernel form of Eq. (3) with the Gaussian prior of Eq. (6) (``w = X^T alpha``, so
``||w||^2 = alpha^T K alpha``).  Its Newton / Fisher-scoring step is Eq. (9),
``(K + lam W^{-1}) alpha_{r+1} = K alpha_r + e``.  With ``fit_intercept=True`` every
feature vector is augmented by a constant 1 (footnote 3), i.e. ``K`` becomes ``K + 1``
and the intercept is penalised like the other weights.

With the linear kernel and ``fit_intercept=False`` this is exactly scikit-learn's
``LogisticRegression(C=1 / lam, fit_intercept=False)``.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import scipy.linalg
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import KERNEL, POSITIVE, check_precomputed, reject_with_precomputed
from .coupling import PairwiseCoupling
from .kernels import gram, median_sigma, squared_distances

MULTI_CLASS = ("pairwise", "ovr")
SOLVERS = ("auto", "cg", "direct")
# solver="auto" uses CG above this many training samples, a direct solve below
AUTO_CG_MIN_N = 128
# smallest relative CG residual asked for when a step has to be recomputed
CG_TOL_FLOOR = 1e-14
# memory cap (float64 entries) for one batch of stacked direct-solve matrices
CHOLESKY_BATCH_ENTRIES = 2**24
# pairwise coupling: largest training (or test x training) distance matrix, in float64
# entries, computed once and cut into the pairs' blocks (else one kernel per pair)
PAIR_DISTANCE_ENTRIES = 2**25


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


class KernelLogisticRegression(ClassifierMixin, BaseEstimator):
    """Kernel logistic regression (kLOGREG) fitted by IRLS with conjugate gradients.

    Binary problems are solved directly (module docstring: the objective ``Phi`` and
    its IRLS step, Eq. 9).  Multi-class problems use ``c (c - 1) / 2`` pairwise
    classifiers coupled by :class:`kclf.PairwiseCoupling` (Section 3, Eq. 10-11; the
    default) or ``c`` one-vs-rest classifiers whose probabilities are normalised to sum
    to one (``"ovr"``; the ``c`` problems share one kernel and are solved together).

    Parameters
    ----------
    sigma : float or None, default=None
        Gaussian kernel width, ``k(x, x') = exp(-||x - x'||^2 / (2 sigma^2))``; ``None``:
        the median pairwise distance of the training inputs (computed once on all of
        them, also in pairwise mode).
    lam : float, default=0.1
        ``lambda`` of Eq. (6) / (9): the penalty ``lam / 2 alpha^T K alpha`` against the
        summed (not averaged) log-likelihood; ``LogisticRegression``'s ``C`` is
        ``1 / lam``.
    kernel : {"rbf", "linear", "precomputed"} or callable, default="rbf"
        With ``"precomputed"``, ``X`` is the (n, n) Gram matrix at fit and the
        (n_test, n_train) cross-kernel at prediction.
    multi_class : {"pairwise", "ovr"}, default="pairwise"
    tol : float, default=1e-6
        Stop IRLS when the relative change of the penalised log-likelihood is <= tol.
    max_iter : int, default=100
        Maximum IRLS steps.
    cg_tol : float, default=1e-6
        Relative residual at which conjugate gradients stop in each IRLS step.
    n_components : int or None, default=None
        Use a Nystroem approximation ``K ~ Phi Phi^T`` of this rank (for n >> 1e4):
        memory O(n m) instead of O(n^2).  Not available with ``kernel="precomputed"``
        (scikit-learn's ``Nystroem`` needs the inputs, not the Gram matrix).
    fit_intercept : bool, default=True
        Augment the inputs by a constant 1 (footnote 3): ``K + 1``, penalised intercept.
    solver : {"auto", "cg", "direct"}, default="auto"
        Linear solver of each IRLS step: conjugate gradients (the paper's; a problem
        whose CG cannot reach ``cg_tol`` within its iteration cap, as at very small
        ``lam``, continues with the direct solve), a direct LAPACK solve, or ``"auto"``
        (direct below 128 training samples).  See :func:`irls`.
    random_state : int or None, default=None
        Seed of the Nystroem landmark sample.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    sigma_ : float or None
        The width used (``None`` for non-rbf kernels).
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_classes)
        ``alpha`` (binary, or one column per class for ``"ovr"``); not set for
        ``"pairwise"`` or Nystroem mode.
    coef_ : ndarray
        Nystroem mode: the weights in feature space.
    intercept_ : float or ndarray
        ``sum(alpha)`` (the weight of the constant feature), 0 without intercept.
    n_iter_ : ndarray
        IRLS steps per binary problem.
    converged_ : bool
        Whether IRLS reached ``tol`` for every binary problem (every pair in pairwise
        mode); a fit that did not warns with ``sklearn.exceptions.ConvergenceWarning``.
    coupling_ : PairwiseCoupling
        The fitted pairwise classifiers (``"pairwise"`` with more than two classes).
    nystroem_offset_ : ndarray of shape (n_features,) or None
        Nystroem mode: the training inputs' coordinate-wise median, subtracted before the
        feature map of the (translation-invariant) Gaussian kernel; None for other kernels.
    X_fit_ : ndarray
        A copy of the training inputs (the kernel centres).

    References
    ----------
    V. Roth, "Probabilistic discriminative kernel classifiers for multi-class problems",
    DAGM 2001, LNCS 2191, pp. 246-253.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kclf.klr import KernelLogisticRegression
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = KernelLogisticRegression(lam=0.01).fit(X, y)
    >>> clf.predict_proba(X[:2]).sum(axis=1).round(8).tolist()
    [1.0, 1.0]
    """

    _parameter_constraints = {
        "sigma": [POSITIVE, None],
        "lam": [POSITIVE],
        "kernel": KERNEL,
        "multi_class": [StrOptions(set(MULTI_CLASS))],
        "tol": [POSITIVE],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "cg_tol": [POSITIVE],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions(set(SOLVERS))],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        sigma=None,
        lam=0.1,
        *,
        kernel="rbf",
        multi_class="pairwise",
        tol=1e-6,
        max_iter=100,
        cg_tol=1e-6,
        n_components=None,
        fit_intercept=True,
        solver="auto",
        random_state=None,
    ):
        self.sigma = sigma
        self.lam = lam
        self.kernel = kernel
        self.multi_class = multi_class
        self.tol = tol
        self.max_iter = max_iter
        self.cg_tol = cg_tol
        self.n_components = n_components
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _check_params(self):
        """The rule between parameters (``_parameter_constraints`` checked the rest)."""
        reject_with_precomputed(self, "n_components", "Nystroem mode")

    def _kernel(self, X, Y=None):
        return gram(self.kernel, X, Y, self.sigma_)

    def _nystroem(self, n_train):
        if self.kernel == "rbf":
            kw = {"kernel": "rbf", "gamma": 1.0 / (2.0 * self.sigma_**2)}
        elif self.kernel == "linear":
            kw = {"kernel": "linear"}
        else:
            kw = {"kernel": self.kernel}
        return Nystroem(
            n_components=min(self.n_components, n_train), random_state=self.random_state, **kw
        )

    def _features(self, X):
        if self.nystroem_offset_ is not None:
            X = X - self.nystroem_offset_
        Phi = self.nystroem_.transform(X)
        if self.fit_intercept:
            Phi = np.hstack([Phi, np.ones((Phi.shape[0], 1))])
        return Phi

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Maximise the penalised log-likelihood by IRLS (Eq. 9); more than two classes by
        pairwise coupling (Eq. 10-11) or one-vs-rest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            The training inputs, or their Gram matrix with ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self : KernelLogisticRegression
            The fitted estimator (``dual_coef_`` the expansion ``alpha`` of Eq. (7), or
            ``coef_`` in Nystroem mode, or ``coupling_``).
        """
        self._check_params()
        for name in (
            "coupling_",
            "nystroem_",
            "nystroem_offset_",
            "coef_",
            "dual_coef_",
            "intercept_",
            "X_fit_",
            "_X_rows",
        ):
            self.__dict__.pop(name, None)
        X, y = validate_data(self, X, y, dtype=np.float64)
        if self.kernel == "precomputed":
            check_precomputed(X)
        check_classification_targets(y)
        self.classes_, yi = np.unique(y, return_inverse=True)
        c = self.classes_.size
        if c < 2:
            raise ValueError(
                f"KernelLogisticRegression needs at least 2 classes in y, got 1 class: "
                f"{self.classes_[0]!r}"
            )
        if self.kernel == "rbf":
            self.sigma_ = float(self.sigma) if self.sigma is not None else median_sigma(X)
        else:
            self.sigma_ = None
        if c > 2 and self.multi_class == "pairwise":
            base = self.get_params()
            base.update(sigma=self.sigma_, multi_class="ovr")
            self.coupling_ = PairwiseCoupling(KernelLogisticRegression(**base)).fit(X, y)
            self.n_iter_ = np.concatenate([e.n_iter_ for e in self.coupling_.estimators_])
            self.converged_ = self.coupling_.converged_  # each pair warned for itself
            return self
        Y = (yi == 1)[:, None].astype(float) if c == 2 else np.eye(c)[yi]
        lam = float(self.lam)
        if self.n_components is not None:
            # scikit-learn's Gaussian kernel expands ||x||^2 + ||y||^2 - 2 x.y, which loses
            # all precision on uncentred inputs; the kernel is translation invariant
            self.nystroem_offset_ = np.median(X, axis=0) if self.kernel == "rbf" else None
            self.nystroem_ = self._nystroem(X.shape[0])
            self.nystroem_.fit(X if self.nystroem_offset_ is None else X - self.nystroem_offset_)
            coef, self.n_iter_, conv = irls_primal(
                self._features(X), Y, lam, self.tol, self.max_iter
            )
            self.coef_ = coef[:, 0] if c == 2 else coef
        else:
            K = self._kernel(X)
            if self.fit_intercept:
                K = K + 1.0
            A, self.n_iter_, conv = irls(
                K, Y, lam, self.tol, self.max_iter, self.cg_tol, self.solver
            )
            self.dual_coef_ = A[:, 0] if c == 2 else A
            self.intercept_ = self.dual_coef_.sum(axis=0) * float(self.fit_intercept)
            # a copy: the caller's array may change after fit (a precomputed Gram matrix
            # is only kept for its shape)
            self.X_fit_ = X if self.kernel == "precomputed" else X.copy()
        self.converged_ = bool(np.all(conv))
        if not self.converged_:
            warnings.warn(
                f"KernelLogisticRegression: IRLS did not reach tol={self.tol} within "
                f"max_iter={self.max_iter} steps for {int(np.sum(~conv))} of {conv.size} "
                f"binary problem(s) (lam={self.lam}); increase max_iter or lam",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def __getattr__(self, name):
        # a batched pair fit (_fitted_pair) keeps its training rows as (X, index) until
        # X_fit_ is first asked for
        rows = self.__dict__.get("_X_rows")
        if name == "X_fit_" and rows is not None:
            self.X_fit_ = rows[0][rows[1]]
            del self._X_rows
            return self.X_fit_
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _fit_pairwise(self, X, yi, pairs, pair_index):
        """Batched fits for :class:`kclf.PairwiseCoupling`: one fitted clone per pair
        ``(i, j)`` of ``pairs`` on the rows ``pair_index`` (label 1 <=> class ``i``), equal
        to ``clone(self).fit`` on the pair's samples.

        Every pair that the per-pair fit would solve by direct IRLS steps (``solver=
        "direct"``, or ``"auto"`` below ``AUTO_CG_MIN_N`` samples) is fitted by
        :func:`irls_stacked`, all pairs of one size together; the pairs' Gaussian kernels
        are blocks of one distance matrix of the training rows.  The other pairs (and
        Nystroem mode) are fitted one by one.
        """
        from sklearn.base import clone

        self._validate_params()
        self._check_params()
        if self.kernel != "precomputed":
            X = X.copy()  # the pairs' rows are cut from it later (see __getattr__)
        est_list = [None] * len(pairs)
        sizes = np.array([idx.size for idx in pair_index])
        batch = (
            np.full(sizes.size, self.n_components is None)
            if self.solver == "direct"
            else (sizes < AUTO_CG_MIN_N) & (self.n_components is None) & (self.solver == "auto")
        )
        D = None
        if self.kernel == "rbf" and batch.any() and X.shape[0] ** 2 <= PAIR_DISTANCE_ENTRIES:
            D = squared_distances(X)
        K_all = None
        if D is not None and self.sigma is not None:
            # the same values as gram("rbf", X[idx], None, sigma) up to round-off
            K_all = np.exp(D * (-1.0 / (2.0 * float(self.sigma) ** 2)))
        params = self.get_params(deep=False)
        for size in np.unique(sizes[batch]):
            members = np.flatnonzero(batch & (sizes == size))
            step = max(1, CHOLESKY_BATCH_ENTRIES // (size * size))
            for lo in range(0, members.size, step):
                chunk = members[lo : lo + step]
                if K_all is not None:
                    # one width: all the chunk's kernels by one gather
                    rows = np.stack([pair_index[p] for p in chunk])
                    Ks = K_all[rows[:, :, None], rows[:, None, :]]
                    sig = [float(self.sigma)] * chunk.size
                else:
                    Ks = np.empty((chunk.size, size, size))
                    sig = [None] * chunk.size
                    for q, p in enumerate(chunk):
                        Ks[q], sig[q] = self._pair_kernel(X, D, pair_index[p])
                if self.fit_intercept:
                    Ks += 1.0
                Ys = np.stack([(yi[pair_index[p]] == pairs[p][0]) for p in chunk]).astype(float)
                A, n_iter, conv = irls_stacked(Ks, Ys, float(self.lam), self.tol, self.max_iter)
                for q, p in enumerate(chunk):
                    est_list[p] = self._fitted_pair(
                        params, X, pair_index[p], sig[q], A[q], n_iter[q], conv[q]
                    )
        for p in np.flatnonzero(~batch):
            idx = pair_index[p]
            Xp = X[np.ix_(idx, idx)] if self.kernel == "precomputed" else X[idx]
            est_list[p] = clone(self).fit(Xp, (yi[idx] == pairs[p][0]).astype(int))
        return est_list

    def _pair_kernel(self, X, D, idx):
        """``(K, sigma_)`` of one pair's rows ``idx``, as its own ``fit`` computes them."""
        if self.kernel == "precomputed":
            return X[np.ix_(idx, idx)], None
        if self.kernel != "rbf":
            return gram(self.kernel, X[idx]), None
        sigma = float(self.sigma) if self.sigma is not None else median_sigma(X[idx])
        if D is None:
            return gram("rbf", X[idx], None, sigma), sigma
        K = D[np.ix_(idx, idx)]
        K *= -1.0 / (2.0 * sigma**2)
        return np.exp(K, out=K), sigma

    def _fitted_pair(self, params, X, idx, sigma, alpha, n_iter, converged):
        """A clone (``params``: this estimator's) holding a batched pair fit, with the
        attributes its ``fit`` sets."""
        est = type(self)(**params)
        precomputed = self.kernel == "precomputed"
        est.n_features_in_ = idx.size if precomputed else X.shape[1]
        est.classes_ = np.array([0, 1])
        est.sigma_ = sigma
        est.dual_coef_ = alpha
        est.intercept_ = alpha.sum() * float(self.fit_intercept)
        if precomputed:
            est.X_fit_ = X[np.ix_(idx, idx)]
        else:
            # X_fit_ = X[idx], cut on first use (__getattr__): every training row is in
            # c - 1 pairs, and the coupled prediction needs none of these copies
            est._X_rows = (X, idx)
        est.n_iter_ = np.array([n_iter])
        est.converged_ = bool(converged)
        if not converged:
            warnings.warn(
                f"KernelLogisticRegression: IRLS did not reach tol={self.tol} within "
                f"max_iter={self.max_iter} steps for 1 of 1 binary problem(s) "
                f"(lam={self.lam}); increase max_iter or lam",
                ConvergenceWarning,
                stacklevel=3,
            )
        return est

    @staticmethod
    def _pairwise_decision(estimators, X_train, X, pair_index):
        """``f_p(x)`` of every pair's fitted estimator (n_samples, n_pairs); None when
        some estimator is not a dual-form Gaussian fit (its own ``predict_proba`` is then
        used).  The pairs of one width share one cross-kernel to all training rows:
        their ``alpha`` scattered into an (n_train, n_pairs) matrix, one matrix product
        gives all their outputs."""
        if X_train is None or X.shape[0] * X_train.shape[0] > PAIR_DISTANCE_ENTRIES:
            return None
        if not all(
            isinstance(e, KernelLogisticRegression)
            and e.kernel == "rbf"
            and hasattr(e, "dual_coef_")
            for e in estimators
        ):
            return None
        D = squared_distances(X, X_train)
        F = np.empty((X.shape[0], len(estimators)))
        sig = np.array([e.sigma_ for e in estimators])
        for sigma in np.unique(sig):
            group = np.flatnonzero(sig == sigma)
            if group.size == 1:  # a width of its own (sigma=None: each pair's median)
                e, idx = estimators[group[0]], pair_index[group[0]]
                K = D[:, idx] * (-1.0 / (2.0 * sigma**2))
                F[:, group[0]] = np.exp(K, out=K) @ e.dual_coef_ + e.intercept_
                continue
            coef = np.zeros((X_train.shape[0], group.size))
            for q, p in enumerate(group):
                coef[pair_index[p], q] = estimators[p].dual_coef_
            K = np.exp(D * (-1.0 / (2.0 * sigma**2)))
            F[:, group] = K @ coef + np.array([estimators[p].intercept_ for p in group])
        return F

    def _check_X(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel == "precomputed":
            check_precomputed(X, n_train=self.X_fit_.shape[0])
        return X

    def _raw(self, X):
        if hasattr(self, "nystroem_"):
            return self._features(X) @ self.coef_
        return self._kernel(X, self.X_fit_) @ self.dual_coef_ + self.intercept_

    def decision_function(self, X):
        """The latent function ``f(x) = sum_i alpha_i k(x_i, x)`` (Eq. 7, plus the
        intercept's ``sum_i alpha_i``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            Test inputs, or their cross-kernel to the training inputs with
            ``kernel="precomputed"``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: ``f(x)``, the log-odds of ``classes_[1]`` (Eq. 2).  Multi-class: one
            column per class, ``f_k(x)`` (one-vs-rest) or the log of the coupled
            probabilities (pairwise).
        """
        check_is_fitted(self)
        if hasattr(self, "coupling_"):
            return self.coupling_.decision_function(X)
        return self._raw(self._check_X(X))

    def predict_proba(self, X):
        """Class probabilities: ``pi(x) = 1 / (1 + exp(-f(x)))`` (Eq. 2), the one-vs-rest
        ``pi_k`` normalised, or the coupled pairwise probabilities (Eq. 10-11).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`decision_function`.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order; rows sum to one.
        """
        check_is_fitted(self)
        if hasattr(self, "coupling_"):
            return self.coupling_.predict_proba(X)
        F = self._raw(self._check_X(X))
        if F.ndim == 1:
            p = expit(F)
            return np.column_stack([1.0 - p, p])
        P = expit(F)
        return P / P.sum(axis=1, keepdims=True)

    def predict_log_proba(self, X):
        """``log`` of :meth:`predict_proba` (probabilities clipped at the smallest float).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`decision_function`.

        Returns
        -------
        log_P : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return np.log(np.clip(self.predict_proba(X), np.finfo(float).tiny, None))

    def predict(self, X):
        """The class of largest probability.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`decision_function`.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
