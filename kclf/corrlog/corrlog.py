"""Correlated logistic model (CorrLog) for multilabel classification: the estimator.

Li, Xie, You, Bian and Tao, "Correlated Logistic Model With Elastic Net Regularization for
Multilabel Image Classification", IEEE TIP 2016 (arXiv:1904.08098).  Model, Eq. (4), labels
``y in {-1, +1}^m``::

    P(y | x) = exp( sum_i y_i beta_i^T x + sum_{i<j} alpha_ij y_i y_j ) / Z(x)

Learning, Eq. (10)-(13): elastic-net regularised maximum pseudo-likelihood (in the paper's
notation (8), ``lambda_1 = rho2``, ``lambda_2 = coupling_scale * rho2``, ``epsilon = rho1 /
rho2``) by proximal gradient with soft thresholding (Algorithm 1, Eq. (19)-(20)) and FISTA
(Remark 2): :mod:`kclf.corrlog._solver`.  The cross-validated choice of the penalties, each
fold's grid one warm-started path whose screening never changes the solution:
:mod:`kclf.corrlog._penalty_search`.  The decisions (the joint MAP (21), the marginals, the
example-based F1's Bayes decision) and the CV criteria: :mod:`kclf.corrlog._decoding`.
Here: the estimator's parameters, fit, prediction and decoding entry points.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._folds import cv_splits
from .._progress import SearchProgress
from .._validation import binary_labels, label_matrix, validate_data, warn_convergence
from ._decoding import (
    BP_RETRY_DAMPING,
    BP_WARN_FRACTION,
    DECODERS,
    MAX_EXACT_F1_LABELS,
    MAX_EXACT_LABELS,
    _bp_rows,
    _decode,
    _marginals,
    _warn_bp,
)
from ._penalty_search import (
    LABEL_CRITERIA,
    RHO1_GRID,
    RHO2_GRID,
    cv_criteria,
    cv_select,
    label_scorer,
    penalty_grids,
)
from ._solver import fit_penalised, non_constant, solver_features

__all__ = [
    "BP_RETRY_DAMPING",
    "BP_WARN_FRACTION",
    "DECODERS",
    "LABEL_CRITERIA",
    "MAX_EXACT_F1_LABELS",
    "MAX_EXACT_LABELS",
    "RHO1_GRID",
    "RHO2_GRID",
    "CorrLog",
]


class CorrLog(ClassifierMixin, BaseEstimator):
    """Correlated logistic model (CorrLog) for multilabel classification.

    Eq. (4) of Li et al. (2016): a logistic regression per label plus pairwise label
    couplings ``alpha_ij``, learned by elastic-net regularised maximum pseudo-likelihood
    (Eq. (10)-(13), Algorithm 1 with FISTA, Remark 2), predicting the joint MAP label
    vector, Eq. (21), the thresholded marginals or the expected-F1 maximiser.

    Parameters
    ----------
    rho1 : float >= 0 or None, default=None
        Weight of the l1 part of the elastic net (``lambda * epsilon`` in Eq. (8)). None
        chooses it with ``rho2`` from the grids by ``cv``-fold cross-validation (criterion:
        subset accuracy, Hamming loss or example-based F1, following ``decode``); ties go
        to the smoother model, the larger ``rho2``, then the larger ``rho1``.
    rho2 : float >= 0 or None, default=None
        Weight of the squared-l2 part (``lambda_1`` in Eq. (8)); None: chosen by CV.
    penalty : {"shared", "per_label"}, default="shared"
        "shared": the paper's model, one elastic net ``(rho1, rho2)`` on every label's
        weights and (times ``coupling_scale``) on the couplings, Eq. (8). "per_label": the
        weights ``beta_i`` of each label get their own ``(rho1_i, rho2_i)``; the couplings
        keep the shared choice. On the same folds, a second warm-started path holds the
        couplings' penalty at the shared choice and moves the weights' over the grid;
        each label takes the setting of its best held-out log-likelihood there: of its
        marginal ``P(y_i = 1 | x)`` up to :data:`MAX_EXACT_LABELS` labels (exact), of the
        label given the others, Eq. (11), beyond (ties to the smoother model); see
        ``label_criterion``. Costs about twice the shared model's CV. Without CV the two
        coincide.
    label_criterion : {"auto", "marginal", "conditional"}, default="auto"
        The labels' held-out criterion on ``penalty="per_label"``'s second path (unused
        with ``"shared"``): ``"auto"`` as described under ``penalty``; ``"marginal"`` the
        log-likelihood of the marginal (exact or belief propagation's) and
        ``"conditional"`` that of Eq. (11) at every label count (the ablation of
        ``benchmarks/bench_corrlog.py --per-label-criterion``).
    coupling_scale : float >= 0, default=1.0
        Multiplies both penalties on the couplings (``lambda_2 / lambda_1`` of Eq. (8)).
    couplings : bool, default=True
        False fixes ``alpha = 0``: independent logistic regressions (ILR, Eq. (1)) with the
        same elastic net, the paper's baseline.
    inference : {"bp", "exact"}, default="bp"
        Joint MAP of :meth:`predict`: max-product loopy belief propagation (Sec. III-B) or
        enumeration of all ``2^m`` label vectors (m <= 12). The marginals are enumerated
        up to :data:`MAX_EXACT_LABELS` labels with either setting, sum-product belief
        propagation beyond.
    decode : {"map", "marginal", "f1"}, default="map"
        What :meth:`predict` returns, and the CV criterion: the joint MAP (21), the Bayes
        decision for subset accuracy; each marginal thresholded at 1/2, for Hamming loss;
        or the label vector of largest expected example-based F1 under the joint (4) (GFM,
        Dembczynski et al. 2011, from ``P(y_j = 1, |y| = s | x)``: enumerated up to
        :data:`MAX_EXACT_F1_LABELS` labels, Gibbs-sampled beyond, see ``gibbs_sweeps``).
    gibbs_sweeps : int, default=2000
        Sweeps of the Gibbs sampler of ``decode="f1"`` beyond :data:`MAX_EXACT_F1_LABELS`
        labels (after ``gibbs_sweeps // 10`` burn-in), seeded by ``random_state``; each
        estimate's standard error is below ``0.5 / sqrt(n_eff)``, ``n_eff`` effective sweeps.
    bp_max_iter : int, default=50
        Early stop of belief propagation (Sec. III-B). Rows not converged are run again
        with damping :data:`BP_RETRY_DAMPING` (a ``ConvergenceWarning`` when more than
        :data:`BP_WARN_FRACTION` of them still fail); for the MAP they then get the best
        single-flip local search from both runs' last decisions (``bp.max_product(
        polish=True)``), which on scene's frustrated couplings made max-product's MAP equal
        enumeration's on every test photo, against 91-95 % without.
    bp_damping : float in [0, 1), default=0.0
        Message damping of belief propagation (first run).
    scaling : {"standardize", "whiten"} or None, default="standardize"
        Feature preprocessing fitted on the training data: z-scores, or ZCA whitening (the
        authors' choice for scene) regularised by ``whiten_eps`` times the mean eigenvalue.
        The fitted ``coef_`` / ``intercept_`` act on the raw features.
    whiten_eps : float > 0, default=1e-2
    step : {"lipschitz", "backtracking"}, default="backtracking"
        Step ``1/L``: ``L`` the upper bound on the Lipschitz constant of the gradient
        (from the spectral norm of the design matrix, by Lanczos), or backtracking starting
        from that bound.
    monotone : bool, default=True
        Monotone FISTA with adaptive restarts (the objective never increases); False: plain.
    tol : float, default=1e-7
        The final fit stops when an accepted step changes the objective by less than
        ``tol`` relatively.
    cv_tol : float, default=1e-6
        ``tol`` of the fits inside CV: they only rank the grid, each from its neighbour.
    max_iter : int, default=3000
        FISTA iterations per fit.
    cv : int, splitter or iterable, default=3
        The folds of the CV: an integer, that many shuffled folds seeded by
        ``random_state``; or a splitter (``split(X, Y)``) or an iterable of ``(train,
        test)`` index arrays, as in scikit-learn's searches.
    rho1_grid, rho2_grid : sequences of float, default=None
        Grids for the CV (None or empty: :data:`RHO1_GRID`, :data:`RHO2_GRID`).
    n_jobs : int or None, default=None
        Folds solved in parallel threads; each fold's products run on one BLAS thread
        whatever ``n_jobs``, so the fit does not depend on it.
    random_state : int, RandomState instance or None, default=0
        Seeds the shuffled folds of an integer ``cv`` (``check_random_state``: an instance
        is drawn from; the fit itself is deterministic; None: the folds unshuffled, in the
        rows' order, as scikit-learn's searches with an integer ``cv``) and the Gibbs
        sampler of ``decode="f1"`` (an integer gives the same decisions on every call, an
        instance is drawn from at each).
    verbose : int, default=0
        0: silent.  1 or more: one line to stderr per fold of each penalty path of the
        search (its best mean score) and one for the choice, each with the seconds
        elapsed.

    Attributes
    ----------
    classes_ : ndarray
        For an (n, m) 0/1 label matrix, the label indices ``0..m-1`` (the columns of
        :meth:`predict` and :meth:`predict_proba`); for a 1-D binary ``y``, its two class
        values (the one-label model, an elastic-net logistic regression).
    coef_ : ndarray of shape (m, n_features)
        ``beta_i`` on the raw features (zero rows for constant labels).
    intercept_ : ndarray of shape (m,)
    couplings_ : ndarray of shape (m, m)
        Symmetric ``alpha_ij`` with zero diagonal.
    constant_labels_ : dict
        ``{label index: value}`` of labels constant in the training data (with a warning):
        no finite maximum pseudo-likelihood estimate, and couplings that would only shift
        the other labels' intercepts; left out of the model, always predicted as that
        value (marginal exactly 0 or 1).
    rho1_, rho2_ : float
        The penalties used (chosen by CV when the parameters are None): on the couplings,
        and on every label's weights with ``penalty="shared"``.
    label_rho1_, label_rho2_ : ndarray of shape (m,)
        The elastic net of each label's weights ``beta_i`` (all ``rho1_``, ``rho2_`` with
        the shared penalty; the constant labels' entries are unused).
    cv_results_ : dict or None
        ``{"rho1", "rho2", "mean_score", "split<k>_score", "mean_n_iter"}`` arrays over the
        CV grid, and ``"mean_label_score"`` (grid, m): each label's mean test-fold
        conditional log-likelihood (11) on that path (NaN with the shared penalty). With
        ``penalty="per_label"`` also the second path's ``"mean_label_score_shared_couplings"``
        and ``"split<k>_label_score_shared_couplings"`` (grid, m; the labels' criterion,
        row ``k`` every label's weights at ``(rho1[k], rho2[k])``, the couplings' at
        ``(rho1_, rho2_)``) and ``"mean_n_iter_shared_couplings"``.
    n_iter_ : int
        FISTA iterations of the final fit.
    objective_path_ : ndarray
        Objective value after each iteration of the final fit.
    converged_ : bool
    fit_seconds_ : float
        Wall-clock seconds of :meth:`fit`.
    fit_profile_ : dict
        Where they went: ``"cv"`` (wall-clock) and ``"final_fit"``; ``"cv_solve"``
        (FISTA), ``"cv_screen"`` (strong rules, KKT checks) and ``"cv_decode"`` (decoding
        and scoring the test folds), each summed over the folds.

    Notes
    -----
    **Sample weights** (``fit``'s ``sample_weight``) weigh the rows' terms of the
    pseudo-likelihood (12): its mean over the rows becomes the weighted mean, and the
    scaling's and the solver's centring means and variances are weighted alike, so an
    integer weight fits as that many copies of the row and a zero weight as no row.  The
    cross-validation fits every fold on its weighted training rows and scores it by the
    weighted mean of its test rows' criterion (subset accuracy, Hamming loss or F1 per
    row).  Sparse ``X`` (CSR, CSC) is taken as is (``scaling="standardize"`` or None).

    **Any scale.**  With ``scaling="standardize"`` (the default) or ``"whiten"`` the model
    of ``c * X`` is that of ``X`` for any ``c`` from 1e-300 to 1e300 (the scaling's moments
    are taken in units of a power of two of ``X``'s magnitude).  ``scaling=None`` fits the
    raw features, whose penalty depends on their scale by design; features too large for
    the solver's step bound are refused in one line.

    **scikit-learn's estimator checks** all pass with ``decode="marginal"``.  With the
    default ``decode="map"`` one cannot: ``check_classifier_multioutput`` asserts that
    ``predict`` equals ``predict_proba`` rounded, i.e. that the prediction is each
    marginal thresholded at 1/2, the Bayes decision for the Hamming loss.  The joint MAP
    (21), the Bayes decision for subset accuracy, differs from it where the labels are
    coupled (the check's data have such rows), by design.  No tag expresses this: the
    only one that lifts the assertion, ``classifier_tags.poor_score``, declares poor
    accuracy, which CorrLog does not have (and would lift ``check_classifiers_train``'s
    accuracy bar too).

    References
    ----------
    Q. Li, B. Xie, J. You, W. Bian, D. Tao. Correlated Logistic Model With Elastic Net
    Regularization for Multilabel Image Classification. IEEE TIP 25(8), 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from kclf.corrlog import CorrLog
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, (X[:, 0] > 0) & (X[:, 1] > 0)]).astype(int)
    >>> clf = CorrLog(rho1=0.0, rho2=1e-3).fit(X, Y)
    >>> clf.predict(X[:2]).shape
    (2, 2)
    """

    _parameter_constraints = {
        "rho1": [Interval(Real, 0, None, closed="left"), None],
        "rho2": [Interval(Real, 0, None, closed="left"), None],
        "penalty": [StrOptions({"shared", "per_label"})],
        "label_criterion": [StrOptions(set(LABEL_CRITERIA))],
        "coupling_scale": [Interval(Real, 0, None, closed="left")],
        "couplings": ["boolean"],
        "inference": [StrOptions({"bp", "exact"})],
        "decode": [StrOptions(set(DECODERS))],
        "gibbs_sweeps": [Interval(Integral, 1, None, closed="left")],
        "bp_max_iter": [Interval(Integral, 1, None, closed="left")],
        "bp_damping": [Interval(Real, 0, 1, closed="left")],
        "scaling": [StrOptions({"standardize", "whiten"}), None],
        "whiten_eps": [Interval(Real, 0, None, closed="neither")],
        "step": [StrOptions({"lipschitz", "backtracking"})],
        "monotone": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "cv_tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "cv": ["cv_object"],
        "rho1_grid": ["array-like", None],
        "rho2_grid": ["array-like", None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        rho1=None,
        rho2=None,
        *,
        penalty="shared",
        label_criterion="auto",
        coupling_scale=1.0,
        couplings=True,
        inference="bp",
        decode="map",
        gibbs_sweeps=2000,
        bp_max_iter=50,
        bp_damping=0.0,
        scaling="standardize",
        whiten_eps=1e-2,
        step="backtracking",
        monotone=True,
        tol=1e-7,
        cv_tol=1e-6,
        max_iter=3000,
        cv=3,
        rho1_grid=None,
        rho2_grid=None,
        n_jobs=None,
        random_state=0,
        verbose=0,
    ):
        self.rho1 = rho1
        self.rho2 = rho2
        self.penalty = penalty
        self.label_criterion = label_criterion
        self.coupling_scale = coupling_scale
        self.couplings = couplings
        self.inference = inference
        self.decode = decode
        self.gibbs_sweeps = gibbs_sweeps
        self.bp_max_iter = bp_max_iter
        self.bp_damping = bp_damping
        self.scaling = scaling
        self.whiten_eps = whiten_eps
        self.step = step
        self.monotone = monotone
        self.tol = tol
        self.cv_tol = cv_tol
        self.max_iter = max_iter
        self.cv = cv
        self.rho1_grid = rho1_grid
        self.rho2_grid = rho2_grid
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _params(self):
        """The solver's settings (:mod:`kclf.corrlog._solver`)."""
        names = ("couplings", "coupling_scale", "scaling", "whiten_eps", "tol", "cv_tol")
        names += ("max_iter", "monotone", "step")
        return {name: getattr(self, name) for name in names}

    def _folds(self, X, Y, keep):
        """The folds of ``cv`` (seeded by ``random_state``) over the rows ``keep`` of
        positive weight: an integer ``cv`` splits those rows (as if the others were never
        given); given folds index the rows of ``X``, and lose their rows of weight 0 (a
        fold left without training or test rows is dropped)."""
        # None: unshuffled folds, as scikit-learn's searches with an integer cv
        rs = None if self.random_state is None else check_random_state(self.random_state)
        if keep.all() or (isinstance(self.cv, Integral) and not isinstance(self.cv, bool)):
            return cv_splits(self.cv, X[keep], Y[keep], rs)
        new = np.cumsum(keep) - 1
        folds = []
        for train, test in cv_splits(self.cv, X, Y, rs):
            train, test = new[train[keep[train]]], new[test[keep[test]]]
            if train.size and test.size:
                folds.append((train, test))
        if not folds:
            raise ValueError("cv: every fold loses its training or test rows to zero weights")
        return folds

    def _cv_select(self, X, Y, folds, weight):
        """:func:`kclf.corrlog._penalty_search.cv_select` on ``folds`` with the criteria of
        ``decode``, the rows weighted by ``weight`` (None: unweighted)."""
        gibbs = self._gibbs() if self.decode == "f1" else None  # drawn after the folds
        per_label = self.penalty == "per_label"
        criteria = cv_criteria(
            self.decode, self.inference, self.bp_max_iter, self.bp_damping, gibbs, per_label
        )
        grids = penalty_grids(self.rho1, self.rho2, self.rho1_grid, self.rho2_grid)
        second = label_scorer(
            self.label_criterion, self.inference, self.bp_max_iter, self.bp_damping
        )
        progress = SearchProgress("CorrLog", self.verbose)
        progress(f"{X.shape[0]} rows, {Y.shape[1]} labels: {len(folds)} folds")
        choice = cv_select(
            self._params(),
            X,
            Y,
            folds,
            *grids,
            criteria,
            self.n_jobs,
            per_label,
            second,
            progress,
            weight,
        )
        progress(f"chose rho1={choice[0]:.4g}, rho2={choice[1]:.4g}")
        return choice

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit CorrLog (or ILR with ``couplings=False``) to X (n, d) and y (n, m) 0/1.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_labels), values 0/1, or of shape (n_samples,)
            with two classes (the one-label model)
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows' terms in the pseudo-likelihood (12) and in
            the CV's fold scores (None: all one); the scaling's means and variances are
            weighted alike, so an integer weight fits as that many copies of the row and
            a zero weight as no row (with an integer ``cv``, whose folds split the rows of
            positive weight).

        Returns
        -------
        self : CorrLog
            The fitted estimator.
        """
        X, Y = validate_data(
            self, X, y, multi_output=True, dtype=np.float64, accept_sparse=("csr", "csc")
        )
        sw = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        keep = sw > 0
        self._binary = np.ndim(Y) == 1
        if self._binary:  # two classes (of the rows of positive weight), a one-label matrix
            self.classes_, _ = binary_labels(Y[keep], "CorrLog")
            Y = (Y == self.classes_[1]).astype(int)[:, None]
        else:
            Y = label_matrix(Y, X.shape[0])
            self.classes_ = np.arange(Y.shape[1])
        cv = self.rho1 is None or self.rho2 is None
        folds = self._folds(X, Y, keep) if cv else None
        # the rows of weight 0 are no rows; unit weights are no weights (the same arithmetic)
        X, Y, sw = X[keep], Y[keep], sw[keep]
        weight = None if np.all(sw == 1) else sw
        n, m = Y.shape
        X = solver_features(X, self.scaling)
        if self.inference == "exact" and m > MAX_EXACT_LABELS:
            raise ValueError(
                f"inference='exact' enumerates 2^m label vectors and needs m <= "
                f"{MAX_EXACT_LABELS}; got m={m} labels (use inference='bp')"
            )
        active = non_constant(Y)
        self.constant_labels_ = {int(j): int(Y[0, j]) for j in np.flatnonzero(~active)}
        if self.constant_labels_:
            warnings.warn(
                f"labels {sorted(self.constant_labels_)} are constant in the training data: "
                "they are left out of the model and always predicted as their constant value",
                UserWarning,
                stacklevel=2,
            )
        self.n_labels_, self.active_labels_, self.cv_results_ = m, active, None
        start = time.perf_counter()
        starts, label_rho = [], None
        if active.sum() == 0:
            rho1, rho2 = (self.rho1 or 0.0), (self.rho2 or 0.0)
        elif cv:
            rho1, rho2, self.cv_results_, starts, label_rho = self._cv_select(X, Y, folds, weight)
        else:
            rho1, rho2 = float(self.rho1), float(self.rho2)
        cv_seconds = time.perf_counter() - start
        results = self.cv_results_ or {}
        self.fit_profile_ = {
            f"cv_{key}": results.pop(f"seconds_{key}", 0.0) for key in ("solve", "screen", "decode")
        }
        self.fit_profile_["cv"] = cv_seconds
        self.rho1_, self.rho2_ = rho1, rho2
        if label_rho is None:
            label_rho = (np.full(m, rho1), np.full(m, rho2))
        self.label_rho1_, self.label_rho2_ = label_rho
        self.coef_, self.intercept_, self.couplings_, info = fit_penalised(
            self._params(), X, Y, active, rho1, rho2, starts, label_rho, weight
        )
        self.objective_path_, self.n_iter_ = info["path"], info["n_iter"]
        self.converged_ = bool(info["converged"])
        if not self.converged_:
            warn_convergence(
                f"FISTA did not reach tol={self.tol} in max_iter={self.max_iter} iterations"
            )
        self.fit_seconds_ = time.perf_counter() - start
        self.fit_profile_["final_fit"] = self.fit_seconds_ - cv_seconds
        return self

    def _gibbs(self):
        """The Gibbs sampler's settings of ``decode="f1"`` (:func:`_f1_labels`): its seed
        from ``random_state`` (an integer as is, an instance drawn from)."""
        seed = self.random_state
        if seed is not None and not isinstance(seed, Integral):
            seed = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
        return {"n_sweeps": self.gibbs_sweeps, "burn_in": self.gibbs_sweeps // 10, "seed": seed}

    def _active_unary(self, X):
        idx = np.flatnonzero(self.active_labels_)
        U = np.asarray(X @ self.coef_[idx].T) + self.intercept_[idx]
        return idx, U, self.couplings_[np.ix_(idx, idx)]

    def _constant_fill(self, n, dtype):
        out = np.zeros((n, self.n_labels_), dtype=dtype)
        for j, v in self.constant_labels_.items():
            out[:, j] = v
        return out

    def decode_labels(self, X, decode=None, return_info=False):
        """0/1 label vectors (n, m) by the joint MAP, the thresholded marginals or the
        expected-F1 maximiser.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        decode : {"map", "marginal", "f1"} or None, default=None
            The joint MAP (21), the Bayes decision for subset accuracy; each marginal
            ``P(y_i = 1 | x) > 1/2``, for Hamming loss; or the example-based F1's (GFM on
            the joint (4), as for the parameter ``decode``, which None takes). Labels
            constant in the training data keep their value with every decoder (the F1
            decision is taken over the others).
        return_info : bool, default=False
            Also return ``{"decode", "bp_rows", "bp_nonconverged"}``: how many rows belief
            propagation decoded, and did not converge on after the damped retry.

        Returns
        -------
        Y : int ndarray of shape (n_samples, n_labels)
        info : dict, only when ``return_info``
        """
        check_is_fitted(self)
        decode = self.decode if decode is None else decode
        if decode not in DECODERS:
            raise ValueError(f"decode must be one of {DECODERS}, got {decode!r}")
        X = validate_data(self, X, reset=False, dtype=np.float64, accept_sparse=("csr", "csc"))
        out = self._constant_fill(X.shape[0], int)
        idx, U, A = self._active_unary(X)
        n_bad = bp_rows = 0
        if len(idx):
            gibbs = self._gibbs() if decode == "f1" else None
            out[:, idx], n_bad = _decode(
                U, A, decode, self.inference, self.bp_max_iter, self.bp_damping, gibbs
            )
            bp_rows = _bp_rows(decode, self.inference, A, X.shape[0])
        _warn_bp(n_bad, bp_rows, self.bp_max_iter)
        info = {"decode": decode, "bp_rows": bp_rows, "bp_nonconverged": n_bad}
        return (out, info) if return_info else out

    def predict(self, X):
        """Label vectors by ``decode``: the joint MAP, Eq. (21), the thresholded
        marginals or the expected-F1 maximiser (:meth:`decode_labels`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Y : ndarray of shape (n_samples, n_labels) or (n_samples,)
            0/1 label vectors; for a 1-D binary ``y`` at fit, its class values.
        """
        out = self.decode_labels(X)
        return self.classes_[out[:, 0]] if self._binary else out

    def predict_proba(self, X):
        """Per-label marginals ``P(y_i = 1 | x)`` under Eq. (4): enumerated up to
        :data:`MAX_EXACT_LABELS` labels, sum-product belief propagation beyond.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, n_labels) or (n_samples, 2)
            The marginals; for a 1-D binary ``y`` at fit, the class probabilities in
            ``classes_`` order.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64, accept_sparse=("csr", "csc"))
        out = self._constant_fill(X.shape[0], float)
        idx, U, A = self._active_unary(X)
        if len(idx):
            out[:, idx], n_bad = _marginals(U, A, self.inference, self.bp_max_iter, self.bp_damping)
            _warn_bp(n_bad, X.shape[0], self.bp_max_iter)
        return np.column_stack([1.0 - out[:, 0], out[:, 0]]) if self._binary else out

    def score(self, X, y, sample_weight=None):
        """Subset (0/1) accuracy of :meth:`predict`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_labels) or (n_samples,)
            The 0/1 label matrix (or, for a model fitted on a 1-D binary ``y``, classes).
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
            The (weighted) fraction of rows whose whole label vector is right (accuracy
            for a 1-D binary ``y``).
        """
        pred = self.predict(X)
        if self._binary:
            hit = (pred == np.asarray(y)).astype(float)
        else:
            Y = label_matrix(y, pred.shape[0])
            hit = np.all(pred == Y, axis=1).astype(float)
        return float(np.average(hit, weights=sample_weight))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        tags.classifier_tags.multi_label = True
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags
