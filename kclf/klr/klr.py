"""Kernel logistic regression (kLOGREG) by iteratively re-weighted least squares.

Roth, "Probabilistic discriminative kernel classifiers for multi-class problems"
(DAGM 2001); equation numbers below refer to that paper.

The model is ``P(1 | x) = 1 / (1 + exp(-f(x)))`` with ``f(x) = sum_i alpha_i k(x_i, x)``
(Eq. 2 with the expansion Eq. 7).  ``alpha`` maximises the penalised conditional
log-likelihood

    Phi(alpha) = sum_i [y_i log pi_i + (1 - y_i) log(1 - pi_i)] - lam / 2 alpha^T K alpha,

the kernel form of Eq. (3) with the Gaussian prior of Eq. (6) (``w = X^T alpha``, so
``||w||^2 = alpha^T K alpha``).  Its Newton / Fisher-scoring step is Eq. (9),
``(K + lam W^{-1}) alpha_{r+1} = K alpha_r + e``.  With ``fit_intercept=True`` every
feature vector is augmented by a constant 1 (footnote 3), i.e. ``K`` becomes ``K + 1``
and the intercept is penalised like the other weights.

With the linear kernel and ``fit_intercept=False`` this is exactly scikit-learn's
``LogisticRegression(C=1 / lam, fit_intercept=False)``.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._array_api import get_namespace, input_namespace, same_namespace
from .._base import ArgmaxPredictMixin, KernelMixin, LogProbaMixin
from .._validation import (
    KERNEL,
    POSITIVE,
    check_precomputed,
    class_labels,
    reject_with_precomputed,
    validate_data,
)
from ..coupling import PairBatching, PairwiseCoupling, fit_each_pair
from ..kernels import median_sigma
from . import _array_api_paths as xpaths
from ._array_api_pairs import coupling_inputs, fit_pairs_shared_basis
from ._multinomial import check_multinomial, fit_multinomial
from ._pairs import fit_pairs, pairs_decision
from ._solver import (
    irls,
    irls_primal,
    kernel_matrix,
    nystroem_design,
    nystroem_map,
    warn_fit,
)

MULTI_CLASS = ("pairwise", "ovr", "multinomial")
SOLVERS = ("auto", "cg", "direct")


class KernelLogisticRegression(
    KernelMixin, ArgmaxPredictMixin, LogProbaMixin, ClassifierMixin, PairBatching, BaseEstimator
):
    """Kernel logistic regression (kLOGREG) fitted by IRLS with conjugate gradients.

    Binary problems are solved directly (module docstring: the objective ``Phi`` and
    its IRLS step, Eq. 9).  Multi-class problems use ``c (c - 1) / 2`` pairwise
    classifiers coupled by :class:`kclf.PairwiseCoupling` (Section 3, Eq. 10-11; the
    default) or ``c`` one-vs-rest classifiers whose probabilities are normalised to sum
    to one (``"ovr"``; the ``c`` problems share one kernel and are solved together).

    Parameters
    ----------
    sigma : float or None, default=None
        Gaussian kernel width, ``k(x, x') = exp(-||x - x'||^2 / (2 sigma^2))``; ``None``:
        the median pairwise distance of the training inputs (computed once on all of
        them, also in pairwise mode).
    lam : float, default=0.1
        ``lambda`` of Eq. (6) / (9): the penalty ``lam / 2 alpha^T K alpha`` against the
        summed (not averaged) log-likelihood; ``LogisticRegression``'s ``C`` is
        ``1 / lam``.
    kernel : {"rbf", "linear", "precomputed"} or callable, default="rbf"
        With ``"precomputed"``, ``X`` is the (n, n) Gram matrix at fit and the
        (n_test, n_train) cross-kernel at prediction.
    multi_class : {"pairwise", "ovr", "multinomial"}, default="pairwise"
        More than two classes: pairwise coupling, one-vs-rest, or one softmax model
        ``P(k | x) = softmax(Phi(x) W)_k`` over all classes on one Nystroem basis (needs
        ``n_components``; NumPy only), maximising ``sum_i c_i log P(y_i | x_i) - lam / 2
        ||W||_F^2`` (the intercept penalised as in the binary model) by Newton steps,
        preconditioned CG on Hessian products where the model is large.  Two classes fit the
        binary model whatever the value (the softmax model at ``lam`` is the binary one at
        ``lam / 2``).
    tol : float, default=1e-6
        Stop IRLS when the relative change of the penalised log-likelihood is <= tol.
    max_iter : int, default=100
        Maximum IRLS steps.
    cg_tol : float, default=1e-6
        Relative residual at which conjugate gradients stop in each IRLS step.
    n_components : int or None, default=None
        Use a Nystroem approximation ``K ~ Phi Phi^T`` of this rank (for n >> 1e4):
        memory O(n m) instead of O(n^2).  Not available with ``kernel="precomputed"``
        (scikit-learn's ``Nystroem`` needs the inputs, not the Gram matrix).  The
        landmarks are a random draw from the distinct rows of positive weight
        (``random_state``); with fewer landmarks than such rows, integer weights and the
        repeated rows draw from the same rows in another order, so they fit equal models
        only in distribution: scikit-learn's two sample-weight equivalence checks cannot
        apply then (they pass with at least as many landmarks as distinct rows).  Pairwise
        mode (more than two classes) draws one set of landmarks from all training rows
        and fits every pair on its rows of that one basis.
    fit_intercept : bool, default=True
        Augment the inputs by a constant 1 (footnote 3): ``K + 1``, penalised intercept.
    solver : {"auto", "cg", "direct"}, default="auto"
        Linear solver of each IRLS step: conjugate gradients (the paper's; a problem
        whose CG cannot reach ``cg_tol`` within its iteration cap, as at very small
        ``lam``, continues with the direct solve), a direct LAPACK solve, or ``"auto"``
        (direct below 128 training samples).
    random_state : int or None, default=None
        Seed of the Nystroem landmark sample.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    sigma_ : float or None
        The width used (``None`` for non-rbf kernels).
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_classes)
        ``alpha`` (binary, or one column per class for ``"ovr"``); not set for
        ``"pairwise"`` or Nystroem mode.
    coef_ : ndarray
        Nystroem mode: the weights in feature space (``"multinomial"``: one column per
        class, the intercept's weights in the last row).
    intercept_ : float or ndarray
        ``sum(alpha)`` (the weight of the constant feature), 0 without intercept.
    n_iter_ : ndarray
        IRLS steps per binary problem.
    converged_ : bool
        Whether IRLS reached ``tol`` for every binary problem (every pair in pairwise
        mode); a fit that did not warns with ``sklearn.exceptions.ConvergenceWarning``.
    coupling_ : PairwiseCoupling
        The fitted pairwise classifiers (``"pairwise"`` with more than two classes).
    nystroem_offset_ : ndarray of shape (n_features,) or None
        Nystroem mode: the training inputs' coordinate-wise median, subtracted before the
        feature map of the (translation-invariant) Gaussian kernel; None for other kernels.
    nystroem_scale_ : float
        Nystroem mode: ``sigma_`` (1 for other kernels); the feature map takes
        ``(X - nystroem_offset_) / nystroem_scale_`` and the Gaussian kernel of width 1, so
        that neither the centring nor the width loses precision or overflows.
    nystroem_ : sklearn.kernel_approximation.Nystroem
        Nystroem mode: the landmarks and their normalisation ``K_mm^{-1/2}``.
    X_fit_ : ndarray
        A copy of the training inputs (the kernel centres).

    **Array API.**  Under ``sklearn.config_context(array_api_dispatch=True)`` PyTorch
    tensors, CuPy and ``array-api-strict`` arrays are computed in their namespace and on
    their device (the kernel or the Nystroem design, every Newton step with its CG or direct
    solves), the fitted arrays kept there and the probabilities returned there (``pip
    install kclf[array-api]``; the user guide's "GPU and many cores"): two classes,
    ``multi_class="ovr"`` and pairwise coupling (its pairs and coupling in the namespace,
    :class:`kclf.PairwiseCoupling`); a callable kernel is NumPy only (the tags then declare
    no ``array_api_support``).  Float32 inputs are fitted in float64 on their device, with a
    ``UserWarning``: the Newton loop is not stable in float32 (a fit at ``lam=1e-5`` stopped
    as converged with probabilities 0.97 from float64's, measured in the user guide); the
    probabilities are returned in float32, so scikit-learn's ``check_array_api_input``,
    which expects the NumPy fit's float64, fails on float32 by design.

    References
    ----------
    V. Roth, "Probabilistic discriminative kernel classifiers for multi-class problems",
    DAGM 2001, LNCS 2191, pp. 246-253.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kclf.klr import KernelLogisticRegression
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = KernelLogisticRegression(lam=0.01).fit(X, y)
    >>> clf.predict_proba(X[:2]).sum(axis=1).round(8).tolist()
    [1.0, 1.0]
    """

    _parameter_constraints = {
        "sigma": [POSITIVE, None],
        "lam": [POSITIVE],
        "kernel": KERNEL,
        "multi_class": [StrOptions(set(MULTI_CLASS))],
        "tol": [POSITIVE],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "cg_tol": [POSITIVE],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions(set(SOLVERS))],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        sigma=None,
        lam=0.1,
        *,
        kernel="rbf",
        multi_class="pairwise",
        tol=1e-6,
        max_iter=100,
        cg_tol=1e-6,
        n_components=None,
        fit_intercept=True,
        solver="auto",
        random_state=None,
    ):
        self.sigma = sigma
        self.lam = lam
        self.kernel = kernel
        self.multi_class = multi_class
        self.tol = tol
        self.max_iter = max_iter
        self.cg_tol = cg_tol
        self.n_components = n_components
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.random_state = random_state

    def _check_params(self):
        """The rule between parameters (``_parameter_constraints`` checked the rest)."""
        reject_with_precomputed(self, "n_components", "Nystroem mode")
        check_multinomial(self)

    def _kernel(self, X, Y=None):
        return kernel_matrix(self.kernel, X, Y, self.sigma_)

    def _softmax(self):
        """Whether the fit is (was) the softmax model: more than two classes, "multinomial"."""
        return self.classes_.shape[0] > 2 and self.multi_class == "multinomial"

    def _coupled(self):
        """Whether the fit is (was) pairwise coupling: more than two classes, "pairwise"."""
        return self.classes_.shape[0] > 2 and self.multi_class == "pairwise"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel in ("rbf", "linear")
        tags.array_api_support = xpaths.supported(self) and self.multi_class != "multinomial"
        return tags

    def _accept_sparse(self):
        """What ``validate_data`` accepts: CSR / CSC where the kernel is computed from
        ``X`` (rbf, linear)."""
        return ("csr", "csc") if self.kernel in ("rbf", "linear") else False

    def _fit_width(self, X, sample_weight):
        """``sigma``, or the (weighted) median pairwise distance of ``X``
        (:func:`kclf.kernels.median_sigma`: a row of weight ``w`` counts as ``w`` rows);
        None for a kernel without a width."""
        if self.kernel != "rbf" or self.sigma is not None or sample_weight is None:
            return self._width(X)
        return median_sigma(X, sample_weight=sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Maximise the penalised log-likelihood by IRLS (Eq. 9); more than two classes by
        pairwise coupling (Eq. 10-11) or one-vs-rest.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_samples)
            The training inputs (CSR / CSC with the rbf and linear kernels), or their Gram
            matrix with ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights ``c_i`` multiplying each row's log-likelihood term
            of ``Phi`` (weighted IRLS: ``W = c pi (1 - pi)``); an integer weight is the
            row repeated, 0 drops it.  The default width is then the weighted median
            distance, pairwise coupling passes each pair its rows' weights and weighs the
            pairs by their weight sums, and Nystroem mode draws its landmarks from the
            distinct rows of positive weight.

        Returns
        -------
        self : KernelLogisticRegression
            The fitted estimator (``dual_coef_`` the expansion ``alpha`` of Eq. (7), or
            ``coef_`` in Nystroem mode, or ``coupling_``).
        """
        self._check_params()
        xp, is_xp = get_namespace(X)
        check_multinomial(self, is_xp)
        if is_xp and xpaths.supported(self):
            coupled = coupling_inputs(self, xp, X, y, sample_weight)
            if coupled is not None:
                return self._fit_coupling(*coupled)
            self.n_iter_, conv = xpaths.fit_klr(self, xp, X, y, sample_weight)
            return self._report(conv)
        X, y = validate_data(self, X, y, dtype=np.float64, accept_sparse=self._accept_sparse())
        if self.kernel == "precomputed":
            check_precomputed(X)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, dtype=np.float64, ensure_non_negative=True
            )
        self.classes_, yi = class_labels(y, "KernelLogisticRegression")
        c = self.classes_.size
        if self._coupled():
            return self._fit_coupling(X, y, sample_weight)
        self.sigma_ = self._fit_width(X, sample_weight)
        Y = (yi == 1)[:, None].astype(float) if c == 2 else np.eye(c)[yi]
        lam = float(self.lam)
        if self.n_components is not None:
            self.nystroem_offset_, self.nystroem_scale_, self.nystroem_ = nystroem_map(
                X, self.kernel, self.sigma_, self.n_components, self.random_state, sample_weight
            )
            design = self._design(X).formed()  # Design's docstring: fits take it formed
            if self._softmax():
                self.coef_, _, n_iter, conv = fit_multinomial(
                    design, Y, lam, self.tol, self.max_iter, weights=sample_weight
                )
                self.n_iter_, conv = np.array([n_iter]), np.array([conv])
                return self._report(conv)
            coef, self.n_iter_, conv = irls_primal(
                design, Y, lam, self.tol, self.max_iter, weights=sample_weight
            )
            self.coef_ = coef[:, 0] if c == 2 else coef
        else:
            K = self._kernel(X)
            if self.fit_intercept:
                K = K + 1.0
            A, self.n_iter_, conv = irls(
                K,
                Y,
                lam,
                self.tol,
                self.max_iter,
                self.cg_tol,
                self.solver,
                weights=sample_weight,
            )
            self.dual_coef_ = A[:, 0] if c == 2 else A
            self.intercept_ = self.dual_coef_.sum(axis=0) * float(self.fit_intercept)
            # a copy: the caller's array may change after fit (a precomputed Gram matrix
            # is only kept for its shape)
            self.X_fit_ = X if self.kernel == "precomputed" else X.copy()
        return self._report(conv)

    def _fit_coupling(self, X, y, sample_weight):
        """The pairwise fit (more than two classes): one width for all pairs (``sigma`` or
        the median distance of all of ``X``), the pairs fitted and coupled by
        :class:`kclf.PairwiseCoupling`, in ``X``'s namespace."""
        self.sigma_ = self._fit_width(X, sample_weight)
        base = self.get_params()
        base.update(sigma=self.sigma_, multi_class="ovr")
        weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
        self.coupling_ = PairwiseCoupling(KernelLogisticRegression(**base))
        self.coupling_.fit(X, y, **weighted)
        self.classes_ = self.coupling_.classes_
        xp, _ = get_namespace(self.classes_)
        self.n_iter_ = xp.concat([e.n_iter_ for e in self.coupling_.estimators_])
        self.converged_ = self.coupling_.converged_  # each pair warned for itself
        return self

    def _report(self, conv):
        """Set ``converged_`` from the binary problems' flags ``conv``; warn if one did not
        converge."""
        self.converged_ = bool(np.all(conv))
        if not self.converged_:
            warn_fit(
                f"KernelLogisticRegression: IRLS did not reach tol={self.tol} within "
                f"max_iter={self.max_iter} steps for {int(np.sum(~conv))} of {conv.size} "
                f"binary problem(s) (lam={self.lam}); increase max_iter or lam",
                stacklevel=3,
            )
        return self

    def _fit_pairs(self, X, yi, pairs, pair_index, sample_weight=None):
        """:class:`kclf.coupling.PairBatching`: every pair by
        :func:`kclf.klr._pairs.fit_pairs` (stacked IRLS where the pair's own fit would take
        direct steps; with ``n_components`` every pair in one shared Nystroem basis).  On
        array API inputs each pair's own fit in their namespace, or with ``n_components``
        :func:`kclf.klr._array_api_pairs.fit_pairs_shared_basis`."""
        self._validate_params()
        self._check_params()
        xp, is_xp = get_namespace(X)
        if not is_xp:
            return fit_pairs(self, X, yi, pairs, pair_index, sample_weight)
        if self.n_components is None:  # the exact kernel: each pair's own fit in xp
            return fit_each_pair(self, X, yi, pairs, pair_index, sample_weight)
        return fit_pairs_shared_basis(self, xp, X, yi, pairs, pair_index, sample_weight)

    @classmethod
    def _pairs_decision(cls, estimators, X_train, X, pair_index):
        """:class:`kclf.coupling.PairBatching`: :func:`kclf.klr._pairs.pairs_decision` when
        every pair is a fitted ``cls``, else None."""
        if not all(isinstance(e, cls) for e in estimators):
            return None
        return pairs_decision(estimators, X_train, X, pair_index)

    @classmethod
    def _from_pair_fit(cls, params, *, n_features_in, sigma, n_iter, converged, **fitted):
        """A fitted binary estimator built from one pair of a batched fit
        (:func:`kclf.klr._pairs.fit_pairs`): ``cls(**params)`` with the attributes its
        own ``fit`` on the pair's rows (label 1 <=> the pair's first class) would set;
        ``fitted`` the model's own: ``X_fit_``, ``dual_coef_`` (the IRLS solution
        ``alpha`` of Eq. 9) and ``intercept_``, or in Nystroem mode ``coef_`` and the
        (shared) feature map ``nystroem_``, ``nystroem_offset_``, ``nystroem_scale_``."""
        est = cls(**params)
        est.n_features_in_ = n_features_in
        est.classes_ = np.array([0, 1])
        est.sigma_ = sigma
        for name, value in fitted.items():
            setattr(est, name, value)
        est.n_iter_ = np.array([n_iter])
        est.converged_ = bool(converged)
        return est

    def _check_X(self, X):
        check_is_fitted(self)
        # NumPy only (a callable kernel): validate_data copies array API inputs to NumPy
        xp, is_xp = input_namespace(self, X, "classes_") if xpaths.supported(self) else (np, False)
        if is_xp:
            X = validate_data(self, X, dtype=[xp.float64, xp.float32], reset=False)
            if self.kernel == "precomputed":
                check_precomputed(X, n_train=self.X_fit_.shape[0])
            return X
        X = validate_data(
            self, X, dtype=np.float64, reset=False, accept_sparse=self._accept_sparse()
        )
        if self.kernel == "precomputed":
            check_precomputed(X, n_train=self.X_fit_.shape[0])
        return X

    def _design(self, X):
        """The Nystroem design of ``X`` (:func:`kclf.klr._solver.nystroem_design`)."""
        return nystroem_design(
            X, self.nystroem_offset_, self.nystroem_scale_, self.nystroem_, self.fit_intercept
        )

    def _raw(self, X):
        xp, is_xp = get_namespace(X)
        if is_xp:
            return xp.astype(xpaths.raw(self, xp, X), X.dtype)
        if self.n_components is not None:
            return self._design(X).forward(self.coef_)
        return self._kernel(X, self.X_fit_) @ self.dual_coef_ + self.intercept_

    @same_namespace
    def decision_function(self, X):
        """The latent function ``f(x) = sum_i alpha_i k(x_i, x)`` (Eq. 7, plus the
        intercept's ``sum_i alpha_i``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            Test inputs, or their cross-kernel to the training inputs with
            ``kernel="precomputed"``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: ``f(x)``, the log-odds of ``classes_[1]`` (Eq. 2), a strictly
            increasing function of ``predict_proba(X)[:, 1] = sigmoid(f(x))`` that also
            orders the rows whose probabilities round to 0 or 1.  Multi-class: one
            column per class, ``f_k(x)`` (one-vs-rest) or the log of the coupled
            probabilities (pairwise).
        """
        check_is_fitted(self)
        if self._coupled():
            return self.coupling_.decision_function(X)
        return self._raw(self._check_X(X))

    @same_namespace
    def predict_proba(self, X):
        """Class probabilities: ``pi(x) = 1 / (1 + exp(-f(x)))`` (Eq. 2), the one-vs-rest
        ``pi_k`` normalised, or the coupled pairwise probabilities (Eq. 10-11).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`decision_function`.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order; rows sum to one.
        """
        check_is_fitted(self)
        if self._coupled():
            return self.coupling_.predict_proba(X)
        X = self._check_X(X)
        F = self._raw(X)
        xp, is_xp = get_namespace(F)
        if is_xp:
            return xpaths.class_probabilities(xp, F, X.dtype)
        if F.ndim == 1:
            p = expit(F)
            return np.column_stack([1.0 - p, p])
        if self._softmax():
            return softmax(F, axis=1)
        P = expit(F)
        return P / P.sum(axis=1, keepdims=True)
