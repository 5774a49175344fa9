"""Least-squares probabilistic classifier (LSPC, LSPC', LSPC-new).

Yamada, Sugiyama, Wichern & Simm, "Improving the accuracy of least-squares
probabilistic classifiers", IEICE Trans. Inf. & Syst. (2011); equation numbers below
refer to that paper.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._array_api import get_namespace, input_namespace, same_namespace
from .._base import ArgmaxPredictMixin, KernelMixin
from .._validation import (
    KERNEL,
    POSITIVE,
    check_precomputed,
    class_labels,
    reject_with_precomputed,
    validate_data,
)
from ..kernels import gram
from . import _array_api_paths as xpaths
from ._solver import (
    center_rows,
    choose_centers,
    decision_scores,
    effective_alpha,
    round_outputs,
    sample_weights,
    solve_basis,
    weighting,
)

ROUNDINGS = ("outputs", "parameters", "none")


class LSPC(KernelMixin, ArgmaxPredictMixin, ClassifierMixin, BaseEstimator):
    """Least-squares probabilistic classifier.

    The paper's "LSPC(full)" (kernels at all training points, Eq. 2); its fit uses the
    closed form printed below Eq. (3), the exact minimiser of Eq. (3) with the regulariser
    written ``(lam/2) alpha^T alpha``.

    Parameters
    ----------
    sigma : float or None, default=None
        Gaussian width, ``k(x, x') = exp(-||x - x'||^2 / (2 sigma^2))``.  ``None`` uses the
        median pairwise distance of the training inputs (:func:`kclf.kernels.median_sigma`).
    lam : float, default=0.1
        Regularisation ``lambda > 0`` of Eq. (3).
    rounding : {"outputs", "parameters", "none"}, default="outputs"
        ``"outputs"``: LSPC-new, negative outputs rounded up to zero (Eq. 6).
        ``"parameters"``: the original LSPC, ``max(0, alpha~)`` then Eq. (4).
        ``"none"``: LSPC', Eq. (5); its "probabilities" can be negative or exceed one.
    kernel : {"rbf", "linear", "precomputed"} or callable, default="rbf"
        With ``"precomputed"``, ``fit`` takes the (n, n) training Gram matrix and the
        prediction methods the (n_test, n_train) cross-kernel.
    basis : {"full", "classwise"}, default="full"
        ``"full"``: every class uses kernels at all training points.  ``"classwise"``:
        Sugiyama's original fast variant, class ``y`` uses only kernels centred at its own
        samples, so the system is block diagonal (one n_y x n_y solve per class).  With
        ``n_basis``: at those of the ``b`` centres that are its own samples.
    n_basis : int or None, default=None
        ``None``: kernels at all ``n`` training points (Eq. 2), O(n^3) time and O(n^2)
        memory.  An integer ``b``: low-rank LSPC, kernels at ``min(b, n)`` centres only;
        ``H = K^T K / n`` with the (n, b) design matrix ``K``, so the fit costs
        O(n b^2 + b^3) time and O(n b) memory.  ``b >= n`` with
        ``centers="random"`` is the exact model.  Not available with
        ``kernel="precomputed"``.
    centers : {"random", "kmeans"}, default="random"
        With ``n_basis``: a uniform random subset of the training points (seeded by
        ``random_state``), or the centres of scikit-learn's ``KMeans`` (not with
        ``basis="classwise"``, which needs centres that are labelled samples).
    random_state : int, RandomState or None, default=None
        Seed of the centre choice (``n_basis`` only).
    class_weight : {"balanced"}, dict or None, default=None
        ``None``: the squared loss of Eq. (3) weighs every sample alike.  ``"balanced"``:
        sample ``i`` has weight ``w_i = n / (c n_{y_i})`` (inverse class frequency,
        scikit-learn's rule), i.e. Eq. (3) with ``H = K^T W K / n`` and
        ``h_y = K^T W y / n``, ``W = diag(w)``; the classes then pull on the fit
        equally however rare one is.  A dict ``{label: weight}`` gives the weights
        directly (labels not in it weigh 1).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    alpha_ : ndarray of shape (n_basis, n_classes)
        The unrounded solution alpha~ (zero outside a class's own block for "classwise").
    sigma_ : float or None
        The kernel width used (None for non-rbf kernels).
    X_fit_ : ndarray
        The kernel centres: a copy of the training inputs, or (with ``n_basis``) the
        ``b`` centres.
    center_index_ : ndarray of shape (b,) or None
        With ``n_basis`` and ``centers="random"``: the training rows used as centres.

    Notes
    -----
    **Sample weights.**  A row of weight ``w`` stands for ``w`` copies of it: its squared
    error counts ``w`` times, Eq. (3)'s means run over ``N = sum w`` rows, and a basis
    function at a training row of weight ``w`` is ``w`` copies of one function, whose
    ridge-penalised coefficients share its total ``a`` equally (penalty ``a^2 / w``), so
    the design column is scaled by ``sqrt(w)`` and ``alpha_`` is ``sqrt(w)`` times the
    solution.  Integer weights then give the fit of the repeated rows and a zero weight
    that of the row dropped, to round-off (scikit-learn's sample-weight equivalence
    checks); weights ``c w`` fit as ``lam / c`` (both terms of ``H`` scale), as
    scikit-learn's estimators whose loss the weights multiply.  ``class_weight``
    multiplies the row weights (``"balanced"`` from the classes' weights).  The default
    width is the median distance over the pairs of the repeated rows (a pair weighs
    ``w_i w_j``, a row with its own copies ``w_i (w_i - 1) / 2`` pairs at distance 0;
    with more than 1000 rows, evenly spaced ones by position).  With ``n_basis`` the
    centres are drawn among the rows of positive weight (a zero weight is the row
    dropped; k-means weighted), and each is one basis function; drawn by position, a
    weighted fit and the fit of the rows repeated draw other centres, so only
    ``n_basis >= n`` (every row a centre, the exact model) repeats the repeated rows'
    fit, and scikit-learn's sample-weight equivalence checks, which repeat and shuffle
    the rows, do not apply to a random low-rank basis.

    **Sparse input.**  CSR / CSC matrices with the rbf and linear kernels: the kernels
    equal the dense array's to round-off (:mod:`kclf.kernels`).

    **Any scale.**  With the default width the model is the same for ``X`` and ``c X``
    (1e-300 to 1e300), to round-off: the distances are computed in power-of-two units.

    **Calibration.**  :meth:`decision_function` breaks the ties of LSPC-new's posteriors
    0 and 1 by the outputs the rounding discarded, on the posteriors' scale, so scikit-
    learn's ``CalibratedClassifierCV(method="sigmoid")`` improves the log loss;
    :class:`kclf.PlattScaled` fits its sigmoid on the posteriors themselves
    (``calibration_response_method``).

    **Array API.**  Under ``sklearn.config_context(array_api_dispatch=True)`` PyTorch
    tensors, CuPy and ``array-api-strict`` arrays are computed in their namespace and on
    their device, the fitted arrays kept there and the probabilities returned there
    (``pip install kclf[array-api]``; the user guide's "GPU and many cores").  The
    class-wise basis, k-means centres and a callable kernel are NumPy only: the tags then
    declare no ``array_api_support`` and ``fit`` refuses such inputs in one line.  Float32
    inputs are computed and fitted in float32, while NumPy inputs of any dtype are computed
    in float64 as before; scikit-learn's ``check_array_api_input``, which expects both
    fits' arrays to share a dtype, therefore fails on float32 inputs by design.

    References
    ----------
    M. Sugiyama, "Superfast-trainable multi-class probabilistic classifier by
    least-squares posterior fitting", IEICE Trans. Inf. & Syst. E93-D(10), 2010.

    Examples
    --------
    >>> import numpy as np
    >>> from kclf import LSPC
    >>> X = np.r_[np.random.default_rng(0).normal(-1, 1, (50, 2)),
    ...           np.random.default_rng(1).normal(1, 1, (50, 2))]
    >>> y = np.r_[np.zeros(50), np.ones(50)]
    >>> clf = LSPC(sigma=1.0, lam=0.1).fit(X, y)
    >>> clf.predict_proba(X[:2]).sum(axis=1)
    array([1., 1.])
    """

    #: The scores :class:`kclf.PlattScaled` fits its sigmoid on: the posteriors, whose
    #: least-squares errors (Eq. 3) are additive on the probability scale.
    calibration_response_method = "predict_proba"
    _parameter_constraints = {
        "sigma": [POSITIVE, None],
        "lam": [POSITIVE],
        "rounding": [StrOptions(set(ROUNDINGS))],
        "kernel": KERNEL,
        "basis": [StrOptions({"full", "classwise"})],
        "n_basis": [Interval(Integral, 1, None, closed="left"), None],
        "centers": [StrOptions({"random", "kmeans"})],
        "random_state": ["random_state"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
    }

    def __init__(
        self,
        sigma=None,
        lam=0.1,
        *,
        rounding="outputs",
        kernel="rbf",
        basis="full",
        n_basis=None,
        centers="random",
        random_state=None,
        class_weight=None,
    ):
        self.sigma = sigma
        self.lam = lam
        self.rounding = rounding
        self.kernel = kernel
        self.basis = basis
        self.n_basis = n_basis
        self.centers = centers
        self.random_state = random_state
        self.class_weight = class_weight

    #: the fitted array whose namespace and device the inputs of a prediction must share
    _namespace_attribute = "X_fit_"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self.kernel in ("rbf", "linear")
        tags.array_api_support = xpaths.supported(self)
        return tags

    def _check_params(self, X, sample_weight=None):
        """The rules between parameters; the width used (None for non-rbf kernels)."""
        reject_with_precomputed(self, "n_basis", "low-rank LSPC")
        if self.n_basis is not None and self.basis == "classwise" and self.centers != "random":
            raise ValueError("basis='classwise' needs centers='random' (labelled centres)")
        return self._width(X, sample_weight=sample_weight)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model: solve Eq. (3) for every class with one factorisation.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_samples)
            The training inputs (CSR / CSC too with the rbf and linear kernels), or their
            Gram matrix with ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights: weighted least squares, a row of weight ``w``
            standing for ``w`` copies of it (see the class's Notes).

        Returns
        -------
        self : LSPC
            The fitted estimator (``alpha_`` the solution alpha~ of Eq. (3)).
        """
        return self._fit(X, y, sample_weight=sample_weight)

    def _fit(self, X, y, centers=None, sample_weight=None):
        """:meth:`fit`; ``centers`` an ``(index, C)`` pair chosen by the caller (a search
        that fixed the low-rank basis before its folds) instead of :func:`choose_centers`."""
        xp, is_xp = get_namespace(X)
        if is_xp:
            return xpaths.fit_lspc(self, xp, X, y, centers, sample_weight)
        sparse = ("csr", "csc") if self.__sklearn_tags__().input_tags.sparse else False
        X, y = validate_data(self, X, y, dtype=np.float64, accept_sparse=sparse)
        if self.kernel == "precomputed":
            check_precomputed(X)
        self.classes_, yi = class_labels(y, "LSPC")
        sw = None
        if sample_weight is not None:
            sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        self.sigma_ = self._check_params(X, sw)
        if self.n_basis is None:
            index, C = np.arange(X.shape[0]), None
        elif centers is not None:
            index, C = centers
        else:
            index, C = choose_centers(X, self.n_basis, self.centers, self.random_state, sw)
        K = gram(self.kernel, X, C, self.sigma_)
        if not np.all(np.isfinite(K)):
            raise ValueError("kernel matrix of X contains NaN or infinity")
        weights = sample_weights(yi, self.classes_.size, self.class_weight, self.classes_, sw)
        basis, total = weighting(sw, slice(None), index if C is None else center_rows(index, sw))
        # class-wise: class c uses only the basis functions at its own samples (its block
        # of H), the squared error still over all n samples
        basis_class = None if self.basis == "full" else yi[index]
        self.alpha_ = solve_basis(
            K, yi, self.classes_.size, self.lam, basis_class, weights, basis, total
        )
        self.center_index_ = None if self.n_basis is None else index
        if C is not None:
            self.X_fit_ = C
        else:
            # a copy: the caller may change X after fit (a precomputed Gram matrix is only
            # kept for its shape)
            self.X_fit_ = X if self.kernel == "precomputed" else X.copy()
        return self

    def _kernel(self, X):
        """The kernel of test inputs ``X`` to the centres (checked as at fit), in the
        namespace the model was fitted in."""
        check_is_fitted(self)
        xp, is_xp = input_namespace(self, X)
        if is_xp:
            return xpaths.test_kernel(self, xp, X)
        if self.kernel == "precomputed":
            check_precomputed(X, n_train=self.X_fit_.shape[0])
        sparse = ("csr", "csc") if self.__sklearn_tags__().input_tags.sparse else False
        X = validate_data(self, X, dtype=np.float64, reset=False, accept_sparse=sparse)
        if self.kernel == "precomputed":
            return X
        return gram(self.kernel, X, self.X_fit_, self.sigma_)

    def _raw_outputs(self, X, rounded=True):
        K = self._kernel(X)
        if not rounded:
            return K @ self.alpha_
        xp, is_xp = get_namespace(K)
        if is_xp:
            return K @ xpaths.effective_alpha(xp, self.alpha_, self.rounding)
        return K @ effective_alpha(self.alpha_, self.rounding)

    @same_namespace
    def predict_proba(self, X):
        """Class-posterior estimates (Eq. 6 for "outputs", Eq. 4 for "parameters", Eq. 5
        for "none").

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            Test inputs, or their cross-kernel to the training inputs with
            ``kernel="precomputed"``.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order; rows sum to one (uniform where every rounded
            output is 0).  With ``rounding="none"`` entries may be negative or exceed one.
        """
        F = self._raw_outputs(X)
        xp, is_xp = get_namespace(F)
        return (
            xpaths.round_outputs(xp, F, self.rounding) if is_xp else round_outputs(F, self.rounding)
        )

    @same_namespace
    def decision_function(self, X):
        """Scores ranked like :meth:`predict_proba`, with its ties at 0 and 1 broken.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`predict_proba`.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Two classes: ``2 p - 1`` of the posterior ``p`` of ``classes_[1]`` where it
            lies strictly between 0 and 1 (and 0 where both outputs round to 0, ``p =
            1/2``); where LSPC-new's rounding of Eq. (6) (or Eq. 4's) sets ``p`` to
            exactly 1, ``1 - 2 min(f_0, 0) >= 1``, and where it sets ``p`` to exactly 0,
            ``-1 + 2 min(f_1, 0) <= -1``, with ``f`` the unrounded outputs
            ``phi(x)^T alpha~`` of Eq. (2): the outputs the rounding discarded rank the
            rows the posteriors tie, on the posteriors' own scale, so a sigmoid can be
            fitted to the scores (``CalibratedClassifierCV(method="sigmoid")``).  A
            strictly increasing function of ``p`` where the posteriors differ (to the
            float spacing near -1), positive exactly where :meth:`predict` says
            ``classes_[1]``.  More classes: the posteriors, a posterior of exactly 0
            replaced by ``min(f_k, 0)`` and one of exactly 1 by
            ``1 - max_{j != k} min(f_j, 0)``.  ``rounding="none"``: ``2 p - 1``, or the
            posteriors.
        """
        K = self._kernel(X)
        U = K @ self.alpha_
        xp, is_xp = get_namespace(U)
        if is_xp:
            R = K @ xpaths.effective_alpha(xp, self.alpha_, self.rounding)
            return xpaths.decision_scores(xp, R, U, self.rounding)
        R = K @ effective_alpha(self.alpha_, self.rounding) if self.rounding == "parameters" else U
        return decision_scores(R, U, self.rounding)
