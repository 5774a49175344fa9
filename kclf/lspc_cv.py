"""Cross-validated LSPC over sigma x lambda grids, for one task or many tasks sharing X."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ._search import best_index, constant_tasks, cv_splits, fold_scores, search_grids
from .kernels import check_precomputed, gram, grams
from .lspc import (
    LSPC,
    check_lam,
    check_rounding,
    effective_alpha,
    log_odds,
    normal_equations,
    round_outputs,
    solve_normal,
)

# Up to this many training rows per fold the eigendecomposition runs on one BLAS thread:
# its tridiagonal reduction is memory-bound there, and between the search's matrix
# products a multi-threaded eigh measured 2x slower (benchmarks/bench_lspc.py, 2 cores).
SERIAL_EIGH_MAX = 1024


class LSPCCV(ClassifierMixin, BaseEstimator):
    """LSPC with sigma and lambda chosen by K-fold cross-validation.

    ``fit(X, y)`` selects and fits one classifier.  ``fit(X, Y)`` with a 2-D 0/1 matrix
    (n_samples, n_tasks) selects and fits one binary LSPC per task (each with its own sigma
    and lambda); all tasks share X, the folds, and the kernel computations.

    For every (sigma, fold) the training-fold Gram matrix is decomposed once,
    ``K = U diag(s) V^T`` (an eigendecomposition ``U = V`` when ``K`` is symmetric, its
    eigenvalues ``s`` of either sign; a singular value decomposition otherwise); then, for
    every lambda and every class indicator column ``y`` of every task at the same time,

        alpha~ = (K^T K / m + lam I)^{-1} K^T y / m = V diag((s/m) / (s^2/m + lam)) U^T y,

    since ``K^T K = V diag(s^2) V^T`` and ``K^T = V diag(s) U^T``.  This is exactly the
    solution of Eq. (3) of the LSPC-new paper on the fold for any kernel matrix (an
    indefinite precomputed or callable one too), so the search scores what the naive
    loop over settings would.  The final fit per task uses a Cholesky factorisation per
    distinct (sigma, lambda) chosen.

    Ties of the mean CV score (within round-off) go to the smoother model: the largest
    sigma, then the largest lambda (:func:`kclf._search.best_index`).

    A task of a 2-D ``Y`` with one class only is not searched: it predicts that class with
    probability 1 (and ``fit`` warns, naming it); its ``sigma_``, ``lam_`` and
    ``best_score_`` are NaN.

    Parameters
    ----------
    sigmas : array-like or None
        Candidate Gaussian widths; ``None``: nine values from median/8 to 2 x median
        pairwise distance (log-spaced).  Ignored for non-rbf kernels.
    lams : array-like or None
        Candidate lambdas; ``None``: nine values log-spaced in [1e-3, 10].
    cv : int, splitter or iterable, default=2
        An integer: the number of folds (shuffled by ``random_state``; stratified for a
        single task when every class has that many samples).  Otherwise a scikit-learn
        splitter (its ``split(X, y)`` is used) or an iterable of ``(train, validation)``
        index arrays, as in scikit-learn's searches (:func:`kclf._search.cv_splits`).
    rounding : {"outputs", "parameters", "none"}, default="outputs"
        As in :class:`kclf.LSPC` (LSPC-new, LSPC, LSPC').
    scoring : {"error", "log_loss", "auc"}, default="error"
        Validation criterion: misclassification rate, log loss (lower is better) or
        ROC AUC (binary tasks only, higher is better).
    random_state : int or None
        Seed of the fold assignment.
    kernel : {"rbf", "linear", "precomputed"} or callable, default="rbf"

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

    def __init__(
        self,
        sigmas=None,
        lams=None,
        cv=2,
        rounding="outputs",
        scoring="error",
        random_state=None,
        kernel="rbf",
    ):
        self.sigmas = sigmas
        self.lams = lams
        self.cv = cv
        self.rounding = rounding
        self.scoring = scoring
        self.random_state = random_state
        self.kernel = kernel

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.target_tags.multi_output = True
        return tags

    def _grids(self, X):
        check_rounding(self.rounding)
        return search_grids(
            X, self.sigmas, self.lams, self.cv, self.kernel, self.scoring, check_lam
        )

    def _kernel(self, X, Y, sigma):
        return gram(self.kernel, X, Y, None if np.isnan(sigma) else sigma)

    def fit(self, X, y):
        """Select (sigma, lambda) by CV, then refit on all of ``X``."""
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True)
        multi = y.ndim == 2 and y.shape[1] > 1
        if self.kernel == "precomputed":
            check_precomputed(X)
        sigmas, lams = self._grids(X)
        if multi:
            Y = np.asarray(y)
            if not np.isin(Y, (0, 1)).all():
                raise ValueError("a 2-D y must be a 0/1 matrix (n_samples, n_tasks)")
            self.n_tasks_ = Y.shape[1]
            self.classes_ = np.array([0, 1])
            self.task_constant_, fit_tasks = constant_tasks(Y, "LSPCCV")
            # columns per searched task: [negative, positive]
            Ys = Y[:, fit_tasks]
            ind = np.stack([1 - Ys, Ys], axis=2).reshape(Y.shape[0], -1).astype(float)
            labels = Ys.astype(int)
            folds = cv_splits(self.cv, X, Y, self.random_state)
        else:
            if y.ndim == 2:
                y = y.ravel()
            check_classification_targets(y)
            self.n_tasks_ = None
            self.classes_, yi = np.unique(y, return_inverse=True)
            if self.classes_.size < 2:
                raise ValueError(
                    f"LSPCCV needs at least 2 classes in y, got 1 class: {self.classes_[0]!r}"
                )
            if self.scoring == "auc" and self.classes_.size != 2:
                raise ValueError("scoring='auc' needs a binary y")
            ind = np.eye(self.classes_.size)[yi]
            labels = yi[:, None]
            fit_tasks = np.array([0])
            folds = cv_splits(self.cv, X, y, self.random_state)
        n_tasks = labels.shape[1]
        n_cls = ind.shape[1] // max(n_tasks, 1)
        scores = np.zeros((n_tasks, sigmas.size, lams.size))
        counts = np.zeros_like(scores)
        for si, (_, K) in enumerate(grams(self.kernel, X, sigmas) if n_tasks else ()):
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
                    with threadpool_limits(1 if m <= SERIAL_EIGH_MAX else None, "blas"):
                        s, V = scipy.linalg.eigh(
                            Ktr, driver="evd", overwrite_a=True, check_finite=False
                        )
                    U = V
                else:
                    U, s, Vt = scipy.linalg.svd(Ktr, overwrite_a=True, check_finite=False)
                    V = Vt.T
                B = U.T @ ind[tr]
                Kva = K[np.ix_(va, tr)]
                # (H + lam I)^{-1} h = V G U^T Y_tr with G = (s/m) / (s^2/m + lam), all lams
                G = (s / m) / (s * s / m + lams[:, None])
                # columns (lam, task, class): every setting in one matrix product
                GB = (G.T[:, :, None] * B[:, None, :]).reshape(m, -1)
                if self.rounding == "parameters":
                    F = Kva @ np.maximum(V @ GB, 0.0)
                else:
                    F = (Kva @ V) @ GB
                F = F.reshape(va.size, lams.size, n_tasks, n_cls).transpose(1, 0, 2, 3)
                P = round_outputs(F, self.rounding)
                sc = fold_scores(P, labels[va], self.scoring)
                ok = ~np.isnan(sc)
                scores[:, si, :] += np.where(ok, sc, 0.0).T
                counts[:, si, :] += ok.T
        with np.errstate(invalid="ignore"):
            mean = np.where(counts > 0, scores / np.maximum(counts, 1), np.nan)
        mean = mean.reshape(n_tasks, -1)
        grid_s = np.repeat(sigmas, lams.size)
        grid_l = np.tile(lams, sigmas.size)
        best = np.array(
            [best_index(mean[t], self.scoring, grid_s, grid_l) for t in range(n_tasks)], dtype=int
        )
        if not multi:
            self.cv_results_ = {"sigma": grid_s, "lam": grid_l, "mean_test_score": mean[0]}
            self.sigma_ = None if np.isnan(grid_s[best[0]]) else float(grid_s[best[0]])
            self.lam_ = float(grid_l[best[0]])
            self.best_score_ = float(mean[0, best[0]])
            self.best_estimator_ = LSPC(
                sigma=self.sigma_, lam=self.lam_, rounding=self.rounding, kernel=self.kernel
            ).fit(X, y)
            return self
        T = self.n_tasks_
        full = np.full((T, grid_s.size), np.nan)
        full[fit_tasks] = mean
        self.cv_results_ = {"sigma": grid_s, "lam": grid_l, "mean_test_score": full}
        self.sigma_ = np.full(T, np.nan)
        self.lam_ = np.full(T, np.nan)
        self.best_score_ = np.full(T, np.nan)
        self.sigma_[fit_tasks] = grid_s[best]
        self.lam_[fit_tasks] = grid_l[best]
        self.best_score_[fit_tasks] = mean[np.arange(n_tasks), best]
        self.alpha_ = np.zeros((X.shape[0], T, 2))
        sig_t, lam_t = grid_s[best], grid_l[best]
        for sigma in np.unique(sig_t):
            same_s = np.isnan(sig_t) if np.isnan(sigma) else sig_t == sigma
            H, h = normal_equations(self._kernel(X, None, sigma), ind)
            for lam in np.unique(lam_t[same_s]):
                tasks = np.flatnonzero(same_s & (lam_t == lam))
                cols = (2 * tasks[:, None] + np.arange(2)).ravel()
                self.alpha_[:, fit_tasks[tasks], :] = solve_normal(H, h[:, cols], lam).reshape(
                    -1, tasks.size, 2
                )
        # a copy: the caller may change X after fit (a precomputed Gram matrix is only
        # kept for its shape)
        self.X_fit_ = X if self.kernel == "precomputed" else X.copy()
        return self

    def predict_proba(self, X):
        """Single task: (n, n_classes) posteriors in ``classes_`` order.  Multi-task:
        (n, n_tasks) estimates of P(task positive | x) (a one-class task: its label)."""
        check_is_fitted(self)
        if self.n_tasks_ is None:
            return self.best_estimator_.predict_proba(X)
        if self.kernel == "precomputed":
            check_precomputed(X, n_train=self.X_fit_.shape[0])
        X = validate_data(self, X, dtype=np.float64, reset=False)
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

    def decision_function(self, X):
        """Single task: as :meth:`LSPC.decision_function`; multi-task: the log-odds of
        ``predict_proba`` (``2 p - 1`` for ``rounding="none"``)."""
        check_is_fitted(self)
        if self.n_tasks_ is None:
            return self.best_estimator_.decision_function(X)
        P = self.predict_proba(X)
        return log_odds(P) if self.rounding != "none" else 2.0 * P - 1.0

    def predict(self, X):
        """Single task: class labels; multi-task: (n, n_tasks) 0/1 decisions at p > 1/2."""
        check_is_fitted(self)
        if self.n_tasks_ is None:
            return self.best_estimator_.predict(X)
        return (self.predict_proba(X) > 0.5).astype(int)
