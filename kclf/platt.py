"""Platt scaling of a classifier without probabilities (an SVC), shared by the experiments."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import StratifiedKFold
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import check_is_fitted


class PlattScaled(ClassifierMixin, BaseEstimator):
    """``estimator`` refitted on all the data with a sigmoid on its decision values.

    The sigmoid is fitted on out-of-fold decision values of ``cv`` seeded stratified folds
    (``CalibratedClassifierCV(method="sigmoid", ensemble=False)``), with fewer folds when a
    class has fewer than ``cv`` examples; when a class has a single example, on the
    training decisions themselves.  The sigmoid is monotone, so rankings (AUC) and the
    refitted estimator's decisions are those of ``estimator`` fitted on all the data.

    Parameters
    ----------
    estimator : classifier with ``decision_function`` (or ``predict_proba``)
    cv : int >= 2, default=5
    random_state : int, RandomState or None, default=None
        Seed of the fold shuffling.

    Attributes
    ----------
    calibrated_ : CalibratedClassifierCV
        The fitted calibration (its ``estimator`` fitted on all the data).
    classes_ : ndarray of shape (n_classes,)

    References
    ----------
    J. Platt, "Probabilistic outputs for support vector machines and comparisons to
    regularized likelihood methods", Advances in Large Margin Classifiers, 1999.
    """

    _parameter_constraints = {
        "estimator": [
            HasMethods(["fit", "decision_function"]),
            HasMethods(["fit", "predict_proba"]),
        ],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, *, cv=5, random_state=None):
        self.estimator = estimator
        self.cv = cv
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit ``estimator`` and the sigmoid on its out-of-fold decision values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : PlattScaled
            The fitted estimator.
        """
        fewest = int(np.unique(y, return_counts=True)[1].min())
        if fewest >= 2:
            folds = StratifiedKFold(
                min(self.cv, fewest), shuffle=True, random_state=self.random_state
            )
            model = CalibratedClassifierCV(clone(self.estimator), ensemble=False, cv=folds)
        else:
            fitted = clone(self.estimator).fit(X, y)
            model = CalibratedClassifierCV(FrozenEstimator(fitted))
        self.calibrated_ = model.fit(X, y)
        self.classes_ = self.calibrated_.classes_
        return self

    def predict_proba(self, X):
        """The sigmoid of the refitted estimator's decision values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order; rows sum to one.
        """
        check_is_fitted(self)
        return self.calibrated_.predict_proba(X)

    def predict(self, X):
        """The class of largest calibrated probability.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        return self.calibrated_.predict(X)
