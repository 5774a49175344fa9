"""Cross-validated LSPC over sigma x lambda grids, for one task or many tasks sharing X."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ._lowrank import (
    FoldSystems,
    choose_centers,
    design_distances,
    eigen_path,
    exp_design,
    row_atoms,
    rows_of,
    serial_blas,
    symmetric_eigh,
)
from ._search import (
    BinaryFoldScores,
    KernelGridSearch,
    binary_fold_scores,
    fold_scores,
)
from .kernels import gram, squared_distances
from .lspc import (
    LSPC,
    alpha_path,
    effective_alpha,
    fit_alpha,
    log_odds,
    normal_equations,
    round_outputs,
    sample_weights,
    solve_normal,
)

# Up to this many training rows per fold the eigendecomposition runs on one BLAS thread:
# its tridiagonal reduction is memory-bound there, and between the search's matrix
# products a multi-threaded eigh measured 2x slower (benchmarks/bench_lspc.py, 2 cores).
SERIAL_EIGH_MAX = 1024
# validation rows per block of the low-rank search's output product and scoring: the
# block's outputs (rows x n_lams x solved columns) stay in cache and are never stored
SCORE_BLOCK = 2048


def class_columns(n_tasks, n_cls):
    """The map of :func:`solved_columns` for outputs already per (task, class) column."""

    def to_classes(F):
        return F.reshape(F.shape[:-1] + (n_tasks, n_cls))

    to_classes.ones = False
    to_classes.n_cls = n_cls
    return to_classes


def solved_columns(ind, n_tasks, rounding):
    """``(S, to_classes)``: the right-hand sides to solve Eq. (3) for, and the map from
    their outputs (..., p) to the indicator columns' (..., n_tasks, n_cls)
    (``to_classes.ones``: whether ``S`` is ``[ones, positives]``).

    Eq. (3) is linear in the indicator columns: with two classes per task only the
    positive columns and one column of ones are solved, negative = ones - positive
    (not for ``rounding="parameters"``, whose ``max(0, alpha)`` is not linear).
    """
    n_cls = ind.shape[1] // max(n_tasks, 1)
    if n_cls != 2 or rounding == "parameters":
        return ind, class_columns(n_tasks, n_cls)

    def to_classes(F):
        pos = F[..., 1:]
        return np.stack([F[..., :1] - pos, pos], axis=-1)

    to_classes.ones = True
    to_classes.n_cls = 2
    return np.c_[np.ones(ind.shape[0]), ind[:, 1::2]], to_classes


class LSPCCV(KernelGridSearch):
    """LSPC with sigma and lambda chosen by K-fold cross-validation.

    ``fit(X, y)`` selects and fits one classifier.  ``fit(X, Y)`` with a 2-D 0/1 matrix
    (n_samples, n_tasks) selects and fits one binary LSPC per task (each with its own sigma
    and lambda); all tasks share X, the folds, and the kernel computations.

    The search decomposes each (sigma, fold) Gram matrix once, an eigendecomposition when
    it is symmetric (its eigenvalues of either sign), a singular value decomposition
    otherwise, so it is exact for any kernel matrix (an indefinite precomputed or callable
    one too).  The final fit per task uses a Cholesky factorisation per distinct (sigma,
    lambda) chosen.

    Ties of the mean CV score (within round-off) go to the smoother model: the largest
    sigma, then the largest lambda.

    A task of a 2-D ``Y`` with one class only is not searched: it predicts that class with
    probability 1 (and ``fit`` warns, naming it); its ``sigma_``, ``lam_`` and
    ``best_score_`` are NaN.

    Parameters
    ----------
    sigmas : array-like or None
        Candidate Gaussian widths; ``None``: seven values from median/16 to 4 x median
        pairwise distance (log-spaced).  Ignored for non-rbf kernels.
    lams : array-like or None
        Candidate lambdas; ``None``: 1e-3, 1e-2, 0.1, 1 and 10.
    cv : int, splitter or iterable, default=2
        An integer: the number of folds (shuffled by ``random_state``; stratified for a
        single task when every class has that many samples).  Otherwise a scikit-learn
        splitter (its ``split(X, y)`` is used) or an iterable of ``(train, validation)``
        index arrays, as in scikit-learn's searches.
    rounding : {"outputs", "parameters", "none"}, default="outputs"
        As in :class:`kclf.LSPC` (LSPC-new, LSPC, LSPC').
    scoring : {"error", "log_loss", "auc"}, default="error"
        Validation criterion: misclassification rate, log loss (lower is better) or
        ROC AUC (binary tasks only, higher is better).
    random_state : int or None
        Seed of the fold assignment (and of the centres with ``n_basis``).
    kernel : {"rbf", "linear", "precomputed"} or callable, default="rbf"
    n_basis : int or None, default=None
        ``None``: the exact model (kernels at all training points).  An integer ``b``:
        low-rank LSPC as in :class:`kclf.LSPC`, its ``min(b, n)`` centres chosen once
        from all of ``X`` (``centers``, ``random_state``) and shared by every fold and the
        final fit.  The search never forms an n x n matrix: per width one pass over the
        rows of the (n, b) design matrix gives the ``b x b`` Gram matrix ``K_g^T K_g`` of
        each fold's validation part ``g``; a training part's Gram matrix is the sum of the
        others (the full one the sum of all), so each (sigma, fold) costs one ``b x b``
        eigendecomposition ``K_tr^T K_tr / m = V diag(s) V^T``, and every lambda and task
        ``alpha~ = V diag(1 / (s + lam)) V^T K_tr^T y / m`` (Eq. 3 on the fold) on top.
        The final fit reuses the full Gram matrix: one Cholesky per chosen (sigma,
        lambda).  Time O(n b (d + |sigmas| b)), memory O(n b + |sigmas| b^2).
    centers : {"random", "kmeans"}, default="random"
        As in :class:`kclf.LSPC` (``n_basis`` only).
    basis : {"full", "classwise"}, default="full"
        As in :class:`kclf.LSPC`.  ``"classwise"`` (Sugiyama's basis: class ``y`` uses
        the kernels at its own training samples, with ``n_basis`` at its own centres)
        has no basis shared by the classes, so the search solves Eq. (3) per block: for
        every (sigma, fold, task, class) one eigendecomposition of the block's
        ``H_y = K_y^T K_y / m`` (``n_y x n_y``; ``K_y`` the fold's (m, n_y) design
        columns of class ``y``), every lambda on top,
        ``alpha~_y(lam) = V diag(1 / (e + lam)) V^T h_y`` -- exactly the per-fold refit
        of ``LSPC(basis="classwise")`` (with ``n_basis``: the centres' own labels decide
        their class).  A block of ``n_y`` columns costs O(m n_y^2 + n_y^3); a task's two
        blocks together at most the full basis's eigendecomposition.
    class_weight : {"balanced"}, dict or None, default=None
        As in :class:`kclf.LSPC`; the weights come from each fold's (and the final fit's)
        training labels (a dict's keys: the labels of ``y``, 0 and 1 per task of a 2-D
        ``y``).  Weighted, the full basis's ``H`` differs per task: one
        eigendecomposition of ``K^T W K / m`` per (sigma, fold, task), as for
        ``basis="classwise"``.

    Attributes
    ----------
    sigma_, lam_ : float, or ndarray of shape (n_tasks,) in multi-task mode
    best_score_ : float or ndarray of shape (n_tasks,)
    cv_results_ : dict
        ``"sigma"``, ``"lam"`` (n_settings,) and ``"mean_test_score"`` (n_settings,), or
        (n_tasks, n_settings) in multi-task mode.
    best_estimator_ : LSPC
        Single-task mode only.
    n_tasks_ : int or None
        None in single-task mode.
    task_constant_ : ndarray of shape (n_tasks,)
        Multi-task mode: the label of a one-class task, NaN for the others.
    """

    _needs_inputs = ("n_basis", "low-rank LSPC")
    _parameter_constraints = {
        **KernelGridSearch._parameter_constraints,
        "rounding": LSPC._parameter_constraints["rounding"],
        "random_state": ["random_state"],
        "kernel": LSPC._parameter_constraints["kernel"],
        "n_basis": LSPC._parameter_constraints["n_basis"],
        "centers": LSPC._parameter_constraints["centers"],
        "basis": LSPC._parameter_constraints["basis"],
        "class_weight": LSPC._parameter_constraints["class_weight"],
    }

    def __init__(
        self,
        sigmas=None,
        lams=None,
        *,
        cv=2,
        random_state=None,
        rounding="outputs",
        scoring="error",
        kernel="rbf",
        n_basis=None,
        centers="random",
        basis="full",
        class_weight=None,
    ):
        super().__init__(sigmas, lams, cv, scoring, random_state, kernel)
        self.rounding = rounding
        self.n_basis = n_basis
        self.centers = centers
        self.basis = basis
        self.class_weight = class_weight

    def _blockwise(self):
        """Whether the classes (or tasks) have no common system: a class-wise basis, or
        per-task class weights."""
        return self.basis == "classwise" or self.class_weight is not None

    def _kernel(self, X, Y, sigma):
        return gram(self.kernel, X, Y, None if np.isnan(sigma) else sigma)

    def _fold_scores(self, to_classes, F, labels):
        """(n_lams, n_tasks) scores of the validation outputs ``F`` (n_va, n_lams, p) of
        the solved columns (:func:`solved_columns`)."""
        n_tasks = labels.shape[1]
        if to_classes.ones:  # [ones, positives]: negative = ones - positive
            F1 = F[:, :, 1:]
            F0 = F[:, :, :1] - F1
        elif F.shape[2] == 2 * n_tasks:  # [negative, positive] per task
            F0, F1 = F[:, :, 0::2], F[:, :, 1::2]
        else:
            P = round_outputs(to_classes(F.transpose(1, 0, 2)), self.rounding)
            return fold_scores(P, labels, self.scoring)
        return binary_fold_scores(F0, F1, labels, self.rounding, self.scoring)

    def _block_scores(self, to_classes, Kva, A, labels):
        """:meth:`_fold_scores` of the validation outputs ``Kva @ A`` (``A`` (b, n_lams x
        p), lambda-major), two classes per task computed and scored in row blocks of
        :data:`SCORE_BLOCK` (:class:`kclf._search.BinaryFoldScores`)."""
        n_va, n_tasks = labels.shape
        if to_classes.n_cls != 2:  # more classes: the whole product at once
            F = (Kva @ A).reshape(n_va, A.shape[1] // (to_classes.n_cls * n_tasks), -1)
            return self._fold_scores(to_classes, F, labels)
        p = n_tasks + 1 if to_classes.ones else 2 * n_tasks
        n_lams = A.shape[1] // p
        acc = BinaryFoldScores(n_va, n_lams, n_tasks, self.rounding, self.scoring)
        for lo in range(0, n_va, SCORE_BLOCK):
            F = (Kva[lo : lo + SCORE_BLOCK] @ A).reshape(-1, n_lams, p)
            if to_classes.ones:  # [ones, positives]: negative = ones - positive
                F1 = F[:, :, 1:]
                acc.add(F[:, :, :1] - F1, F1, labels[lo : lo + SCORE_BLOCK])
            else:  # [negative, positive] per task
                acc.add(F[:, :, 0::2], F[:, :, 1::2], labels[lo : lo + SCORE_BLOCK])
        return acc.scores()

    def _search_exact(self, X, folds, ind, labels, table):
        """Add every (task, sigma, lambda)'s fold scores to ``table``; returns the squared
        distances of ``X`` (rbf; None otherwise) for the final fit."""
        sigmas, lams = table.sigmas, table.lams
        n_tasks = labels.shape[1]
        S, to_classes = solved_columns(ind, n_tasks, self.rounding)
        D = squared_distances(X) if self.kernel == "rbf" and n_tasks else None
        for si, sigma in enumerate(sigmas if n_tasks else ()):
            # the same values as kernels.grams (and rbf_kernel) bit for bit
            K = gram(self.kernel, X) if D is None else np.exp(D * (-1.0 / (2.0 * sigma**2)))
            # the identity below needs K^T K = V diag(s^2) V^T: an eigendecomposition for a
            # symmetric K (indefinite too), a singular value decomposition otherwise (only
            # a precomputed or callable kernel can be non-symmetric)
            symmetric = self.kernel in ("rbf", "linear") or np.allclose(
                K, K.T, rtol=0.0, atol=1e-13 * np.abs(K).max()
            )
            for tr, va in folds:
                m = tr.size
                Ktr = K[np.ix_(tr, tr)]
                if symmetric:
                    with serial_blas(m <= SERIAL_EIGH_MAX):
                        s, V = symmetric_eigh(Ktr)
                    U = V
                else:
                    U, s, Vt = scipy.linalg.svd(Ktr, overwrite_a=True, check_finite=False)
                    V = Vt.T
                B = U.T @ S[tr]
                Kva = K[np.ix_(va, tr)]
                # (H + lam I)^{-1} h = V G U^T Y_tr with G = (s/m) / (s^2/m + lam), all lams
                G = (s / m) / (s * s / m + lams[:, None])
                # columns (lam, solved column): every setting in one matrix product
                GB = (G.T[:, :, None] * B[:, None, :]).reshape(m, -1)
                if self.rounding == "parameters":
                    F = Kva @ np.maximum(V @ GB, 0.0)
                elif GB.shape[1] < va.size:
                    F = Kva @ (V @ GB)
                else:
                    F = (Kva @ V) @ GB
                F = F.reshape(va.size, lams.size, -1)
                table.add(si, self._fold_scores(to_classes, F, labels[va]))
        return D

    def _search_lowrank(self, X, folds, ind, labels, table):
        """:meth:`_search_exact` for the low-rank model (``n_basis``; see the class
        docstring).  Returns the centres ``(index, C)`` and, per width, the full
        ``(K^T K, K^T ind)`` for the final fit."""
        sigmas, lams = table.sigmas, table.lams
        n, n_tasks = X.shape[0], labels.shape[1]
        index, C = choose_centers(X, self.n_basis, self.centers, self.random_state)
        b = C.shape[0]
        order, bounds, masks = row_atoms(n, folds)
        pos = np.empty(n, dtype=int)
        pos[order] = np.arange(n)
        S, to_classes = solved_columns(ind, n_tasks, self.rounding)
        labels_o = labels[order]

        rbf = self.kernel == "rbf"
        S_o = S[order]
        if rbf:
            D = design_distances(X, order, C)
            K = np.empty_like(D)
        else:
            K = np.asarray(gram(self.kernel, X[order], C), dtype=float)
            KS = [K[lo:hi].T @ S_o[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
        systems = []
        for si, sigma in enumerate(sigmas if n_tasks else ()):
            if rbf:
                KS = exp_design(D, K, -1.0 / (2.0 * sigma**2), S_o, bounds)
            fs = FoldSystems(K, KS, bounds, masks)
            for k, (tr, va) in enumerate(folds):
                H, h = fs.training(k)
                A = eigen_path(H, h, tr.size, lams, serial=b <= SERIAL_EIGH_MAX)
                if self.rounding == "parameters":
                    np.maximum(A, 0.0, out=A)
                Kva, va_pos = rows_of(K, pos[va])
                sc = self._block_scores(to_classes, Kva, A.reshape(b, -1), labels_o[va_pos])
                table.add(si, sc)
            G, KSf = fs.full()
            systems.append((G, to_classes(KSf).reshape(b, -1)))
        return (index, C), systems

    def _search_blocks(self, X, folds, labels, table):
        """:meth:`_search_exact` (or, with ``n_basis``, the low-rank search) for a
        class-wise basis or class weights: per (sigma, fold, task) :func:`kclf.lspc.alpha_path`
        on the fold's design rows, one eigendecomposition per block.  Returns the
        centres ``(index, C)`` (None for the exact model)."""
        sigmas, lams = table.sigmas, table.lams
        n_tasks = labels.shape[1]
        c = 2 if self.n_tasks_ is not None else self.classes_.size
        if self.n_basis is None:
            index, C = None, None
        else:
            if self.basis == "classwise" and self.centers != "random":
                raise ValueError("basis='classwise' needs centers='random' (labelled centres)")
            index, C = choose_centers(X, self.n_basis, self.centers, self.random_state)
        D = None
        if self.kernel == "rbf" and n_tasks:
            D = squared_distances(X, C)
        to_classes = class_columns(n_tasks, c)
        for si, sigma in enumerate(sigmas if n_tasks else ()):
            K = self._kernel(X, C, sigma) if D is None else np.exp(D * (-1.0 / (2.0 * sigma**2)))
            for tr, va in folds:
                if index is None:  # the basis: the fold's training samples
                    Ktr, Kva = K[np.ix_(tr, tr)], K[np.ix_(va, tr)]
                else:  # the shared centres
                    Ktr, Kva = K[tr], K[va]
                F = np.empty((va.size, lams.size, n_tasks, c))
                for t in range(n_tasks):
                    yt = labels[tr, t]
                    basis_class = None
                    if self.basis == "classwise":
                        basis_class = yt if index is None else labels[index, t]
                    weights = sample_weights(yt, c, self.class_weight, self.classes_)
                    A = alpha_path(Ktr, yt, c, lams, basis_class, weights)
                    A = effective_alpha(A, self.rounding).reshape(A.shape[0], -1)
                    F[:, :, t, :] = (Kva @ A).reshape(va.size, lams.size, c)
                F = F.reshape(va.size, lams.size, -1)
                table.add(si, self._fold_scores(to_classes, F, labels[va]))
        return None if index is None else (index, C)

    def _search(self, X, y, labels, folds, table):
        """Every (task, sigma, lambda)'s fold scores (exact or low-rank path); returns what
        the refit reuses: the class indicator columns ``ind``, the grid's widths, and the
        squared distances ``D`` (exact) or the ``centers`` and full ``systems`` per width
        (low rank)."""
        if self.n_tasks_ is None:
            ind = np.eye(self.classes_.size)[labels[:, 0]]
        else:  # columns per searched task: [negative, positive]
            ind = np.stack([1 - labels, labels], axis=2).reshape(y.shape[0], -1).astype(float)
        reuse = {"ind": ind, "sigmas": table.sigmas, "D": None, "centers": None}
        if self._blockwise():
            reuse["centers"] = self._search_blocks(X, folds, labels, table)
        elif self.n_basis is None:
            reuse["D"] = self._search_exact(X, folds, ind, labels, table)
        else:
            reuse["centers"], reuse["systems"] = self._search_lowrank(X, folds, ind, labels, table)
        return reuse

    def _refit(self, X, y, reuse):
        """Eq. (3) on all of ``X`` at ``sigma_``, ``lam_`` (the search's centres)."""
        model = ("rounding", "kernel", "n_basis", "centers", "random_state", "basis")
        model += ("class_weight",)
        est = LSPC(self.sigma_, self.lam_, **{name: getattr(self, name) for name in model})
        return est._fit(X, y, centers=reuse["centers"])

    def _refit_tasks(self, X, Y, fit_tasks, sig_t, lam_t, reuse):
        """``alpha_`` (n_basis, n_tasks, 2) of every searched task: one Cholesky
        factorisation per distinct (sigma, lambda) chosen."""
        sigmas, D = reuse["sigmas"], reuse["D"]
        n_basis = X.shape[0] if self.n_basis is None else reuse["centers"][1].shape[0]
        self.alpha_ = np.zeros((n_basis, self.n_tasks_, 2))
        if self._blockwise():
            self._refit_blocks(X, Y, fit_tasks, sig_t, lam_t, reuse["centers"])
            return
        # the final systems have n (or b) unknowns; up to SERIAL_EIGH_MAX their Gram
        # matrix and Cholesky factorisation run on one BLAS thread, as the search's eigh
        with serial_blas(n_basis <= SERIAL_EIGH_MAX):
            for sigma in np.unique(sig_t):
                same_s = np.isnan(sig_t) if np.isnan(sigma) else sig_t == sigma
                if self.n_basis is not None:
                    si = int(np.flatnonzero(np.isnan(sigmas) | (sigmas == sigma))[0])
                    G, KY = reuse["systems"][si]
                    H, h = G / X.shape[0], KY / X.shape[0]
                elif D is not None:
                    H, h = normal_equations(np.exp(D * (-1.0 / (2.0 * sigma**2))), reuse["ind"])
                else:
                    H, h = normal_equations(self._kernel(X, None, sigma), reuse["ind"])
                for lam in np.unique(lam_t[same_s]):
                    tasks = np.flatnonzero(same_s & (lam_t == lam))
                    cols = (2 * tasks[:, None] + np.arange(2)).ravel()
                    alpha = solve_normal(H, h[:, cols], lam)
                    self.alpha_[:, fit_tasks[tasks], :] = alpha.reshape(-1, tasks.size, 2)
        if self.n_basis is not None:
            self.center_index_, self.X_fit_ = reuse["centers"]
        else:
            # a copy: the caller may change X after fit (a precomputed Gram matrix is
            # only kept for its shape)
            self.X_fit_ = X if self.kernel == "precomputed" else X.copy()

    def _refit_blocks(self, X, Y, fit_tasks, sig_t, lam_t, centers):
        """:meth:`_refit_tasks` for a class-wise basis or class weights: per task
        :func:`kclf.lspc.fit_alpha` at its (sigma, lambda), one kernel per distinct sigma."""
        index, C = (None, None) if centers is None else centers
        for sigma in np.unique(sig_t):
            same_s = np.flatnonzero(np.isnan(sig_t) if np.isnan(sigma) else sig_t == sigma)
            K = self._kernel(X, C, sigma)
            for k in same_s:
                t = fit_tasks[k]
                yt = np.asarray(Y)[:, t].astype(int)
                basis_class = None
                if self.basis == "classwise":
                    basis_class = yt if index is None else yt[index]
                weights = sample_weights(yt, 2, self.class_weight, self.classes_)
                self.alpha_[:, t, :] = fit_alpha(K, yt, 2, lam_t[k], basis_class, weights)
        if centers is not None:
            self.center_index_, self.X_fit_ = centers
        else:
            self.X_fit_ = X if self.kernel == "precomputed" else X.copy()

    def _tasks_proba(self, X):
        """P(task positive | x) of every task (Eq. 4, 5 or 6 by ``rounding``)."""
        out = np.empty((X.shape[0], self.n_tasks_))
        const = ~np.isnan(self.task_constant_)
        out[:, const] = self.task_constant_[const]
        fitted = np.flatnonzero(~const)
        sig = self.sigma_[fitted]
        for sigma in np.unique(sig):
            tasks = fitted[np.isnan(sig) if np.isnan(sigma) else sig == sigma]
            K = X if self.kernel == "precomputed" else self._kernel(X, self.X_fit_, sigma)
            for t in tasks:
                F = K @ effective_alpha(self.alpha_[:, t, :], self.rounding)
                out[:, t] = round_outputs(F, self.rounding)[:, 1]
        return out

    def _tasks_decision(self, X):
        """The log-odds of :meth:`_tasks_proba` (``2 p - 1`` for ``rounding="none"``)."""
        P = self._tasks_proba(X)
        return log_odds(P) if self.rounding != "none" else 2.0 * P - 1.0
