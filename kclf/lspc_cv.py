"""Cross-validated LSPC over sigma x lambda grids, for one task or many tasks sharing X."""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from .kernels import check_kernel_name, check_precomputed, check_sigma, gram, grams, median_sigma
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

SCORINGS = ("error", "log_loss", "auc")
SIGMA_FACTORS = 2.0 ** np.linspace(-3, 1, 9)
DEFAULT_LAMS = np.logspace(-3, 1, 9)
LOG_EPS = 1e-15
# Up to this many training rows per fold the eigendecomposition runs on one BLAS thread:
# its tridiagonal reduction is memory-bound there, and between the search's matrix
# products a multi-threaded eigh measured 2x slower (benchmarks/bench_lspc.py, 2 cores).
SERIAL_EIGH_MAX = 1024


def default_sigmas(X):
    """Nine widths from median/8 to 2 x median, log-spaced (median heuristic)."""
    return median_sigma(X) * SIGMA_FACTORS


def search_grids(X, sigmas, lams, cv, kernel, scoring, check_lam_value, default_lams):
    """Validated ``(sigmas, lams)`` of a CV search (shared by the LSPC and KLR searches).

    ``sigmas`` None gives :func:`default_sigmas`; non-RBF kernels have no width (one NaN).
    ``check_lam_value(v, name)`` validates each lambda.
    """
    check_kernel_name(kernel)
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {SCORINGS}, got {scoring!r}")
    if isinstance(cv, bool) or not isinstance(cv, int | np.integer) or cv < 2:
        raise ValueError(f"cv must be an integer >= 2, got {cv!r}")
    lams = default_lams if lams is None else np.atleast_1d(lams)
    lams = np.array([check_lam_value(v, "lams") for v in lams])
    if kernel != "rbf":
        sigmas = np.array([np.nan])
    elif sigmas is None:
        sigmas = default_sigmas(X)
    else:
        sigmas = np.array([check_sigma(v, "sigmas") for v in np.atleast_1d(sigmas)])
    if lams.size == 0 or sigmas.size == 0:
        raise ValueError("sigmas and lams must not be empty")
    return sigmas, lams


def cv_folds(y, cv, random_state):
    """Seeded shuffled folds: stratified for one task when every class has ``cv`` members."""
    n = y.shape[0]
    if y.ndim == 1 and np.min(np.unique(y, return_counts=True)[1]) >= cv:
        splitter = StratifiedKFold(cv, shuffle=True, random_state=random_state)
        return list(splitter.split(np.zeros(n), y))
    return list(KFold(cv, shuffle=True, random_state=random_state).split(np.zeros(n)))


def score_proba(P, yi, scoring):
    """Score class posteriors ``P`` (n, c) against class indices ``yi``; lower is better
    for "error" and "log_loss", higher for "auc" (binary, column 1 positive)."""
    if scoring == "error":
        return float(np.mean(np.argmax(P, axis=1) != yi))
    if scoring == "log_loss":
        p = np.clip(P[np.arange(yi.size), yi], LOG_EPS, 1.0)
        return float(-np.mean(np.log(p)))
    return rank_auc(yi, P[:, 1])


def fold_scores(P, y, scoring):
    """:func:`score_proba` of many settings and tasks at once.

    ``P`` (n_settings, n, n_tasks, c) posteriors, ``y`` (n, n_tasks) class indices;
    returns (n_settings, n_tasks) scores (NaN where AUC is undefined).
    """
    if scoring == "error":
        return np.mean(np.argmax(P, axis=-1) != y, axis=1)
    if scoring == "log_loss":
        p = np.take_along_axis(P, np.broadcast_to(y[..., None], P.shape[:-1] + (1,)), -1)
        return -np.mean(np.log(np.clip(p[..., 0], LOG_EPS, 1.0)), axis=1)
    return np.array(
        [[rank_auc(y[:, t], P[k, :, t, 1]) for t in range(y.shape[1])] for k in range(len(P))]
    )


def rank_auc(y, score):
    """ROC AUC by the Mann-Whitney rank statistic (ties count one half), equal to
    ``sklearn.metrics.roc_auc_score`` without its validation overhead; NaN for one class."""
    pos = y == 1
    n_pos = int(pos.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return np.nan
    ranks = rankdata(score)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def best_index(scores, scoring):
    """First best setting (grid order: sigma-major, then lambda), NaNs ignored."""
    s = np.asarray(scores, dtype=float)
    s = np.where(np.isnan(s), np.inf if scoring != "auc" else -np.inf, s)
    return int(np.argmax(s) if scoring == "auc" else np.argmin(s))


class LSPCCV(ClassifierMixin, BaseEstimator):
    """LSPC with sigma and lambda chosen by K-fold cross-validation.

    ``fit(X, y)`` selects and fits one classifier.  ``fit(X, Y)`` with a 2-D 0/1 matrix
    (n_samples, n_tasks) selects and fits one binary LSPC per task (each with its own sigma
    and lambda); all tasks share X, the folds, and the kernel computations.

    For every (sigma, fold) the training-fold Gram matrix ``K = V diag(s) V^T`` is
    eigendecomposed once; then, for every lambda and every class indicator column ``y``
    of every task at the same time,

        alpha~ = (K^T K / m + lam I)^{-1} K^T y / m = V diag((s/m) / (s^2/m + lam)) V^T y,

    which is exactly the solution of Eq. (3) of the LSPC-new paper on the fold, so the
    search chooses what the naive loop over settings would.  The final fit per task uses a
    Cholesky factorisation per distinct (sigma, lambda) chosen.

    Parameters
    ----------
    sigmas : array-like or None
        Candidate Gaussian widths; ``None``: nine values from median/8 to 2 x median
        pairwise distance (log-spaced).  Ignored for non-rbf kernels.
    lams : array-like or None
        Candidate lambdas; ``None``: nine values log-spaced in [1e-3, 10].
    cv : int, default=2
        Number of folds (shuffled; stratified for a single task when possible).
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
            X, self.sigmas, self.lams, self.cv, self.kernel, self.scoring, check_lam, DEFAULT_LAMS
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
            # columns per task: [negative, positive]
            ind = np.stack([1 - Y, Y], axis=2).reshape(Y.shape[0], -1).astype(float)
            labels = Y.astype(int)
            folds = cv_folds(Y, self.cv, self.random_state)
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
            folds = cv_folds(y, self.cv, self.random_state)
        n_tasks = labels.shape[1]
        n_cls = ind.shape[1] // n_tasks
        scores = np.zeros((n_tasks, sigmas.size, lams.size))
        counts = np.zeros_like(scores)
        for si, (_, K) in enumerate(grams(self.kernel, X, sigmas)):
            for tr, va in folds:
                m = tr.size
                with threadpool_limits(1 if m <= SERIAL_EIGH_MAX else None, "blas"):
                    s, V = scipy.linalg.eigh(
                        K[np.ix_(tr, tr)], driver="evd", overwrite_a=True, check_finite=False
                    )
                s = np.maximum(s, 0.0)
                B = V.T @ ind[tr]
                Kva = K[np.ix_(va, tr)]
                # (H + lam I)^{-1} h = V G V^T Y_tr with G = (s/m) / (s^2/m + lam), all lams
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
        best = np.array([best_index(mean[t], self.scoring) for t in range(n_tasks)])
        sig_t = grid_s[best]
        lam_t = grid_l[best]
        self.cv_results_ = {
            "sigma": grid_s,
            "lam": grid_l,
            "mean_test_score": mean if multi else mean[0],
        }
        if not multi:
            self.sigma_ = None if np.isnan(sig_t[0]) else float(sig_t[0])
            self.lam_ = float(lam_t[0])
            self.best_score_ = float(mean[0, best[0]])
            self.best_estimator_ = LSPC(
                sigma=self.sigma_, lam=self.lam_, rounding=self.rounding, kernel=self.kernel
            ).fit(X, y)
            return self
        self.sigma_ = sig_t
        self.lam_ = lam_t
        self.best_score_ = mean[np.arange(n_tasks), best]
        self.alpha_ = np.zeros((X.shape[0], n_tasks, 2))
        for sigma in np.unique(sig_t):
            same_s = np.isnan(sig_t) if np.isnan(sigma) else sig_t == sigma
            H, h = normal_equations(self._kernel(X, None, sigma), ind)
            for lam in np.unique(lam_t[same_s]):
                tasks = np.flatnonzero(same_s & (lam_t == lam))
                cols = (2 * tasks[:, None] + np.arange(2)).ravel()
                self.alpha_[:, tasks, :] = solve_normal(H, h[:, cols], lam).reshape(
                    -1, tasks.size, 2
                )
        # a copy: the caller may change X after fit (a precomputed Gram matrix is only
        # kept for its shape)
        self.X_fit_ = X if self.kernel == "precomputed" else X.copy()
        return self

    def predict_proba(self, X):
        """Single task: (n, n_classes) posteriors in ``classes_`` order.  Multi-task:
        (n, n_tasks) estimates of P(task positive | x)."""
        check_is_fitted(self)
        if self.n_tasks_ is None:
            return self.best_estimator_.predict_proba(X)
        if self.kernel == "precomputed":
            check_precomputed(X, n_train=self.X_fit_.shape[0])
        X = validate_data(self, X, dtype=np.float64, reset=False)
        out = np.empty((X.shape[0], self.n_tasks_))
        for sigma in np.unique(self.sigma_):
            tasks = np.flatnonzero(
                np.isnan(self.sigma_) if np.isnan(sigma) else self.sigma_ == sigma
            )
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
