"""Cross-validated kernel logistic regression over sigma x lambda grids."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from .._array_api import device, get_namespace
from .._base import log_odds
from .._search import KernelGridSearch
from .._validation import warn_convergence
from . import _array_api_paths as xpaths
from ._array_api_search import search as xp_search
from ._multinomial import check_multinomial, multinomial_path
from ._solver import IRLSPaths
from .klr import KernelLogisticRegression

# the parameters passed on to every KernelLogisticRegression of the search
MODEL_PARAMS = (
    "kernel",
    "multi_class",
    "tol",
    "max_iter",
    "cg_tol",
    "fit_intercept",
    "solver",
    "n_components",
)


class KernelLogisticRegressionCV(KernelGridSearch):
    """Kernel logistic regression with sigma and lambda chosen by K-fold CV.

    ``fit(X, y)`` selects and fits one classifier (binary, or multi-class by pairwise
    coupling or one-vs-rest); ``fit(X, Y)`` with a 2-D 0/1 matrix (n_samples, n_tasks)
    selects and fits one binary classifier per task, each with its own sigma and lambda,
    as :class:`kclf.LSPCCV` does.

    Fast path: for every (sigma, fold) the kernel is computed once (on all of ``X``, then
    cut into the folds); all lambdas of the grid and all tasks (or one-vs-rest classes)
    are then fitted by one call of the IRLS solver, whose conjugate-gradient
    iterations apply the shared kernel to all (task, lambda) columns as one matrix
    product.  Each setting is fitted to the same tolerance as a separate
    :class:`KernelLogisticRegression` would be, so the choice equals the naive loop's up
    to that tolerance.  In pairwise mode every pair's sub-kernel is a block of the fold's
    kernel, and its lambda path is solved in one call.  If some of these fits do not
    reach ``tol`` within ``max_iter`` IRLS steps, ``fit`` warns once with their number
    (``ConvergenceWarning``), as the final fit does for itself.

    Ties of the mean CV score (within round-off) go to the smoother model: the largest
    sigma, then the largest lambda.

    A task of a 2-D ``Y`` with one class only is not searched: it predicts that class with
    probability 1 (and ``fit`` warns, naming it); its ``sigma_``, ``lam_`` and
    ``best_score_`` are NaN and its entry of ``estimators_`` is None.

    Parameters
    ----------
    sigmas : array-like or None
        Candidate widths; ``None``: ``sigma_factors`` times the median pairwise distance
        of the training inputs (the same default as ``LSPCCV``).  Ignored for non-rbf
        kernels.
    lams : array-like or None
        Candidate lambdas (Eq. 9); ``None``: nine from 1e-3 to 10 by factors of
        sqrt(10)
        (:data:`kclf.model_selection.DEFAULT_LAMS`).
    sigma_factors : array-like or None, default=None
        With ``sigmas=None``: the candidate widths as multiples of the median pairwise
        distance of the training inputs (:func:`kclf.model_selection.sigma_grid`);
        ``None``: nine factors from 1/8 to 2 by factors of sqrt(2)
        (:data:`kclf.model_selection.DEFAULT_SIGMA_FACTORS`).  Not with ``sigmas``.  The
        chosen width is ``sigma_``.
    cv : int, splitter or iterable, default=2
        An integer: the number of folds, stratified for one task when possible;
        unshuffled with ``random_state=None`` (as scikit-learn's searches with an integer
        ``cv``, so a fit repeats exactly), shuffled by a given ``random_state``; the same
        folds as ``LSPCCV``'s.  Otherwise a scikit-learn splitter or an iterable of
        ``(train, validation)`` index arrays.
    scoring : {"error", "log_loss", "auc"}, default="error"
    multi_class : {"pairwise", "ovr", "multinomial"}, default="pairwise"
        As in :class:`KernelLogisticRegression`; ``"multinomial"`` (with ``n_components``)
        fits the softmax model of every fold along the lambda path, each lambda warm-started
        from the last, on the design of the width (computed once, shared by the folds).
    random_state : int, RandomState or None, default=None
        Seed of the fold shuffling (None: unshuffled folds) and of the Nystroem
        landmarks with ``n_components``.
    kernel, tol, max_iter, cg_tol, fit_intercept, solver
        As in :class:`KernelLogisticRegression`.
    n_components : int or None, default=None
        The Nystroem path of :class:`KernelLogisticRegression`: ``K ~ Phi Phi^T`` of this
        rank, memory O(n m).  Per width the feature map is fitted once on all of ``X``
        (the landmarks drawn with ``random_state``, as the final
        ``KernelLogisticRegression(n_components=m, random_state=random_state)`` fit on
        ``X`` draws them), and every fold and task is fitted in those features along the
        lambda path, from the largest lambda to the smallest, each fit started from the
        last one's solution and preconditioned by its Hessians
        (the primal Newton problem).  Pairwise multi-class mode shares that design
        between the pairs (as the final model shares its landmarks): each pair's lambda
        path is fitted on its rows of it, so a pair costs ``n_pair m`` per pass.
    verbose : int, default=0
        0: silent.  1 or more: one line to stderr per (width, fold) with its best
        score over the lambdas, and one for the refit, each with the seconds elapsed.
    n_jobs : int or None, default=None
        The cores of the search, as in scikit-learn (``-1``: all).  An integer: every
        BLAS call of the fit runs on one thread (``threadpoolctl``) and up to ``n_jobs``
        widths of the grid are searched at once on threads (joblib's threading backend),
        so the results are identical for every ``n_jobs``; each width running holds its
        own kernel matrix (n x n, or the n x m Nystroem design).  None: one width at a
        time, the BLAS library's threads as configured (results equal to an integer
        ``n_jobs``'s to round-off).

    Attributes
    ----------
    sigma_, lam_, best_score_, cv_results_, n_tasks_, task_constant_
        The choice and the mean CV scores, as in :class:`kclf.LSPCCV`.
    best_estimator_ : KernelLogisticRegression
        The refitted model (single-task mode).
    estimators_ : list of KernelLogisticRegression or None
        Multi-task mode only, one per task (None for a one-class task).
    n_iter_ : ndarray
        IRLS steps of the final fit(s).

    Notes
    -----
    Array API inputs (``array_api_dispatch=True``): the search runs in their namespace and
    on their device, as :class:`KernelLogisticRegression` (its "Array API"): per width the
    kernel or the Nystroem design once, every fold's lambdas by the one Newton loop
    (Nystroem: warm-started along the lambda path, the NumPy path's preconditioned
    Newton-CG steps), the scores there;
    only the table of mean scores comes to the host.  Pairwise coupling of more than two
    classes runs there too: per (width, fold) every pair's warm-started lambda path on its
    training rows (Nystroem: all pairs one Newton loop on the shared design, the rows
    outside a pair weighing 0; exact kernel: one IRLS call per pair), the validation
    rows' pairwise probabilities coupled by Eq. (10) per lambda in the namespace.
    ``multi_class="multinomial"`` and a callable kernel are refused in one line.

    ``decision_function`` is ``best_estimator_``'s (single task: the log-odds ``f(x)``,
    a strictly increasing function of ``predict_proba(X)[:, 1]`` that also orders the
    rows whose probabilities round to 1).  Multi-task: the log-odds of each task's
    probability, ``log p - log(1 - p)`` (``-+745`` at exactly 0 or 1, and for a one-class
    task), tied exactly where the probabilities are, as scikit-learn's multi-output
    checks require.
    """

    _needs_inputs = ("n_components", "Nystroem mode")
    _parameter_constraints = {
        **KernelGridSearch._parameter_constraints,
        **{
            name: KernelLogisticRegression._parameter_constraints[name]
            for name in (*MODEL_PARAMS, "random_state")
        },
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        sigmas=None,
        lams=None,
        *,
        sigma_factors=None,
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
        verbose=0,
        n_jobs=None,
    ):
        super().__init__(sigmas, lams, cv, scoring, random_state, kernel, sigma_factors, verbose)
        self.multi_class = multi_class
        self.tol = tol
        self.max_iter = max_iter
        self.cg_tol = cg_tol
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.n_components = n_components
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel in ("rbf", "linear")
        tags.array_api_support = xpaths.supported(self) and self.multi_class != "multinomial"
        return tags

    def _array_api_unsupported(self):
        check_multinomial(self, is_array_api=True)
        xpaths.unsupported(self)

    def _grids(self, X, sample_weight=None):
        check_multinomial(self)
        return super()._grids(X, sample_weight)

    def _estimator(self, sigma, lam):
        """The model at one setting (``sigma`` NaN: no width)."""
        return KernelLogisticRegression(
            sigma=None if np.isnan(sigma) else float(sigma),
            lam=float(lam),
            random_state=self.random_state if self.n_components is not None else None,
            **{name: getattr(self, name) for name in MODEL_PARAMS},
        )

    def _paths(self):
        """The search of this model (the solver's grid paths)."""
        return IRLSPaths(
            self.kernel,
            self.multi_class,
            self.scoring,
            self.tol,
            self.max_iter,
            self.cg_tol,
            self.solver,
            self.fit_intercept,
            self.n_components,
            self.random_state,
            multinomial_path,
        )

    def _search(self, X, y, labels, folds, table, sample_weight=None):
        """Every (task, sigma, lambda)'s fold scores by warm IRLS paths; warns once
        (``ConvergenceWarning``) if some of the search's IRLS fits stopped at
        ``max_iter``."""
        xp, is_xp = get_namespace(X)
        if is_xp:
            xpaths.unsupported(self)
            X = xpaths.compute_dtype(self, xp, X)
            conv = xp_search(
                self._paths(), xp, X, labels, folds, table, self.classes_, sample_weight
            )
        else:
            conv = self._paths().search(X, labels, folds, table, self.classes_, sample_weight)
        if not conv.all():
            warn_convergence(
                f"KernelLogisticRegressionCV: {int(np.sum(~conv))} of {conv.size} IRLS "
                f"fits of the search (settings x folds x problems) did not reach "
                f"tol={self.tol} within max_iter={self.max_iter} steps",
                stacklevel=3,
            )

    def _refit(self, X, y, reuse, sample_weight=None):
        est = self._estimator(np.nan if self.sigma_ is None else self.sigma_, self.lam_)
        est.fit(X, y, **({} if sample_weight is None else {"sample_weight": sample_weight}))
        self.n_iter_ = est.n_iter_
        return est

    def _refit_tasks(self, X, Y, fit_tasks, sig_t, lam_t, reuse, sample_weight=None):
        self.estimators_ = [None] * self.n_tasks_
        weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
        for t, sigma, lam in zip(fit_tasks, sig_t, lam_t):
            est = self._estimator(sigma, lam)
            self.estimators_[t] = est.fit(X, np.asarray(Y)[:, t].astype(int), **weighted)
        fitted = [e for e in self.estimators_ if e is not None]
        xp, _ = get_namespace(X)
        self.n_iter_ = xp.concat([e.n_iter_ for e in fitted]) if fitted else np.array([])

    def _tasks_proba(self, X):
        """P(task positive | x) of every task's model (Eq. 2)."""
        xp, is_xp = get_namespace(X)
        if is_xp:
            return xp.stack(
                [
                    xp.full(
                        X.shape[0], float(self.task_constant_[t]), dtype=X.dtype, device=device(X)
                    )
                    if est is None
                    else est.predict_proba(X)[:, 1]
                    for t, est in enumerate(self.estimators_)
                ],
                axis=1,
            )
        out = np.empty((X.shape[0], self.n_tasks_))
        for t, est in enumerate(self.estimators_):
            out[:, t] = self.task_constant_[t] if est is None else est.predict_proba(X)[:, 1]
        return out

    def _tasks_decision(self, X):
        """The log-odds of every task's probability, ``log p - log(1 - p)``
        (:func:`kclf._base.log_odds`; ``-+CERTAIN_LOG_ODDS = -+745`` at exactly 0 or 1, and
        for a one-class task): a strictly increasing function of :meth:`predict_proba`'s
        column wherever float64 resolves it (p above about 1e-100), equal exactly where
        the probabilities are, so that the two rank the rows alike (scikit-learn's
        multi-output checks); ``f(x)`` itself above 36.7 would order rows whose
        probabilities have all rounded to 1."""
        P = self._tasks_proba(X)
        xp, is_xp = get_namespace(P)
        if is_xp:
            from ..lspc._array_api_paths import log_odds as xp_log_odds

            return xp_log_odds(xp, P)
        return log_odds(P)
