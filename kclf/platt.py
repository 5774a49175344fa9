"""Platt scaling of a classifier without probabilities (an SVC), shared by the experiments."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import StratifiedKFold
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
    estimator : classifier with ``decision_function``
    cv : int, default=5
    random_state : int or None
        Seed of the fold shuffling.
    """

    def __init__(self, estimator, cv=5, random_state=None):
        self.estimator = estimator
        self.cv = cv
        self.random_state = random_state

    def fit(self, X, y):
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
        check_is_fitted(self)
        return self.calibrated_.predict_proba(X)

    def predict(self, X):
        check_is_fitted(self)
        return self.calibrated_.predict(X)
