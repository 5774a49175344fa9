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
from sklearn.utils.validation import check_is_fitted, validate_data

from .._base import ArgmaxPredictMixin, KernelMixin, log_odds
from .._validation import (
    KERNEL,
    POSITIVE,
    check_precomputed,
    class_labels,
    reject_with_precomputed,
)
from ..kernels import gram
from ._solver import choose_centers, effective_alpha, round_outputs, sample_weights, solve_basis

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

    def _check_params(self, X):
        """The rules between parameters; the width used (None for non-rbf kernels)."""
        reject_with_precomputed(self, "n_basis", "low-rank LSPC")
        if self.n_basis is not None and self.basis == "classwise" and self.centers != "random":
            raise ValueError("basis='classwise' needs centers='random' (labelled centres)")
        return self._width(X)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model: solve Eq. (3) for every class with one factorisation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            The training inputs, or their Gram matrix with ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self : LSPC
            The fitted estimator (``alpha_`` the solution alpha~ of Eq. (3)).
        """
        return self._fit(X, y)

    def _fit(self, X, y, centers=None):
        """:meth:`fit`; ``centers`` an ``(index, C)`` pair chosen by the caller (a search
        that fixed the low-rank basis before its folds) instead of :func:`choose_centers`."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        if self.kernel == "precomputed":
            check_precomputed(X)
        self.classes_, yi = class_labels(y, "LSPC")
        self.sigma_ = self._check_params(X)
        if self.n_basis is None:
            index, C = np.arange(X.shape[0]), None
        elif centers is not None:
            index, C = centers
        else:
            index, C = choose_centers(X, self.n_basis, self.centers, self.random_state)
        K = gram(self.kernel, X, C, self.sigma_)
        if not np.all(np.isfinite(K)):
            raise ValueError("kernel matrix of X contains NaN or infinity")
        weights = sample_weights(yi, self.classes_.size, self.class_weight, self.classes_)
        # class-wise: class c uses only the basis functions at its own samples (its block
        # of H), the squared error still over all n samples
        basis_class = None if self.basis == "full" else yi[index]
        self.alpha_ = solve_basis(K, yi, self.classes_.size, self.lam, basis_class, weights)
        self.center_index_ = None if self.n_basis is None else index
        if C is not None:
            self.X_fit_ = C
        else:
            # a copy: the caller may change X after fit (a precomputed Gram matrix is only
            # kept for its shape)
            self.X_fit_ = X if self.kernel == "precomputed" else X.copy()
        return self

    def _raw_outputs(self, X, rounded=True):
        check_is_fitted(self)
        if self.kernel == "precomputed":
            check_precomputed(X, n_train=self.X_fit_.shape[0])
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel == "precomputed":
            K = X
        else:
            K = gram(self.kernel, X, self.X_fit_, self.sigma_)
        alpha = effective_alpha(self.alpha_, self.rounding) if rounded else self.alpha_
        return K @ alpha

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
        return round_outputs(self._raw_outputs(X), self.rounding)

    def decision_function(self, X):
        """Scores ranked like :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`predict_proba`.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Two classes: the log-odds ``log p(classes_[1]|x) - log p(classes_[0]|x)``
            (``-+CERTAIN_LOG_ODDS = -+745``, beyond every other value, where a posterior is
            exactly 0 or 1, as LSPC-new's rounding of Eq. (6) allows: finite, ranked like
            the posteriors; ``p1 - p0`` for ``rounding="none"``, whose outputs may be
            negative).
            More classes: the posterior estimates of :meth:`predict_proba`.
        """
        P = self.predict_proba(X)
        if P.shape[1] != 2:
            return P
        return log_odds(P[:, 1]) if self.rounding != "none" else P[:, 1] - P[:, 0]
