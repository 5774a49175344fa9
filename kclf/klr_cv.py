"""Cross-validated kernel logistic regression over sigma x lambda grids."""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .coupling import couple
from .kernels import check_precomputed, gram
from .klr import MULTI_CLASS, SOLVERS, KernelLogisticRegression, check_positive, irls
from .lspc_cv import best_index, cv_folds, score_proba, search_grids

DEFAULT_LAMS = np.logspace(-3, 1, 9)


class KernelLogisticRegressionCV(ClassifierMixin, BaseEstimator):
    """Kernel logistic regression with sigma and lambda chosen by K-fold CV.

    ``fit(X, y)`` selects and fits one classifier (binary, or multi-class by pairwise
    coupling or one-vs-rest); ``fit(X, Y)`` with a 2-D 0/1 matrix (n_samples, n_tasks)
    selects and fits one binary classifier per task, each with its own sigma and lambda,
    as :class:`kclf.LSPCCV` does.

    Fast path: for every (sigma, fold) the kernel is computed once (on all of ``X``, then
    cut into the folds); all lambdas of the grid and all tasks (or one-vs-rest classes)
    are then fitted by one call of :func:`kclf.klr.irls`, whose conjugate-gradient
    iterations apply the shared kernel to all (task, lambda) columns as one matrix
    product.  Each setting is fitted to the same tolerance as a separate
    :class:`KernelLogisticRegression` would be, so the choice equals the naive loop's up
    to that tolerance.  In pairwise mode every pair's sub-kernel is a block of the fold's
    kernel, and its lambda path is solved in one call.

    Parameters
    ----------
    sigmas : array-like or None
        Candidate widths; ``None``: nine values from median/8 to 2 x median pairwise
        distance (the same default as ``LSPCCV``).  Ignored for non-rbf kernels.
    lams : array-like or None
        Candidate lambdas (Eq. 9); ``None``: nine values log-spaced in [1e-3, 10].
    cv : int, default=2
        Number of folds (shuffled, stratified for one task when possible; the same folds
        as ``LSPCCV`` for the same ``random_state``).
    scoring : {"error", "log_loss", "auc"}, default="error"
    multi_class : {"pairwise", "ovr"}, default="pairwise"
    random_state : int or None
        Seed of the fold assignment.
    kernel, tol, max_iter, cg_tol, fit_intercept, solver
        As in :class:`KernelLogisticRegression`.

    Attributes
    ----------
    sigma_, lam_ : float, or ndarray of shape (n_tasks,) in multi-task mode
    best_score_ : float or ndarray of shape (n_tasks,)
    cv_results_ : dict
        ``"sigma"``, ``"lam"`` (n_settings,) and ``"mean_test_score"`` (n_settings,), or
        (n_tasks, n_settings) in multi-task mode.
    best_estimator_ : KernelLogisticRegression
        Single-task mode only.
    estimators_ : list of KernelLogisticRegression
        Multi-task mode only, one per task.
    n_tasks_ : int or None
    n_iter_ : ndarray
        IRLS steps of the final fit(s).
    """

    def __init__(
        self,
        sigmas=None,
        lams=None,
        cv=2,
        scoring="error",
        multi_class="pairwise",
        random_state=None,
        kernel="rbf",
        tol=1e-6,
        max_iter=100,
        cg_tol=1e-6,
        fit_intercept=True,
        solver="auto",
    ):
        self.sigmas = sigmas
        self.lams = lams
        self.cv = cv
        self.scoring = scoring
        self.multi_class = multi_class
        self.random_state = random_state
        self.kernel = kernel
        self.tol = tol
        self.max_iter = max_iter
        self.cg_tol = cg_tol
        self.fit_intercept = fit_intercept
        self.solver = solver

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.target_tags.multi_output = True
        return tags

    def _grids(self, X):
        if self.multi_class not in MULTI_CLASS:
            raise ValueError(f"multi_class must be one of {MULTI_CLASS}, got {self.multi_class!r}")
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}, got {self.solver!r}")
        return search_grids(
            X,
            self.sigmas,
            self.lams,
            self.cv,
            self.kernel,
            self.scoring,
            check_positive,
            DEFAULT_LAMS,
        )

    def _estimator(self, sigma, lam):
        return KernelLogisticRegression(
            sigma=None if np.isnan(sigma) else float(sigma),
            lam=float(lam),
            kernel=self.kernel,
            multi_class=self.multi_class,
            tol=self.tol,
            max_iter=self.max_iter,
            cg_tol=self.cg_tol,
            fit_intercept=self.fit_intercept,
            solver=self.solver,
        )

    def _irls(self, K, Y, lam):
        return irls(K, Y, lam, self.tol, self.max_iter, self.cg_tol, self.solver)[0]

    def _binary_path(self, K, tr, va, Ytr, lams):
        """P(positive) on the validation fold, shape (n_lams, n_va, n_tasks)."""
        T, L = Ytr.shape[1], lams.size
        Ktr = K[np.ix_(tr, tr)]
        if self.fit_intercept:
            Ktr += 1.0
        A = self._irls(Ktr, np.repeat(Ytr, L, axis=1), np.tile(lams, T))
        F = K[np.ix_(va, tr)] @ A
        if self.fit_intercept:
            F += A.sum(axis=0)
        return expit(F).reshape(va.size, T, L).transpose(2, 0, 1)

    def _pairwise_path(self, K, tr, va, yi_tr, c, lams):
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
                A = self._irls(Kp, np.repeat(y, L, axis=1), lams)
                F = K[np.ix_(va, idx)] @ A
                if self.fit_intercept:
                    F += A.sum(axis=0)
                r = expit(F).T
                R[:, :, i, j] = r
                R[:, :, j, i] = 1.0 - r
        N = counts[:, None] + counts[None, :]
        return np.stack([couple(R[li], N) for li in range(L)])

    def fit(self, X, y):
        """Select (sigma, lambda) by CV, then refit on all of ``X``."""
        y_arr = np.asarray(y)
        multi = y_arr.ndim == 2 and y_arr.shape[1] > 1
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=multi)
        if self.kernel == "precomputed":
            check_precomputed(X)
        sigmas, lams = self._grids(X)
        if multi:
            Y = np.asarray(y)
            if not np.isin(Y, (0, 1)).all():
                raise ValueError("a 2-D y must be a 0/1 matrix (n_samples, n_tasks)")
            self.n_tasks_ = Y.shape[1]
            self.classes_ = np.array([0, 1])
            labels = Y.astype(int)
            folds = cv_folds(Y, self.cv, self.random_state)
            c = 2
        else:
            if y.ndim == 2:
                y = y.ravel()
            check_classification_targets(y)
            self.n_tasks_ = None
            self.classes_, yi = np.unique(y, return_inverse=True)
            c = self.classes_.size
            if c < 2:
                raise ValueError(
                    f"KernelLogisticRegressionCV needs at least 2 classes in y, got 1 "
                    f"class: {self.classes_[0]!r}"
                )
            if self.scoring == "auc" and c != 2:
                raise ValueError("scoring='auc' needs a binary y")
            labels = yi[:, None]
            folds = cv_folds(y, self.cv, self.random_state)
        n_tasks = labels.shape[1]
        scores = np.zeros((n_tasks, sigmas.size, lams.size))
        counts = np.zeros_like(scores)
        for si, sigma in enumerate(sigmas):
            K = gram(self.kernel, X, None, None if np.isnan(sigma) else sigma)
            for tr, va in folds:
                if c == 2:
                    P1 = self._binary_path(K, tr, va, labels[tr].astype(float), lams)
                    Ps = [np.stack([1.0 - P1[..., t], P1[..., t]], axis=2) for t in range(n_tasks)]
                elif self.multi_class == "ovr":
                    Ytr = np.eye(c)[labels[tr, 0]]
                    P = self._binary_path(K, tr, va, Ytr, lams)
                    Ps = [P / P.sum(axis=2, keepdims=True)]
                else:
                    Ps = [self._pairwise_path(K, tr, va, labels[tr, 0], c, lams)]
                for t in range(n_tasks):
                    for li in range(lams.size):
                        sc = score_proba(Ps[t][li], labels[va, t], self.scoring)
                        if not np.isnan(sc):
                            scores[t, si, li] += sc
                            counts[t, si, li] += 1
        with np.errstate(invalid="ignore"):
            mean = np.where(counts > 0, scores / np.maximum(counts, 1), np.nan)
        mean = mean.reshape(n_tasks, -1)
        grid_s = np.repeat(sigmas, lams.size)
        grid_l = np.tile(lams, sigmas.size)
        best = np.array([best_index(mean[t], self.scoring) for t in range(n_tasks)])
        self.cv_results_ = {
            "sigma": grid_s,
            "lam": grid_l,
            "mean_test_score": mean if multi else mean[0],
        }
        if not multi:
            self.sigma_ = None if np.isnan(grid_s[best[0]]) else float(grid_s[best[0]])
            self.lam_ = float(grid_l[best[0]])
            self.best_score_ = float(mean[0, best[0]])
            self.best_estimator_ = self._estimator(grid_s[best[0]], self.lam_).fit(X, y)
            self.n_iter_ = self.best_estimator_.n_iter_
            return self
        self.sigma_ = grid_s[best]
        self.lam_ = grid_l[best]
        self.best_score_ = mean[np.arange(n_tasks), best]
        self.estimators_ = [
            self._estimator(self.sigma_[t], self.lam_[t]).fit(X, labels[:, t])
            for t in range(n_tasks)
        ]
        self.n_iter_ = np.concatenate([e.n_iter_ for e in self.estimators_])
        return self

    def predict_proba(self, X):
        """Single task: (n, n_classes) posteriors in ``classes_`` order.  Multi-task:
        (n, n_tasks) estimates of P(task positive | x)."""
        check_is_fitted(self)
        if self.n_tasks_ is None:
            return self.best_estimator_.predict_proba(X)
        return np.column_stack([e.predict_proba(X)[:, 1] for e in self.estimators_])

    def decision_function(self, X):
        """Single task: as :meth:`KernelLogisticRegression.decision_function`; multi-task:
        the log-odds per task, (n, n_tasks)."""
        check_is_fitted(self)
        if self.n_tasks_ is None:
            return self.best_estimator_.decision_function(X)
        return np.column_stack([e.decision_function(X) for e in self.estimators_])

    def predict(self, X):
        """Single task: class labels; multi-task: (n, n_tasks) 0/1 decisions at p > 1/2."""
        check_is_fitted(self)
        if self.n_tasks_ is None:
            return self.best_estimator_.predict(X)
        return (self.predict_proba(X) > 0.5).astype(int)
