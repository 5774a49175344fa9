"""Weighted ridge logistic regression (Fradi, Samir & Yao, Sec. 2.2).

The estimator maximises ``l^lam(beta) = (1 - lam)/2 * l(beta) - lam/2 * ||beta||^2`` with
``l(beta) = sum_i y_i x_i' beta - log(1 + exp(x_i' beta))`` (``y_i`` in {0, 1}) by
Newton-Raphson or by gradient ascent.  Up to the factor ``1/lam`` this is scikit-learn's
L2 logistic regression with ``C = (1 - lam) / (2 lam)``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._validation import binary_labels, validate_data, warn_convergence
from ._ridge_solver import maximise

SOLVERS = ("newton", "gradient")


class WeightedRidgeLogistic(ClassifierMixin, BaseEstimator):
    """Binary logistic regression with the weighted ridge likelihood of Sec. 2.2.

    Parameters
    ----------
    lam : float in [0, 1), default=0.1
        Weight ``lambda`` of the penalty: ``l^lam = (1-lam)/2 l(beta) - lam/2 ||beta||^2``.
        ``lam=0`` is the maximum likelihood estimator (which diverges on separable data).
    solver : {"newton", "gradient"}, default="newton"
        ``"newton"``: Newton-Raphson ``beta <- beta - H^-1 g`` from the Taylor expansion of
        the gradient (step halving if the objective would decrease).  ``"gradient"``:
        gradient ascent with the fixed step ``1/Lip``, ``Lip = (1-lam)/8 ||X||_2^2 + lam``
        the Lipschitz constant of the gradient (monotone ascent, linear convergence).
    fit_intercept : bool, default=True
        Add an unpenalised intercept (the paper's model has none; without it an
        unbalanced task is biased towards 1/2).  The features are then centred internally
        (``x' beta + b = (x - mean)' beta + (b + mean' beta)``, the same model and the same
        ``l^lam``, since the intercept is free): on uncentred features the intercept's
        column is nearly parallel to the others and both solvers stalled (at an offset of
        1e4 Newton stopped far below the optimum, and the gradient step ``1/Lip``,
        ``Lip ~ ||X||^2``, left ``beta ~ 0``).
    max_iter : int or None, default=None
        Iteration cap; ``None`` is 100 for Newton and 20000 for gradient.
    tol : float, default=1e-8
        Stop when the gradient's max-norm is below ``tol * max(1, |l^lam|)``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    objective_ : float
        ``l^lam`` at the solution.
    n_iter_ : int

    References
    ----------
    A. Fradi, C. Samir, A.-F. Yao. A Bayesian inference for a manifold Gaussian process
    classifier, Sec. 2.2.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from kclf.mgpc.ridge_logistic import WeightedRidgeLogistic
    >>> X, y = make_classification(200, 5, random_state=0)
    >>> WeightedRidgeLogistic(lam=0.1).fit(X, y).score(X, y) > 0.9
    True
    """

    _parameter_constraints = {
        "lam": [Interval(Real, 0, 1, closed="left")],
        "solver": [StrOptions(set(SOLVERS))],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, lam=0.1, *, solver="newton", fit_intercept=True, max_iter=None, tol=1e-8):
        self.lam = lam
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Maximise the weighted ridge likelihood ``l^lam`` of Sec. 2.2 on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The covariates ``x_i``.
        y : array-like of shape (n_samples,)
            Exactly two classes; ``classes_[1]`` is coded ``t_i = 1``.  The paper's model
            is binary (one ``beta``): for several classes wrap the estimator in
            ``sklearn.multiclass.OneVsRestClassifier``, whose probabilities are the
            one-vs-rest ones normalised to sum to one.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights multiplying each row's log-likelihood term in
            ``l(beta)`` (an integer weight is the row repeated; 0 drops it).  The
            intercept's centring uses the weighted mean.

        Returns
        -------
        self : WeightedRidgeLogistic
            The fitted estimator (``coef_`` and ``intercept_`` are ``beta``).
        """
        X, y = validate_data(self, X, y, dtype=float)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type == "multiclass":
            raise ValueError(
                "Only binary classification is supported. The type of the target is "
                "multiclass: WeightedRidgeLogistic is the paper's binary model; use "
                "sklearn.multiclass.OneVsRestClassifier(WeightedRidgeLogistic()) for "
                "several classes"
            )
        self.classes_, t = binary_labels(y, "WeightedRidgeLogistic")
        t = t.astype(float)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(
                sample_weight, X, dtype=np.float64, ensure_non_negative=True
            )
        lam = float(self.lam)
        n, p = X.shape
        if self.fit_intercept:
            mean = np.average(X, axis=0, weights=sample_weight)
        else:
            mean = np.zeros(p)
        A = np.hstack([X - mean, np.ones((n, 1))]) if self.fit_intercept else X
        mask = np.ones(A.shape[1])
        if self.fit_intercept:
            mask[-1] = 0.0
        max_iter = self.max_iter or (100 if self.solver == "newton" else 20000)
        beta, obj, it, converged = maximise(
            A, t, lam, mask, self.solver, max_iter, self.tol, sample_weight
        )
        if not converged:
            warn_convergence(
                f"{self.solver} solver did not reach tol={self.tol} in {max_iter} iterations"
            )
        self.coef_ = beta[:p][None, :]
        self.intercept_ = np.array([beta[p] - mean @ beta[:p] if self.fit_intercept else 0.0])
        self.objective_ = float(obj)
        self.n_iter_ = it
        return self

    def decision_function(self, X):
        """The linear predictor ``x' beta`` (plus the intercept).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The covariates ``x``, as at fit.

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            Positive means ``classes_[1]``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict_proba(self, X):
        """The logistic model's probabilities ``[1 - sigma(x' beta), sigma(x' beta)]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The covariates ``x``, as at fit.

        Returns
        -------
        P : ndarray of shape (n_samples, 2)
            Columns in ``classes_`` order.
        """
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """Class labels: ``classes_[1]`` where ``x' beta > 0``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The covariates ``x``, as at fit.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]
