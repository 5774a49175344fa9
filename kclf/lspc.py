"""Least-squares probabilistic classifier (LSPC, LSPC', LSPC-new).

Yamada, Sugiyama, Wichern & Simm, "Improving the accuracy of least-squares
probabilistic classifiers", IEICE Trans. Inf. & Syst. (2011); equation numbers below
refer to that paper.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._lowrank import choose_centers, symmetric_eigh
from ._validation import (
    KERNEL,
    POSITIVE,
    check_precomputed,
    class_labels,
    reject_with_precomputed,
)
from .kernels import gram, median_sigma

ROUNDINGS = ("outputs", "parameters", "none")


def normal_equations(K, Y):
    """``(H, h)`` of Eq. (3): ``H = K^T K / n`` (upper triangle only) and ``h = K^T Y / n``.

    ``K`` is the (n_samples, n_basis) design matrix ``[phi(x_i)^T]_i`` and ``Y`` the
    (n_samples, n_columns) 0/1 class indicators.
    """
    n = K.shape[0]
    H = scipy.linalg.blas.dsyrk(1.0 / n, np.asfortranarray(K), trans=1)
    return H, K.T @ Y / n


def solve_normal(H, h, lam, overwrite_h=False):
    """``alpha = (H + lam I)^{-1} h`` for every column of ``h`` with one Cholesky
    factorisation (``H`` from :func:`normal_equations`; changed only if ``overwrite_h``)."""
    if not overwrite_h:
        H = H.copy()
    H[np.diag_indices_from(H)] += lam
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(H, lower=False), h)
    except np.linalg.LinAlgError:
        H = np.triu(H) + np.triu(H, 1).T
        return scipy.linalg.solve(H, h, assume_a="sym")


def solve_lspc(K, Y, lam):
    """Solve Eq. (3) for every column of ``Y`` with one Cholesky factorisation:
    ``alpha = (H + lam I)^{-1} h`` with ``H = K^T K / n`` and ``h = K^T Y / n``."""
    return solve_normal(*normal_equations(K, Y), lam, overwrite_h=True)


def balanced_weights(yi, n_classes):
    """Per-sample weights of ``class_weight="balanced"`` (scikit-learn's spelling):
    ``w_i = n / (c' n_{y_i})`` with ``c'`` the number of classes present, so the weights
    sum to ``n`` and every present class carries the same total weight."""
    counts = np.bincount(yi, minlength=n_classes)
    return yi.size / (np.count_nonzero(counts) * counts[yi].astype(float))


def sample_weights(yi, n_classes, class_weight, classes=None):
    """The weights of the squared loss: None (all one), :func:`balanced_weights`, or
    a dict ``{label: weight}`` over ``classes`` (default ``0 .. n_classes - 1``; labels
    not in it weigh 1)."""
    if class_weight is None:
        return None
    if isinstance(class_weight, dict):
        classes = range(n_classes) if classes is None else classes
        return np.array([float(class_weight.get(c, 1.0)) for c in classes])[yi]
    return balanced_weights(yi, n_classes)


def block_columns(yi, n_classes, basis_class):
    """``[(cols, classes), ...]``: the blocks of Eq. (3) to solve.  ``basis_class`` None
    (the full basis): one block, every basis function, every class.  Otherwise
    (class-wise basis) one block per class ``c`` that owns a basis function: the basis
    functions of class ``c`` (``basis_class == c``) and that class only."""
    if basis_class is None:
        return [(slice(None), np.arange(n_classes))]
    return [
        (np.flatnonzero(basis_class == c), np.array([c]))
        for c in range(n_classes)
        if np.any(basis_class == c)
    ]


def weighted_system(K, Y, weights):
    """``(K^T W K / n, K^T W Y / n)`` as ``(H, h)`` of Eq. (3) with the weighted squared
    loss ``(1/2n) sum_i w_i (alpha^T phi(x_i) - y_i)^2`` (``weights`` None: ``W = I``);
    ``H`` full (both triangles)."""
    n = K.shape[0]
    KW = K if weights is None else K * weights[:, None]
    return KW.T @ K / n, KW.T @ Y / n


def fit_alpha(K, yi, n_classes, lam, basis_class=None, weights=None):
    """The solution alpha~ (b, n_classes) of Eq. (3) on the design matrix ``K`` (n, b):
    per block of :func:`block_columns` ``(H_B + lam I)^{-1} h_B`` with the (weighted)
    :func:`weighted_system` of its columns; zero outside a class's block."""
    Y = np.eye(n_classes)[yi]
    alpha = np.zeros((K.shape[1], n_classes))
    for cols, cls in block_columns(yi, n_classes, basis_class):
        H, h = weighted_system(K[:, cols], Y[:, cls], weights)
        H[np.diag_indices_from(H)] += lam
        alpha[np.ix_(np.arange(K.shape[1])[cols], cls)] = scipy.linalg.solve(H, h, assume_a="pos")
    return alpha


def alpha_path(K, yi, n_classes, lams, basis_class=None, weights=None):
    """:func:`fit_alpha` for every lambda of ``lams`` at once, (b, n_lams, n_classes):
    per block one eigendecomposition ``H_B = V diag(e) V^T``, then
    ``alpha~(lam) = V diag(1 / (e + lam)) V^T h_B``."""
    Y = np.eye(n_classes)[yi]
    lams = np.asarray(lams, dtype=float)
    alpha = np.zeros((K.shape[1], lams.size, n_classes))
    for cols, cls in block_columns(yi, n_classes, basis_class):
        H, h = weighted_system(K[:, cols], Y[:, cls], weights)
        e, V = symmetric_eigh(H)
        R = V.T @ h  # (b_B, |cls|)
        GR = R[:, None, :] / (e[:, None, None] + lams[None, :, None])
        A = (V @ GR.reshape(V.shape[0], -1)).reshape(GR.shape)
        if isinstance(cols, slice):
            alpha[:, :, cls] = A
        else:
            alpha[np.ix_(cols, np.arange(lams.size), cls)] = A
    return alpha


def round_outputs(F, rounding):
    """Class-posterior estimates from raw outputs ``F = phi(x)^T alpha`` (..., n, c).

    ``"outputs"`` and ``"parameters"`` (whose ``F`` was computed from the rounded
    parameters): ``max(0, F)`` normalised, uniform ``1/c`` where the sum is 0 (Eq. 6,
    Eq. 4).  ``"none"``: ``F`` normalised as is (Eq. 5), which may be negative or
    exceed one; uniform where the sum is 0.
    """
    c = F.shape[-1]
    P = F if rounding == "none" else np.maximum(F, 0.0)
    Z = P.sum(axis=-1, keepdims=True)
    ok = Z != 0 if rounding == "none" else Z > 0
    out = np.full_like(P, 1.0 / c)
    np.divide(P, Z, out=out, where=ok)
    return out


def effective_alpha(alpha, rounding):
    """The parameters used for prediction: ``max(0, alpha)`` for the original LSPC."""
    return np.maximum(alpha, 0.0) if rounding == "parameters" else alpha


class LSPC(ClassifierMixin, BaseEstimator):
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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _check_params(self, X):
        """The rules between parameters; the width used (None for non-rbf kernels)."""
        reject_with_precomputed(self, "n_basis", "low-rank LSPC")
        if self.n_basis is not None and self.basis == "classwise" and self.centers != "random":
            raise ValueError("basis='classwise' needs centers='random' (labelled centres)")
        if self.kernel != "rbf":
            return None
        return median_sigma(X) if self.sigma is None else float(self.sigma)

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
        self._fit_basis(X, yi, C, index)
        return self

    def _fit_basis(self, X, yi, C, index):
        """Solve Eq. (3) with kernels centred at ``C`` (None: at all of ``X``), the
        training rows ``index`` (None for k-means centres)."""
        K = gram(self.kernel, X, C, self.sigma_)
        if not np.all(np.isfinite(K)):
            raise ValueError("kernel matrix of X contains NaN or infinity")
        weights = sample_weights(yi, self.classes_.size, self.class_weight, self.classes_)
        if self.basis == "full" and weights is None:
            self.alpha_ = solve_lspc(K, np.eye(self.classes_.size)[yi], self.lam)
        else:
            # class-wise: class c uses only the basis functions at its own samples (its
            # block of H), the squared error still over all n samples
            basis_class = None if self.basis == "full" else yi[index]
            self.alpha_ = fit_alpha(K, yi, self.classes_.size, self.lam, basis_class, weights)
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

    def predict(self, X):
        """The class of largest estimated posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`predict_proba`.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels from ``classes_`` (the first of tied posteriors).
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


#: The log-odds given to a posterior of exactly 0 (-) or 1 (+): beyond every finite
#: log-odds of a float64 probability in (0, 1), from ``log(5e-324) = -744.4`` to
#: ``-log(2**-53) = 36.7``, so the scores keep the posteriors' order (ties included) and
#: stay finite, as scikit-learn's scorers (``roc_auc``, ...) need.
CERTAIN_LOG_ODDS = 745.0


def log_odds(p):
    """``log p - log(1 - p)`` computed without cancellation; ``-+CERTAIN_LOG_ODDS`` at
    exactly 0 or 1."""
    with np.errstate(divide="ignore"):
        return np.clip(np.log(p) - np.log1p(-p), -CERTAIN_LOG_ODDS, CERTAIN_LOG_ODDS)
