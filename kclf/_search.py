"""The cross-validation search :class:`kclf.LSPCCV` and
:class:`kclf.KernelLogisticRegressionCV` share (private).

Both search a sigma x lambda grid on the same folds and choose with the same rule; the
default grids and that rule are public, in :mod:`kclf.model_selection`.
:class:`KernelGridSearch` is their common base: the grids (:func:`search_grids`), the
targets (one task or a 0/1 task matrix), the sample weights, the folds
(:func:`kclf._folds.cv_splits`), the cores (:class:`kclf._parallel.Workers`), the table
of fold scores (:class:`ScoreTable`), ``cv_results_`` and the multi-task predictions;
each search keeps only how it scores a fold (:mod:`kclf._scoring`) and how it refits.
This module sits above the estimators' solvers, which import from ``kclf._folds``,
``kclf._scoring`` and ``kclf._parallel`` only.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from ._array_api import device, get_namespace, input_namespace, same_namespace, to_numpy
from ._base import KernelMixin
from ._folds import cv_splits
from ._parallel import Workers
from ._progress import SILENT, SearchProgress
from ._scoring import SCORINGS
from ._validation import (
    check_precomputed,
    class_labels,
    positive_grid,
    reject_with_precomputed,
    validate_data,
)
from .model_selection import DEFAULT_LAMS, best_index, sigma_grid


def search_grids(X, sigmas, lams, kernel, sigma_factors=None, sample_weight=None):
    """Validated ``(sigmas, lams)`` of a CV search (shared by the LSPC and KLR searches).

    ``sigmas`` None gives :func:`kclf.model_selection.sigma_grid` of ``X`` at
    ``sigma_factors`` (None: the default factors), ``lams`` None
    :data:`kclf.model_selection.DEFAULT_LAMS`; non-RBF kernels have no width (one NaN).
    ``sample_weight``: the weighted median (:func:`kclf.kernels.median_sigma`).
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
        sigmas = sigma_grid(X, sigma_factors, sample_weight=sample_weight)
    else:
        sigmas = positive_grid(sigmas, "sigmas")
    return sigmas, lams


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
    the fold (of ``n_folds``) and its best score over the lambdas (the mean over tasks).
    ``workers`` (:class:`kclf._parallel.Workers`) run the widths of :meth:`run`."""

    def __init__(
        self,
        n_tasks,
        sigmas,
        lams,
        progress=SILENT,
        n_folds=None,
        scoring="error",
        workers=None,
    ):
        self.sigmas, self.lams = sigmas, lams
        self.total = np.zeros((n_tasks, sigmas.size, lams.size))
        self.count = np.zeros_like(self.total)
        self.progress, self.n_folds, self.scoring = progress, n_folds, scoring
        self.folds_seen = np.zeros(sigmas.size, dtype=int)
        self.workers = Workers() if workers is None else workers

    def run(self, width, widths=None):
        """Score every width, on the workers' threads: ``width(si)`` returns
        ``(scores, extra)``, the list of its folds' scores (each (n_lams, n_tasks), in
        fold order) and anything the refit needs; they are added in the order of the
        widths (the same sums, the same bits, for any ``n_jobs``).  ``widths``: the
        indices to run (default all).  Returns the extras, in that order.

        ``width`` must compute its width from the inputs alone (buffers of its own, no
        state shared with another width), as it may run beside the others."""
        widths = range(self.sigmas.size) if widths is None else widths
        extras = []
        for si, (scores, extra) in zip(widths, self.workers.map(width, widths)):
            for sc in scores:
                self.add(si, sc)
            extras.append(extra)
        return extras

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
    names it) and predicts that class with probability 1.  A 2-D ``Y`` whose rows each
    hold exactly one 1 (a one-hot multi-class target) warns that its columns are fitted
    as independent tasks and points to the 1-D labels.

    The search's parameters are ``sigmas``, ``lams``, ``cv``, ``scoring``,
    ``random_state`` (the folds': None leaves them unshuffled, as scikit-learn's
    searches with an integer ``cv``), ``kernel``, ``sigma_factors`` and ``verbose``.  A
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

    Hooks for what a subclass may support:

    * **sample weights**: ``fit(X, y, sample_weight)`` checks the weights
      (``sklearn.utils.validation._check_sample_weight``: non-negative, one per row, not
      all zero) and, when given, passes them as the keyword ``sample_weight`` (a float
      array (n,) over all rows) to ``_search``, ``_refit`` and ``_refit_tasks``; the
      default widths are then multiples of the weighted median distance
      (:func:`kclf.kernels.median_sigma`).  The subclass fits fold ``(tr, va)`` with
      ``sample_weight[tr]``, scores its validation rows with ``sample_weight[va]``
      (every function of :mod:`kclf._scoring` takes them) and refits with all of them.
      Without weights the keyword is not passed, so a subclass that takes none needs no
      such parameter (it then hides it: ``def fit(self, X, y): return super().fit(X,
      y)``, so scikit-learn's checks know).
    * **cores**: a subclass with an ``n_jobs`` parameter (in its ``__init__`` and
      ``_parameter_constraints``; this class's default is None) gets
      :class:`kclf._parallel.Workers` for it: the whole fit runs in
      ``workers.fitting()`` (one BLAS thread with a given ``n_jobs``), and ``_search``
      runs its widths through ``table.run(width)`` (:meth:`ScoreTable.run`), in
      parallel and with results identical for any ``n_jobs``.
    * **sparse input**: a subclass whose tags say ``input_tags.sparse`` gets CSR / CSC
      ``X`` as given (:mod:`kclf.kernels` computes rbf and linear kernels from it).

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
    #: The cores of a subclass without an ``n_jobs`` parameter: the BLAS library's own.
    n_jobs = None

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

    def _accept_sparse(self):
        """What ``validate_data`` accepts: CSR / CSC where the tags say sparse."""
        return ("csr", "csc") if self.__sklearn_tags__().input_tags.sparse else False

    def _grids(self, X, sample_weight=None):
        """The validated ``(sigmas, lams)`` (:func:`search_grids`); ``ValueError`` if the
        option ``_needs_inputs = (name, what it does)`` is set with a precomputed kernel."""
        reject_with_precomputed(self, *self._needs_inputs)
        return search_grids(
            X, self.sigmas, self.lams, self.kernel, self.sigma_factors, sample_weight
        )

    def _targets(self, y):
        """Set ``classes_``, ``n_tasks_`` (and ``task_constant_``); return ``(y, labels,
        fit_tasks)``: the target (a column raveled), the class indices (n, n_tasks) of the
        tasks searched, and those tasks' indices."""
        name = type(self).__name__
        if y.ndim == 2 and y.shape[1] > 1:
            if not np.isin(y, (0, 1)).all():
                raise ValueError("a 2-D y must be a 0/1 matrix (n_samples, n_tasks)")
            if np.all(np.sum(y, axis=1) == 1):
                warnings.warn(
                    f"{name}: every row of the 2-D y holds exactly one 1 (a one-hot "
                    f"multi-class target?): each of its {y.shape[1]} columns is fitted as "
                    "an independent binary task, so the rows of predict_proba need not "
                    "sum to 1; for one multi-class model pass the class labels as a 1-D "
                    "vector, e.g. y.argmax(axis=1)",
                    UserWarning,
                    stacklevel=4,
                )
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
    def fit(self, X, y, sample_weight=None):
        """Select (sigma, lambda) by CV, then refit on all of ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_samples)
            The training inputs (sparse where the estimator's tags say so), or their Gram
            matrix with ``kernel="precomputed"``.
        y : array-like of shape (n_samples,) or (n_samples, n_tasks)
            Class labels (single task), or a 0/1 matrix with one binary task per column.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows: each fold's fit and the refit are weighted
            by them, and so are the validation scores (weighted error, log loss, AUC).

        Returns
        -------
        self : object
            The fitted search (``sigma_``, ``lam_``, ``best_score_``, ``cv_results_``, and
            ``best_estimator_`` or the per-task models).
        """
        xp, is_xp = get_namespace(X)
        if is_xp:
            self._array_api_unsupported()  # one line naming a parameter the path lacks
        is_xp = is_xp and self.__sklearn_tags__().array_api_support  # else NumPy copies
        if is_xp:
            X, y = validate_data(self, X, y, dtype=[xp.float64, xp.float32], multi_output=True)
            y = to_numpy(y, xp)
        else:
            X, y = validate_data(
                self, X, y, dtype=np.float64, multi_output=True, accept_sparse=self._accept_sparse()
            )
        if self.kernel == "precomputed":
            check_precomputed(X)
        weighted = {}
        if sample_weight is not None:
            if is_xp:
                sample_weight = to_numpy(sample_weight, xp)
            sample_weight = _check_sample_weight(
                sample_weight, np.empty((X.shape[0], 0)), dtype=np.float64, ensure_non_negative=True
            )
            weighted = {"sample_weight": sample_weight}
        sigmas, lams = self._grids(X, sample_weight)
        y, labels, fit_tasks = self._targets(y)
        folds = cv_splits(self.cv, X, y, self.random_state)
        progress = SearchProgress(type(self).__name__, self.verbose)
        progress(
            f"{X.shape[0]} rows, {labels.shape[1]} task(s): {len(folds)} folds x "
            f"{sigmas.size} widths x {lams.size} lambdas"
        )
        workers = Workers(self.n_jobs)
        table = ScoreTable(
            labels.shape[1], sigmas, lams, progress, len(folds), self.scoring, workers
        )
        with workers.fitting():
            reuse = self._search(X, y, labels, folds, table, **weighted)
            mean, best, grid_s, grid_l = table.choose(self.scoring)
            if self.n_tasks_ is None:
                self.cv_results_ = {"sigma": grid_s, "lam": grid_l, "mean_test_score": mean[0]}
                self.sigma_ = None if np.isnan(grid_s[best[0]]) else float(grid_s[best[0]])
                self.lam_ = float(grid_l[best[0]])
                self.best_score_ = float(mean[0, best[0]])
                self.best_estimator_ = self._refit(X, y, reuse, **weighted)
                if is_xp:
                    self.classes_ = self.best_estimator_.classes_
                width = "no width" if self.sigma_ is None else f"sigma={self.sigma_:.4g}"
                progress(
                    f"refitted at {width}, lam={self.lam_:.4g} (CV {self.scoring} "
                    f"{self.best_score_:.4g})"
                )
                return self
            self.cv_results_, self.sigma_, self.lam_, self.best_score_ = task_choices(
                mean, best, grid_s, grid_l, fit_tasks, self.n_tasks_
            )
            self._refit_tasks(X, y, fit_tasks, grid_s[best], grid_l[best], reuse, **weighted)
        progress(f"refitted {fit_tasks.size} task(s) at their chosen settings")
        if is_xp:
            self.classes_ = xp.asarray(self.classes_, device=device(X))
        return self

    def _test_inputs(self, X):
        """``X`` checked in this search's own name, as scikit-learn's
        ``validate_data(reset=False)`` does (its width, and its column names when ``fit``
        had a DataFrame: other or reordered columns are refused), as the float array every
        model of the search was fitted on and is given."""
        check_is_fitted(self)
        if self.__sklearn_tags__().array_api_support:
            xp, is_xp = input_namespace(self, X, "classes_")
        else:  # NumPy only: validate_data copies array API inputs to NumPy
            xp, is_xp = np, False
        if self.kernel == "precomputed":
            check_precomputed(X, n_train=self.n_features_in_)
        if is_xp:
            return validate_data(self, X, dtype=[xp.float64, xp.float32], reset=False)
        return validate_data(
            self, X, dtype=np.float64, reset=False, accept_sparse=self._accept_sparse()
        )

    def _array_api_unsupported(self):
        """Raise ``ValueError`` naming a parameter the array API path does not implement."""

    @same_namespace
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

    @same_namespace
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

    @same_namespace
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
        P = self._tasks_proba(X)
        xp, is_xp = get_namespace(P)
        return xp.astype(P > 0.5, xp.int64) if is_xp else (P > 0.5).astype(int)
