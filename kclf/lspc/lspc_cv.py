"""Cross-validated LSPC over sigma x lambda grids, for one task or many tasks sharing X."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._array_api import device, get_namespace
from .._base import log_odds
from .._search import KernelGridSearch
from ..kernels import gram
from . import _array_api_paths as xpaths
from ._solver import GridPaths, effective_alpha, round_outputs
from .lspc import LSPC


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
        Candidate Gaussian widths; ``None``: ``sigma_factors`` times the median pairwise
        distance of the training inputs.  Ignored for non-rbf kernels.
    lams : array-like or None
        Candidate lambdas; ``None``: nine from 1e-3 to 10 by factors of
        sqrt(10)
        (:data:`kclf.model_selection.DEFAULT_LAMS`).
    sigma_factors : array-like or None, default=None
        With ``sigmas=None``: the candidate widths as multiples of the median pairwise
        distance of the training inputs (:func:`kclf.model_selection.sigma_grid`);
        ``None``: nine factors from 1/8 to 2 by factors of sqrt(2)
        (:data:`kclf.model_selection.DEFAULT_SIGMA_FACTORS`).  Not with ``sigmas``.  The
        chosen width is ``sigma_``.
    cv : int, splitter or iterable, default=2
        An integer: the number of folds, stratified for a single task when every class
        has that many samples; unshuffled (the rows in their order) with
        ``random_state=None``, as scikit-learn's searches with an integer ``cv``, so a
        fit repeats exactly; shuffled by a given ``random_state``.  Otherwise a scikit-learn
        splitter (its ``split(X, y)`` is used) or an iterable of ``(train, validation)``
        index arrays, as in scikit-learn's searches.
    rounding : {"outputs", "parameters", "none"}, default="outputs"
        As in :class:`kclf.LSPC` (LSPC-new, LSPC, LSPC').
    scoring : {"error", "log_loss", "auc"}, default="error"
        Validation criterion: misclassification rate, log loss (lower is better) or
        ROC AUC (binary tasks only, higher is better).
    random_state : int, RandomState or None, default=None
        Seed of the fold shuffling (None: unshuffled folds) and of the centres with
        ``n_basis`` (None: drawn from numpy's global generator).
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
        ``y``).  The validation rows are scored with the same costs: each weighted as
        the loss weighs it (``"balanced"`` from the validation rows' own classes, i.e.
        the balanced error rate), so the search picks the setting of least
        cost-weighted error, the costs ``class_weight`` states.  Weighted, the full
        basis's ``H`` differs per task: one eigendecomposition of ``K^T W K / m`` per
        (sigma, fold, task), as for ``basis="classwise"``.  scikit-learn's
        ``check_class_weight_classifiers`` (weights 1000 : 0.0001, asking that 87 % of
        the test rows go to the heavy class) passes at the default grid: 68 of the 81
        settings make no validation error on the heavy class, and what separates them,
        the light classes' errors (about 1e-8 of the validation weight), is below the
        selection's tie tolerance (:data:`kclf.model_selection.TIE_RTOL`, one part in a
        million), so the smoothest of them is chosen.  Unweighted, that tolerance
        changes no choice (0 of the 43 KEEL sets, ``benchmarks/bench_lspccv_rule.py``).
        A one-standard-error rule was rejected: on the two halves of the KEEL suite it
        raised LSPC-new's mean test error by 0.4 and 1.3 points.
    verbose : int, default=0
        0: silent.  1 or more: one line to stderr per (width, fold) with its best
        score over the lambdas, and one for the refit, each with the seconds elapsed.
    n_jobs : int or None, default=None
        The cores of the search, as in scikit-learn (``-1``: all).  An integer: every
        BLAS call of the fit runs on one thread (``threadpoolctl``) and up to ``n_jobs``
        widths of the grid are searched at once on threads (joblib's threading backend),
        so the results are identical for every ``n_jobs``; each width running holds its
        own kernel matrix (n x n, or n x b with ``n_basis``).  None: one width at a time,
        the BLAS library's threads as configured (results equal to an integer
        ``n_jobs``'s to round-off).  ``benchmarks/bench_lspc_jobs.py`` measures the
        speed-up: on this project's 2-core machine ``n_jobs=2`` ran 0.84-1.00 times as
        fast as ``n_jobs=1`` (the search's eigendecompositions and exponentials are
        bound by memory bandwidth there, which two threads share), and ``n_jobs=1``
        1.4-3.3 times as fast as None (BLAS's two threads only add overhead to those
        calls).

    Notes
    -----
    ``fit(X, y, sample_weight)`` weighs each fold's fit as :class:`kclf.LSPC` does (its
    Notes), scores the validation rows with their weights (weighted error, log loss,
    AUC) and refits with all of them; the default widths are then multiples of the
    weighted median distance, and the low-rank centres are drawn among the rows of
    positive weight.  With ``cv`` given as groups of rows, integer weights give the
    search of the repeated rows (an integer ``cv`` splits the rows as they are, a zero
    weight's row included).  Every path takes them: exact (the fold's Gram matrix scaled
    by ``sqrt(w)`` on both sides, still one eigendecomposition per fold), low rank (the
    rows scaled by ``sqrt(w)`` in the fold Gram sums), class-wise or class-weighted
    blocks, several tasks.  Sparse ``X`` (CSR / CSC) with the rbf and linear kernels.

    :meth:`decision_function`: one task, that of ``best_estimator_``
    (:meth:`kclf.LSPC.decision_function`: ``2 p - 1``, LSPC-new's ties at 0 and 1 broken
    by the unrounded outputs); several tasks, each task's log-odds with its ties kept
    (``-+745`` at exactly 0 or 1), since scikit-learn's multi-output check asks every
    task's scores to rank exactly as its probabilities, ties included.

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

    #: The scores :class:`kclf.PlattScaled` fits its sigmoid on: the posteriors, whose
    #: least-squares errors (Eq. 3) are additive on the probability scale.
    calibration_response_method = "predict_proba"
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
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        sigmas=None,
        lams=None,
        *,
        sigma_factors=None,
        cv=2,
        random_state=None,
        rounding="outputs",
        scoring="error",
        kernel="rbf",
        n_basis=None,
        centers="random",
        basis="full",
        class_weight=None,
        verbose=0,
        n_jobs=None,
    ):
        super().__init__(sigmas, lams, cv, scoring, random_state, kernel, sigma_factors, verbose)
        self.rounding = rounding
        self.n_basis = n_basis
        self.centers = centers
        self.basis = basis
        self.class_weight = class_weight
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel in ("rbf", "linear")
        tags.array_api_support = xpaths.supported(self)
        return tags

    def _paths(self, sample_weight=None):
        """The search and refit of this LSPC model (:class:`kclf.lspc._solver.GridPaths`)."""
        return GridPaths(
            self.kernel,
            self.rounding,
            self.scoring,
            self.basis,
            self.class_weight,
            self.classes_,
            self.n_tasks_ is not None,
            self.n_basis,
            self.centers,
            self.random_state,
            sample_weight,
        )

    def _array_api_unsupported(self):
        xpaths.unsupported(self, multitask=False)

    def _search(self, X, y, labels, folds, table, sample_weight=None):
        xp, is_xp = get_namespace(X)
        if is_xp:
            xpaths.unsupported(self, multitask=self.n_tasks_ is not None)
            return xpaths.search(self, xp, X, labels, folds, table, sample_weight)
        return self._paths(sample_weight).search(X, y, labels, folds, table)

    def _refit(self, X, y, reuse, sample_weight=None):
        """Eq. (3) on all of ``X`` at ``sigma_``, ``lam_`` (the search's centres)."""
        model = ("rounding", "kernel", "n_basis", "centers", "random_state", "basis")
        model += ("class_weight",)
        est = LSPC(self.sigma_, self.lam_, **{name: getattr(self, name) for name in model})
        return est._fit(X, y, centers=reuse["centers"], sample_weight=sample_weight)

    def _refit_tasks(self, X, Y, fit_tasks, sig_t, lam_t, reuse, sample_weight=None):
        """``alpha_`` (n_basis, n_tasks, 2) of every searched task, and the kernel
        centres: the search's (``n_basis``) or a copy of ``X``."""
        xp, is_xp = get_namespace(X)
        if is_xp:
            self.alpha_ = xpaths.refit_tasks(
                self, xp, X, fit_tasks, sig_t, lam_t, reuse, sample_weight
            )
        else:
            paths = self._paths(sample_weight)
            self.alpha_ = paths.refit_tasks(X, Y, fit_tasks, sig_t, lam_t, reuse, self.n_tasks_)
        if reuse["centers"] is not None:
            self.center_index_, self.X_fit_ = reuse["centers"]
            if is_xp:
                self.center_index_ = xp.asarray(self.center_index_, device=device(self.X_fit_))
        else:
            # a copy: the caller may change X after fit (a precomputed Gram matrix is
            # only kept for its shape)
            self.X_fit_ = X if self.kernel == "precomputed" else xp.asarray(X, copy=True)

    def _tasks_proba(self, X):
        """P(task positive | x) of every task (Eq. 4, 5 or 6 by ``rounding``)."""
        xp, is_xp = get_namespace(X)
        if is_xp:
            return xpaths.tasks_proba(self, xp, X)
        out = np.empty((X.shape[0], self.n_tasks_))
        const = ~np.isnan(self.task_constant_)
        out[:, const] = self.task_constant_[const]
        fitted = np.flatnonzero(~const)
        sig = self.sigma_[fitted]
        for sigma in np.unique(sig):
            tasks = fitted[np.isnan(sig) if np.isnan(sigma) else sig == sigma]
            K = X if self.kernel == "precomputed" else gram(self.kernel, X, self.X_fit_, sigma)
            for t in tasks:
                F = K @ effective_alpha(self.alpha_[:, t, :], self.rounding)
                out[:, t] = round_outputs(F, self.rounding)[:, 1]
        return out

    def _tasks_decision(self, X):
        """The log-odds of :meth:`_tasks_proba` (``2 p - 1`` for ``rounding="none"``),
        ties kept: scikit-learn's multi-output check asks every task's scores to rank
        exactly as its probabilities, ties included."""
        P = self._tasks_proba(X)
        xp, is_xp = get_namespace(P)
        if is_xp:
            return xpaths.log_odds(xp, P) if self.rounding != "none" else 2.0 * P - 1.0
        return log_odds(P) if self.rounding != "none" else 2.0 * P - 1.0
