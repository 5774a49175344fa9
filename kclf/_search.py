"""The cross-validation search :class:`kclf.LSPCCV` and
:class:`kclf.KernelLogisticRegressionCV` share (private).

Both search a sigma x lambda grid on the same seeded folds and choose with the same rule;
the default grids and that rule are public, in :mod:`kclf.model_selection`.
:class:`KernelGridSearch` is their common base: the grids (:func:`search_grids`), the
targets (one task or a 0/1 task matrix), the folds (:func:`cv_splits`, also CorrLog's),
the table of fold scores (:class:`ScoreTable`), ``cv_results_`` and the multi-task
predictions; each search keeps only how it scores a fold and how it refits.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.model_selection import KFold, StratifiedKFold, check_cv
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import KernelMixin
from ._progress import SILENT, SearchProgress
from ._validation import check_precomputed, class_labels, positive_grid, reject_with_precomputed
from .metrics import EPS
from .model_selection import DEFAULT_LAMS, best_index, sigma_grid

SCORINGS = ("error", "log_loss", "auc")


def search_grids(X, sigmas, lams, kernel, sigma_factors=None):
    """Validated ``(sigmas, lams)`` of a CV search (shared by the LSPC and KLR searches).

    ``sigmas`` None gives :func:`kclf.model_selection.sigma_grid` of ``X`` at
    ``sigma_factors`` (None: the default factors), ``lams`` None
    :data:`kclf.model_selection.DEFAULT_LAMS`; non-RBF kernels have no width (one NaN).
    Given grids must hold finite positive numbers (the estimators'
    ``_parameter_constraints`` have checked the rest); ``sigmas`` and ``sigma_factors``
    both given is a ``ValueError``.
    """
    if sigmas is not None and sigma_factors is not None:
        raise ValueError("give sigmas (the widths) or sigma_factors (of the median), not both")
    lams = DEFAULT_LAMS.copy() if lams is None else positive_grid(lams, "lams")
    if kernel != "rbf":
        sigmas = np.array([np.nan])
    elif sigmas is None:
        sigmas = sigma_grid(X, sigma_factors)
    else:
        sigmas = positive_grid(sigmas, "sigmas")
    return sigmas, lams


def cv_folds(y, cv, random_state):
    """Seeded shuffled folds: stratified for one task when every class has ``cv`` members.
    ``ValueError`` naming ``cv`` when there are fewer rows than folds."""
    n = y.shape[0]
    if cv > n:
        raise ValueError(f"cv={cv} folds need at least {cv} training rows, got {n}")
    if y.ndim == 1 and np.min(np.unique(y, return_counts=True)[1]) >= cv:
        splitter = StratifiedKFold(cv, shuffle=True, random_state=random_state)
        return list(splitter.split(np.zeros(n), y))
    return list(KFold(cv, shuffle=True, random_state=random_state).split(np.zeros(n)))


def cv_splits(cv, X, y, random_state):
    """``[(train, validation), ...]`` index arrays for a CV search.

    ``cv`` an integer: :func:`cv_folds` (seeded, shuffled; scikit-learn's own integer
    default would not shuffle).  Otherwise anything :func:`sklearn.model_selection.check_cv`
    accepts: a splitter (``split(X, y)`` is called) or an iterable of ``(train,
    validation)`` index arrays.  Every fold must have non-empty training and validation
    parts indexing the ``n`` samples.
    """
    n = X.shape[0]
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        return cv_folds(y, int(cv), random_state)
    splitter = check_cv(cv, y, classifier=True)
    folds = []
    for k, (tr, va) in enumerate(splitter.split(X, y)):
        tr, va = np.asarray(tr), np.asarray(va)
        for part, idx in (("training", tr), ("validation", va)):
            if idx.dtype == bool:
                raise ValueError(f"cv: fold {k} gives a boolean mask; give index arrays")
            if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
                raise ValueError(f"cv: fold {k} has an empty or non-integer {part} part")
            if idx.min() < 0 or idx.max() >= n:
                raise ValueError(f"cv: fold {k} indexes {part} samples outside 0..{n - 1}")
        folds.append((tr, va))
    if not folds:
        raise ValueError("cv gave no folds")
    return folds


def constant_tasks(Y, name, stacklevel=3):
    """``(constant, fit)``: per task of the 0/1 matrix ``Y`` the constant label of a task
    with one class (NaN for the others), and the indices of the others.  Warns once,
    naming the one-class tasks: they are not searched and predict their constant."""
    lo, hi = Y.min(axis=0), Y.max(axis=0)
    constant = np.where(lo == hi, lo, np.nan).astype(float)
    one = np.flatnonzero(lo == hi)
    if one.size:
        which = ", ".join(f"task {t} (all {int(lo[t])})" for t in one)
        warnings.warn(
            f"{name}: {which} of y has only one class; not searched, predicts that "
            "class with probability 1",
            UserWarning,
            stacklevel=stacklevel,
        )
    return constant, np.flatnonzero(lo != hi)


def score_proba(P, yi, scoring):
    """Score class posteriors ``P`` (n, c) against class indices ``yi``; lower is better
    for "error" and "log_loss", higher for "auc" (binary, column 1 positive)."""
    if scoring == "error":
        return float(np.mean(np.argmax(P, axis=1) != yi))
    if scoring == "log_loss":
        p = np.clip(P[np.arange(yi.size), yi], EPS, 1.0)
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
        return -np.mean(np.log(np.clip(p[..., 0], EPS, 1.0)), axis=1)
    return rank_auc_columns(y[:, None, :], P[..., 1].transpose(1, 0, 2))


class BinaryFoldScores:
    """:func:`binary_fold_scores` over the validation rows given in blocks.

    ``add(F0, F1, y)`` takes the next rows' raw outputs (rows, n_settings, n_tasks) of the
    negative and positive class and their 0/1 labels (rows, n_tasks); ``scores()``
    returns the (n_settings, n_tasks) scores of all rows added.  Error and log loss keep
    running sums (the blocks' posteriors are never stored; a block of a few thousand
    rows stays in cache), AUC keeps the positive posteriors and ranks them at the end.
    Element by element the arithmetic of the posteriors is that of
    ``round_outputs`` (:func:`binary_fold_scores`); the error of rounded outputs compares
    ``max(F1, 0)`` with ``max(F0, 0)``, the order of the posteriors before their common
    division (the same decision but where that division rounds two outputs a few ulps
    apart to one posterior).
    """

    def __init__(self, n, n_settings, n_tasks, rounding, scoring):
        self.n, self.rounding, self.scoring = n, rounding, scoring
        self.seen = 0
        if scoring == "auc":
            self.p1 = np.empty((n, n_settings, n_tasks))
            self.y = np.empty((n, n_tasks), dtype=int)
        else:
            self.total = np.zeros((n_settings, n_tasks))

    def add(self, F0, F1, y):
        lo = self.seen
        if self.scoring == "error" and self.rounding != "none":
            # p1 > p0 <=> max(F1, 0) > max(F0, 0): both share the normaliser Z > 0 (or
            # are both 1/2), so the error needs no division
            wrong = (np.maximum(F1, 0.0) > np.maximum(F0, 0.0)) != y[:, None, :]
            self.total += np.count_nonzero(wrong, axis=0)
            self.seen += F1.shape[0]
            return
        if self.rounding == "none":
            Z = F0 + F1
            ok = Z != 0
        else:
            F0, F1 = np.maximum(F0, 0.0), np.maximum(F1, 0.0)
            Z = F0 + F1
            ok = Z > 0
        p1 = np.divide(F1, Z, out=np.full_like(F1, 0.5), where=ok)
        self.seen += F1.shape[0]
        if self.scoring == "auc":
            self.p1[lo : self.seen] = p1
            self.y[lo : self.seen] = y
            return
        p0 = np.divide(F0, Z, out=np.full_like(F0, 0.5), where=ok)
        y = y[:, None, :]
        if self.scoring == "error":
            self.total += np.count_nonzero((p1 > p0) != y, axis=0)
        else:
            p = np.where(y == 1, p1, p0)
            self.total += np.sum(np.log(np.clip(p, EPS, 1.0)), axis=0)

    def scores(self):
        if self.scoring == "auc":
            return rank_auc_columns(self.y[:, None, :], self.p1)
        return self.total / self.n if self.scoring == "error" else -(self.total / self.n)


def binary_fold_scores(F0, F1, y, rounding, scoring):
    """:func:`fold_scores` of ``round_outputs(stack([F0, F1], -1), rounding)`` for two
    classes without the stacked arrays: ``F0``, ``F1`` (n, n_settings, n_tasks) raw
    outputs of the negative and positive class, ``y`` (n, n_tasks) 0/1; returns
    (n_settings, n_tasks).  The same arithmetic element by element (sums of the log
    loss in another order)."""
    acc = BinaryFoldScores(F0.shape[0], F0.shape[1], F0.shape[2], rounding, scoring)
    acc.add(F0, F1, y)
    return acc.scores()


def rank_auc_columns(y, S):
    """ROC AUC of every column at once by the Mann-Whitney rank statistic (ties count one
    half; ``sklearn.metrics.roc_auc_score`` without its validation overhead): ``S`` (n, ...)
    scores, ``y`` 0/1 labels broadcasting against it; returns ``S.shape[1:]`` (NaN where a
    column of ``y`` has one class).  The mid-ranks are integers or half-integers, so every
    rank sum is exact."""
    S = np.asarray(S, dtype=float)
    pos = np.broadcast_to(y, S.shape) == 1
    n_pos = pos.sum(axis=0)
    n_neg = S.shape[0] - n_pos
    rank_sum = np.sum(rankdata(S, axis=0), axis=0, where=pos)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)
    return np.where((n_pos == 0) | (n_neg == 0), np.nan, auc)


def rank_auc(y, score):
    """:func:`rank_auc_columns` of one column: a float."""
    return float(rank_auc_columns(np.asarray(y)[:, None], np.asarray(score)[:, None])[0])


def task_choices(mean, best, sigmas, lams, fit_tasks, n_tasks):
    """``(cv_results_, sigma_, lam_, best_score_)`` of a multi-task search: ``mean``
    (len(fit_tasks), n_settings) mean CV scores of the searched tasks, ``best`` their chosen
    setting; tasks not searched (one class) get NaN."""
    full = np.full((n_tasks, sigmas.size), np.nan)
    full[fit_tasks] = mean
    sigma, lam, score = (np.full(n_tasks, np.nan) for _ in range(3))
    sigma[fit_tasks] = sigmas[best]
    lam[fit_tasks] = lams[best]
    score[fit_tasks] = mean[np.arange(len(best)), best]
    return {"sigma": sigmas, "lam": lams, "mean_test_score": full}, sigma, lam, score


class ScoreTable:
    """Sums of the fold scores of every (task, sigma, lambda) of a search; a NaN score
    (AUC of a fold with one class) is left out of its setting's mean.

    ``progress`` (:class:`kclf._progress.SearchProgress`) gets a line per added fold: the width,
    the fold (of ``n_folds``) and its best score over the lambdas (the mean over tasks)."""

    def __init__(self, n_tasks, sigmas, lams, progress=SILENT, n_folds=None, scoring="error"):
        self.sigmas, self.lams = sigmas, lams
        self.total = np.zeros((n_tasks, sigmas.size, lams.size))
        self.count = np.zeros_like(self.total)
        self.progress, self.n_folds, self.scoring = progress, n_folds, scoring
        self.folds_seen = np.zeros(sigmas.size, dtype=int)

    def add(self, si, sc):
        """Add one fold's scores ``sc`` (n_lams, n_tasks) of the width ``sigmas[si]``."""
        ok = ~np.isnan(sc)
        self.total[:, si, :] += np.where(ok, sc, 0.0).T
        self.count[:, si, :] += ok.T
        self.folds_seen[si] += 1
        if self.progress:
            self.progress(self._line(si, sc))

    def _line(self, si, sc):
        sigma = self.sigmas[si]
        width = "no width" if np.isnan(sigma) else f"sigma={sigma:.4g}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a fold with all-NaN AUCs
            per_lam = np.nanmean(sc, axis=1)
            best = np.nanmax(per_lam) if self.scoring == "auc" else np.nanmin(per_lam)
        return (
            f"width {si + 1}/{self.sigmas.size} ({width}), fold {self.folds_seen[si]}/"
            f"{self.n_folds}: best {self.scoring} {best:.4g} over {self.lams.size} lambdas"
        )

    def choose(self, scoring):
        """``(mean, best, grid_sigma, grid_lam)``: the mean scores (n_tasks, n_settings)
        over the settings sigma-major, each task's best setting
        (:func:`kclf.model_selection.best_index`), and
        the settings' widths and lambdas."""
        with np.errstate(invalid="ignore"):
            mean = np.where(self.count > 0, self.total / np.maximum(self.count, 1), np.nan)
        mean = mean.reshape(mean.shape[0], -1)
        grid_s = np.repeat(self.sigmas, self.lams.size)
        grid_l = np.tile(self.lams, self.sigmas.size)
        best = np.array([best_index(row, scoring, grid_s, grid_l) for row in mean], dtype=int)
        return mean, best, grid_s, grid_l


class KernelGridSearch(KernelMixin, ClassifierMixin, BaseEstimator):
    """Base of the sigma x lambda searches (:class:`kclf.LSPCCV`,
    :class:`kclf.KernelLogisticRegressionCV`).

    ``fit(X, y)`` selects and fits one classifier; ``fit(X, Y)`` with a 2-D 0/1 matrix
    (n_samples, n_tasks) one binary classifier per task, each with its own sigma and
    lambda, sharing X and the folds.  A task with one class is not searched (a warning
    names it) and predicts that class with probability 1.

    The search's parameters are ``sigmas``, ``lams``, ``cv``, ``scoring``,
    ``random_state`` (the folds'), ``kernel``, ``sigma_factors`` and ``verbose``.  A
    subclass adds its model's parameters to ``_parameter_constraints`` (``random_state``
    and ``kernel`` among them), to ``__init__`` (which passes the search's on to this
    one's) and defines

    * ``_needs_inputs``: ``(name, what it does)`` of the option that needs the inputs,
      not their Gram matrix (rejected with ``kernel="precomputed"``);
    * ``_search(X, y, labels, folds, table)``: add every fold's scores to ``table``
      (:class:`ScoreTable`; ``labels`` (n, n_tasks) class indices of the searched tasks);
      returns what the refit may reuse;
    * ``_refit(X, y, reuse)``: the single-task model at ``sigma_``, ``lam_``;
    * ``_refit_tasks(X, Y, fit_tasks, sigmas, lams, reuse)``: the searched tasks' models
      at their chosen settings, and ``_tasks_proba(X)`` / ``_tasks_decision(X)`` (n,
      n_tasks) of all tasks (``X`` the array :meth:`_test_inputs` checked).

    The search keeps ``n_features_in_`` (and ``feature_names_in_`` when ``fit`` had a
    DataFrame) itself and checks test inputs against them in its own name; every model
    inside is fitted on, and given, plain arrays.
    """

    #: The grid and the folds; a subclass adds its model's parameters.
    _parameter_constraints = {
        "sigmas": ["array-like", None],
        "lams": ["array-like", None],
        "sigma_factors": ["array-like", None],
        "cv": ["cv_object"],
        "scoring": [StrOptions(set(SCORINGS))],
        "verbose": ["verbose"],
    }

    def __init__(self, sigmas, lams, cv, scoring, random_state, kernel, sigma_factors, verbose):
        self.sigmas = sigmas
        self.lams = lams
        self.cv = cv
        self.scoring = scoring
        self.random_state = random_state
        self.kernel = kernel
        self.sigma_factors = sigma_factors
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _grids(self, X):
        """The validated ``(sigmas, lams)`` (:func:`search_grids`); ``ValueError`` if the
        option ``_needs_inputs = (name, what it does)`` is set with a precomputed kernel."""
        reject_with_precomputed(self, *self._needs_inputs)
        return search_grids(X, self.sigmas, self.lams, self.kernel, self.sigma_factors)

    def _targets(self, y):
        """Set ``classes_``, ``n_tasks_`` (and ``task_constant_``); return ``(y, labels,
        fit_tasks)``: the target (a column raveled), the class indices (n, n_tasks) of the
        tasks searched, and those tasks' indices."""
        name = type(self).__name__
        if y.ndim == 2 and y.shape[1] > 1:
            if not np.isin(y, (0, 1)).all():
                raise ValueError("a 2-D y must be a 0/1 matrix (n_samples, n_tasks)")
            self.n_tasks_ = y.shape[1]
            self.classes_ = np.array([0, 1])
            self.task_constant_, fit_tasks = constant_tasks(y, name, stacklevel=5)
            return y, y[:, fit_tasks].astype(int), fit_tasks
        if y.ndim == 2:
            y = y.ravel()
        self.n_tasks_ = None
        self.classes_, yi = class_labels(y, name)
        if self.scoring == "auc" and self.classes_.size != 2:
            raise ValueError("scoring='auc' needs a binary y")
        return y, yi[:, None], np.array([0])

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Select (sigma, lambda) by CV, then refit on all of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            The training inputs, or their Gram matrix with ``kernel="precomputed"``.
        y : array-like of shape (n_samples,) or (n_samples, n_tasks)
            Class labels (single task), or a 0/1 matrix with one binary task per column.

        Returns
        -------
        self : object
            The fitted search (``sigma_``, ``lam_``, ``best_score_``, ``cv_results_``, and
            ``best_estimator_`` or the per-task models).
        """
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True)
        if self.kernel == "precomputed":
            check_precomputed(X)
        sigmas, lams = self._grids(X)
        y, labels, fit_tasks = self._targets(y)
        folds = cv_splits(self.cv, X, y, self.random_state)
        progress = SearchProgress(type(self).__name__, self.verbose)
        progress(
            f"{X.shape[0]} rows, {labels.shape[1]} task(s): {len(folds)} folds x "
            f"{sigmas.size} widths x {lams.size} lambdas"
        )
        table = ScoreTable(labels.shape[1], sigmas, lams, progress, len(folds), self.scoring)
        reuse = self._search(X, y, labels, folds, table)
        mean, best, grid_s, grid_l = table.choose(self.scoring)
        if self.n_tasks_ is None:
            self.cv_results_ = {"sigma": grid_s, "lam": grid_l, "mean_test_score": mean[0]}
            self.sigma_ = None if np.isnan(grid_s[best[0]]) else float(grid_s[best[0]])
            self.lam_ = float(grid_l[best[0]])
            self.best_score_ = float(mean[0, best[0]])
            self.best_estimator_ = self._refit(X, y, reuse)
            width = "no width" if self.sigma_ is None else f"sigma={self.sigma_:.4g}"
            progress(
                f"refitted at {width}, lam={self.lam_:.4g} (CV {self.scoring} "
                f"{self.best_score_:.4g})"
            )
            return self
        self.cv_results_, self.sigma_, self.lam_, self.best_score_ = task_choices(
            mean, best, grid_s, grid_l, fit_tasks, self.n_tasks_
        )
        self._refit_tasks(X, y, fit_tasks, grid_s[best], grid_l[best], reuse)
        progress(f"refitted {fit_tasks.size} task(s) at their chosen settings")
        return self

    def _test_inputs(self, X):
        """``X`` checked in this search's own name, as scikit-learn's
        ``validate_data(reset=False)`` does (its width, and its column names when ``fit``
        had a DataFrame: other or reordered columns are refused), as the float array every
        model of the search was fitted on and is given."""
        check_is_fitted(self)
        if self.kernel == "precomputed":
            check_precomputed(X, n_train=self.n_features_in_)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def predict_proba(self, X):
        """Class probabilities of the chosen model(s): ``best_estimator_``'s (LSPC: Eq. 4,
        5 or 6 by ``rounding``; kernel logistic regression: Eq. 2, coupled by Eq. 10-11).

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
        X = self._test_inputs(X)
        if self.n_tasks_ is None:
            return self.best_estimator_.predict_proba(X)
        return self._tasks_proba(X)

    def decision_function(self, X):
        """Scores ranked like :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`predict_proba`.

        Returns
        -------
        scores : ndarray of shape (n_samples,), (n_samples, n_classes) or (n_samples, n_tasks)
            Single task: ``best_estimator_.decision_function``.  Multi-task: the log-odds
            per task (LSPC with ``rounding="none"``: ``2 p - 1``; a posterior of exactly 0
            or 1, and a one-class task of kernel logistic regression:
            ``-+CERTAIN_LOG_ODDS = -+745``).
        """
        X = self._test_inputs(X)
        if self.n_tasks_ is None:
            return self.best_estimator_.decision_function(X)
        return self._tasks_decision(X)

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
        X = self._test_inputs(X)
        if self.n_tasks_ is None:
            return self.best_estimator_.predict(X)
        return (self._tasks_proba(X) > 0.5).astype(int)
