"""Cross-validated kernel logistic regression over sigma x lambda grids."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._irls import irls, irls_primal
from ._search import (
    SCORINGS,
    best_index,
    constant_tasks,
    cv_splits,
    score_proba,
    search_grids,
    task_choices,
)
from ._validation import check_precomputed, reject_with_precomputed
from .coupling import couple
from .kernels import gram
from .klr import KernelLogisticRegression, nystroem_design, nystroem_map


class KernelLogisticRegressionCV(ClassifierMixin, BaseEstimator):
    """Kernel logistic regression with sigma and lambda chosen by K-fold CV.

    ``fit(X, y)`` selects and fits one classifier (binary, or multi-class by pairwise
    coupling or one-vs-rest); ``fit(X, Y)`` with a 2-D 0/1 matrix (n_samples, n_tasks)
    selects and fits one binary classifier per task, each with its own sigma and lambda,
    as :class:`kclf.LSPCCV` does.

    Fast path: for every (sigma, fold) the kernel is computed once (on all of ``X``, then
    cut into the folds); all lambdas of the grid and all tasks (or one-vs-rest classes)
    are then fitted by one call of :func:`kclf._irls.irls`, whose conjugate-gradient
    iterations apply the shared kernel to all (task, lambda) columns as one matrix
    product.  Each setting is fitted to the same tolerance as a separate
    :class:`KernelLogisticRegression` would be, so the choice equals the naive loop's up
    to that tolerance.  In pairwise mode every pair's sub-kernel is a block of the fold's
    kernel, and its lambda path is solved in one call.  If some of these fits do not
    reach ``tol`` within ``max_iter`` IRLS steps, ``fit`` warns once with their number
    (``ConvergenceWarning``), as the final fit does for itself.

    Ties of the mean CV score (within round-off) go to the smoother model: the largest
    sigma, then the largest lambda (:func:`kclf._search.best_index`).

    A task of a 2-D ``Y`` with one class only is not searched: it predicts that class with
    probability 1 (and ``fit`` warns, naming it); its ``sigma_``, ``lam_`` and
    ``best_score_`` are NaN and its entry of ``estimators_`` is None.

    Parameters
    ----------
    sigmas : array-like or None
        Candidate widths; ``None``: nine values from median/8 to 2 x median pairwise
        distance (the same default as ``LSPCCV``).  Ignored for non-rbf kernels.
    lams : array-like or None
        Candidate lambdas (Eq. 9); ``None``: nine values log-spaced in [1e-3, 10].
    cv : int, splitter or iterable, default=2
        An integer: the number of folds (shuffled, stratified for one task when possible;
        the same folds as ``LSPCCV`` for the same ``random_state``).  Otherwise a
        scikit-learn splitter or an iterable of ``(train, validation)`` index arrays
        (:func:`kclf._search.cv_splits`).
    scoring : {"error", "log_loss", "auc"}, default="error"
    multi_class : {"pairwise", "ovr"}, default="pairwise"
    random_state : int or None
        Seed of the fold assignment.
    kernel, tol, max_iter, cg_tol, fit_intercept, solver
        As in :class:`KernelLogisticRegression`.
    n_components : int or None, default=None
        The Nystroem path of :class:`KernelLogisticRegression`: ``K ~ Phi Phi^T`` of this
        rank, memory O(n m).  Per width the feature map is fitted once on all of ``X``
        (the landmarks drawn with ``random_state``, as the final
        ``KernelLogisticRegression(n_components=m, random_state=random_state)`` fit on
        ``X`` draws them), and every fold, lambda and task is fitted in those features by
        :func:`kclf._irls.irls_primal`.  Pairwise multi-class mode fits each pair's own
        feature map (as the final model does), one fit per setting and fold.

    Attributes
    ----------
    sigma_, lam_ : float, or ndarray of shape (n_tasks,) in multi-task mode
    best_score_ : float or ndarray of shape (n_tasks,)
    cv_results_ : dict
        ``"sigma"``, ``"lam"`` (n_settings,) and ``"mean_test_score"`` (n_settings,), or
        (n_tasks, n_settings) in multi-task mode.
    best_estimator_ : KernelLogisticRegression
        Single-task mode only.
    estimators_ : list of KernelLogisticRegression or None
        Multi-task mode only, one per task (None for a one-class task).
    task_constant_ : ndarray of shape (n_tasks,)
        Multi-task mode: the label of a one-class task, NaN for the others.
    n_tasks_ : int or None
    n_iter_ : ndarray
        IRLS steps of the final fit(s).
    """

    _parameter_constraints = {
        "sigmas": ["array-like", None],
        "lams": ["array-like", None],
        "cv": ["cv_object"],
        "scoring": [StrOptions(set(SCORINGS))],
        **{
            name: KernelLogisticRegression._parameter_constraints[name]
            for name in (
                "multi_class",
                "random_state",
                "kernel",
                "tol",
                "max_iter",
                "cg_tol",
                "fit_intercept",
                "solver",
                "n_components",
            )
        },
    }

    def __init__(
        self,
        sigmas=None,
        lams=None,
        *,
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
        n_components=None,
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
        self.n_components = n_components

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.target_tags.multi_output = True
        return tags

    def _grids(self, X):
        reject_with_precomputed(self, "n_components", "Nystroem mode")
        return search_grids(X, self.sigmas, self.lams, self.kernel)

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
            n_components=self.n_components,
            random_state=self.random_state if self.n_components is not None else None,
        )

    def _irls(self, K, Y, lam):
        A, _, conv = irls(K, Y, lam, self.tol, self.max_iter, self.cg_tol, self.solver)
        self._cv_fits += conv.size
        self._cv_unconverged += int(np.sum(~conv))
        return A

    def _features(self, X, sigma):
        """Nystroem features of all of ``X`` (with the intercept's column), as the final
        ``KernelLogisticRegression(n_components, random_state)`` fitted on ``X`` makes."""
        sigma = None if np.isnan(sigma) else float(sigma)
        offset, nystroem = nystroem_map(X, self.kernel, sigma, self.n_components, self.random_state)
        return nystroem_design(X, offset, nystroem, self.fit_intercept)

    def _primal_path(self, Phi, tr, va, Ytr, lams):
        """:meth:`_binary_path` in Nystroem features ``Phi`` (n, m)."""
        T, L = Ytr.shape[1], lams.size
        W, _, conv = irls_primal(
            Phi[tr], np.repeat(Ytr, L, axis=1), np.tile(lams, T), self.tol, self.max_iter
        )
        self._cv_fits += conv.size
        self._cv_unconverged += int(np.sum(~conv))
        return expit(Phi[va] @ W).reshape(va.size, T, L).transpose(2, 0, 1)

    def _naive_path(self, X, sigma, tr, va, y, lams):
        """Class posteriors on the validation fold by one fit per lambda."""
        out = []
        for lam in lams:
            est = self._estimator(sigma, lam)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                est.fit(X[tr], y[tr])
            self._cv_fits += 1
            self._cv_unconverged += int(any(w.category is ConvergenceWarning for w in caught))
            P = np.zeros((va.size, self.classes_.size))
            P[:, np.searchsorted(self.classes_, est.classes_)] = est.predict_proba(X[va])
            out.append(P)
        return np.stack(out)

    def _binary_path(self, K, tr, va, Ytr, lams):
        """P(positive) on the validation fold, shape (n_lams, n_va, n_tasks)."""
        if self.n_components is not None:
            return self._primal_path(K, tr, va, Ytr, lams)
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

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Select (sigma, lambda) by CV, then refit (IRLS, Eq. 9) on all of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            The training inputs, or their Gram matrix with ``kernel="precomputed"``.
        y : array-like of shape (n_samples,) or (n_samples, n_tasks)
            Class labels (single task), or a 0/1 matrix with one binary task per column.

        Returns
        -------
        self : KernelLogisticRegressionCV
            The fitted search (``sigma_``, ``lam_``, ``cv_results_``, and
            ``best_estimator_`` or the per-task ``estimators_``).
        """
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
            self.task_constant_, fit_tasks = constant_tasks(Y, "KernelLogisticRegressionCV")
            labels = Y[:, fit_tasks].astype(int)
            folds = cv_splits(self.cv, X, Y, self.random_state)
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
            folds = cv_splits(self.cv, X, y, self.random_state)
        n_tasks = labels.shape[1]
        scores = np.zeros((n_tasks, sigmas.size, lams.size))
        counts = np.zeros_like(scores)
        self._cv_fits = self._cv_unconverged = 0
        naive = self.n_components is not None and c > 2 and self.multi_class == "pairwise"
        for si, sigma in enumerate(sigmas if n_tasks else ()):
            if naive:
                K = None
            elif self.n_components is not None:
                K = self._features(X, sigma)  # the design matrix Phi, not a kernel
            else:
                K = gram(self.kernel, X, None, None if np.isnan(sigma) else sigma)
            for tr, va in folds:
                if naive:
                    Ps = [self._naive_path(X, sigma, tr, va, y, lams)]
                elif c == 2:
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
        if self._cv_unconverged:
            warnings.warn(
                f"KernelLogisticRegressionCV: {self._cv_unconverged} of {self._cv_fits} IRLS "
                f"fits of the search (settings x folds x problems) did not reach "
                f"tol={self.tol} within max_iter={self.max_iter} steps",
                ConvergenceWarning,
                stacklevel=2,
            )
        del self._cv_fits, self._cv_unconverged
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
            self.best_estimator_ = self._estimator(grid_s[best[0]], self.lam_).fit(X, y)
            self.n_iter_ = self.best_estimator_.n_iter_
            return self
        T = self.n_tasks_
        self.cv_results_, self.sigma_, self.lam_, self.best_score_ = task_choices(
            mean, best, grid_s, grid_l, fit_tasks, T
        )
        self.estimators_ = [None] * T
        for t in fit_tasks:
            est = self._estimator(self.sigma_[t], self.lam_[t])
            self.estimators_[t] = est.fit(X, np.asarray(y)[:, t].astype(int))
        fitted = [e for e in self.estimators_ if e is not None]
        self.n_iter_ = np.concatenate([e.n_iter_ for e in fitted]) if fitted else np.array([])
        return self

    def predict_proba(self, X):
        """Class probabilities of the chosen model(s) (Eq. 2; coupled by Eq. 10-11).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            Test inputs, or their cross-kernel with ``kernel="precomputed"``.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes) or (n_samples, n_tasks)
            Single task: posteriors in ``classes_`` order.  Multi-task: estimates of
            P(task positive | x) (a one-class task: its label).
        """
        check_is_fitted(self)
        if self.n_tasks_ is None:
            return self.best_estimator_.predict_proba(X)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        out = np.empty((X.shape[0], self.n_tasks_))
        for t, est in enumerate(self.estimators_):
            out[:, t] = self.task_constant_[t] if est is None else est.predict_proba(X)[:, 1]
        return out

    def decision_function(self, X):
        """Scores ranked like :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`predict_proba`.

        Returns
        -------
        scores : ndarray of shape (n_samples,), (n_samples, n_classes) or (n_samples, n_tasks)
            Single task: as :meth:`KernelLogisticRegression.decision_function`.
            Multi-task: the log-odds ``f(x)`` per task (+-inf for a one-class task).
        """
        check_is_fitted(self)
        if self.n_tasks_ is None:
            return self.best_estimator_.decision_function(X)
        n = validate_data(self, X, dtype=np.float64, reset=False).shape[0]
        # a one-class task: log-odds +-inf
        return np.column_stack(
            [
                np.full(n, np.inf if self.task_constant_[t] else -np.inf)
                if e is None
                else e.decision_function(X)
                for t, e in enumerate(self.estimators_)
            ]
        )

    def predict(self, X):
        """Decisions of the chosen model(s).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`predict_proba`.

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_tasks)
            Single task: class labels.  Multi-task: 0/1 decisions at p > 1/2.
        """
        check_is_fitted(self)
        if self.n_tasks_ is None:
            return self.best_estimator_.predict(X)
        return (self.predict_proba(X) > 0.5).astype(int)
