"""Platt scaling of a classifier's scores (an SVC, or any kclf estimator), shared by the
experiments."""

from __future__ import annotations

from copy import deepcopy
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import StratifiedKFold
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ._validation import validate_data
from .metrics import EPS

#: The largest decision value Platt's sigmoid is fitted on: the log-odds of a probability
#: 1 - EPS, log((1 - EPS) / EPS) = 34.54 (EPS: the clip of kclf's log loss).
MAX_SCORE = float(np.log1p(-EPS) - np.log(EPS))


def response_method(estimator):
    """The method whose output Platt's sigmoid is fitted on: the estimator's
    ``calibration_response_method`` where it declares one (the protocol
    :class:`PlattScaled` documents), else ``"decision_function"`` if it has one, else
    ``"predict_proba"`` (scikit-learn's ``CalibratedClassifierCV`` order)."""
    declared = getattr(estimator, "calibration_response_method", None)
    if declared is not None:
        return declared
    return "decision_function" if hasattr(estimator, "decision_function") else "predict_proba"


def platt_scores(estimator, X):
    """The finite scores Platt's sigmoid is fitted on (:class:`PlattScaled`).

    By :func:`response_method`: ``predict_proba(X)`` (the column of ``classes_[1]`` for
    two classes), or ``decision_function(X)`` clipped to ``[-MAX_SCORE, MAX_SCORE]``.
    ``ValueError`` naming the estimator for a NaN score.
    """
    if response_method(estimator) == "predict_proba":
        P = np.asarray(estimator.predict_proba(X), dtype=float)
        scores = P[:, 1] if P.shape[1] == 2 else P
    else:
        scores = np.asarray(estimator.decision_function(X), dtype=float)
        scores = np.clip(scores, -MAX_SCORE, MAX_SCORE)
    if np.isnan(scores).any():
        raise ValueError(f"{type(estimator).__name__} gave NaN scores: nothing to calibrate")
    return scores


class _FiniteScores(ClassifierMixin, BaseEstimator):
    """``estimator`` refitted as it is, whose ``decision_function`` is
    :func:`platt_scores` (what ``CalibratedClassifierCV`` fits its sigmoid on)."""

    def __init__(self, estimator):
        self.estimator = estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags = deepcopy(get_tags(self.estimator).input_tags)
        return tags

    def fit(self, X, y):
        self.estimator_ = clone(self.estimator).fit(X, y)
        self.classes_ = self.estimator_.classes_
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        return platt_scores(self.estimator_, X)

    def predict(self, X):
        check_is_fitted(self)
        return self.estimator_.predict(X)


class _Frozen(FrozenEstimator):
    """A fitted model left as it is by ``fit``: every row of a fold is scored from all its
    columns (a precomputed kernel's too: the model's training samples are all of them)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = False
        return tags


class PlattScaled(ClassifierMixin, BaseEstimator):
    """``estimator`` refitted on all the data with a sigmoid on its scores.

    The sigmoid is fitted on out-of-fold scores of ``cv`` stratified folds (unshuffled, or
    shuffled by ``random_state``) (``CalibratedClassifierCV(method="sigmoid",
    ensemble=False)``), with fewer folds when a
    class has fewer than ``cv`` examples; when a class has a single example, on the
    training scores themselves.  The sigmoid is monotone, so rankings (AUC) and the
    refitted estimator's decisions are those of ``estimator`` fitted on all the data.

    The scores (:func:`platt_scores`) are those the estimator fits its outputs on, asked
    of the estimator itself (:func:`response_method`), as scikit-learn's
    ``CalibratedClassifierCV`` does: its ``decision_function`` if it has one, else its
    ``predict_proba``, unless it declares another by a class attribute
    ``calibration_response_method`` (``"predict_proba"`` or ``"decision_function"``).
    LSPC (:class:`kclf.LSPC`, :class:`kclf.LSPCCV`) declares ``"predict_proba"``: it fits
    the posterior itself by least squares (Eq. (3)), so its errors are additive on the
    probability scale, and LSPC-new's rounding (Eq. (6)) sets many posteriors to exactly 0
    or 1; its sigmoid is fitted on the posterior ``p`` itself, and
    ``1 / (1 + exp(A p + B))`` stays between ``1 / (1 + exp(B))`` and
    ``1 / (1 + exp(A + B))``, away from 0 and 1.  Every other estimator's score is its
    ``decision_function``, the scale its loss is additive on (a logistic or probit model's
    log-odds or latent mean, an SVC's or MAPLP's margin: scikit-learn's choice), clipped to
    ``+-MAX_SCORE = +-log((1 - EPS) / EPS) = +-34.54``, the log-odds of kclf's log-loss
    clip, so that Platt's maximum-likelihood fit only sees finite scores.

    Parameters
    ----------
    estimator : classifier with ``decision_function`` (or ``predict_proba``)
    cv : int >= 2, default=5
    random_state : int, RandomState or None, default=None
        Seed of the fold shuffling; ``None``: the folds are unshuffled (the rows in their
        order, as scikit-learn's searches with an integer ``cv``), so that the same data give
        the same calibration on every run.

    Attributes
    ----------
    calibrated_ : CalibratedClassifierCV
        The fitted calibration (its ``estimator`` fitted on all the data).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Only when ``X`` had string column names (a DataFrame); the prediction methods
        refuse a frame with other or reordered columns.

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator).input_tags
        tags.input_tags.sparse = inner.sparse
        tags.input_tags.pairwise = inner.pairwise
        tags.input_tags.allow_nan = inner.allow_nan
        return tags

    def _validate(self, X, y="no_validation", reset=False):
        """``validate_data`` with what the inner estimator accepts (sparse, NaN)."""
        tags = self.__sklearn_tags__().input_tags
        kw = dict(
            accept_sparse=["csr", "csc"] if tags.sparse else False,
            ensure_all_finite="allow-nan" if tags.allow_nan else True,
            dtype=None,
        )
        return validate_data(self, X, y, reset=reset, **kw)

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit ``estimator`` and the sigmoid on its out-of-fold scores.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Sparse only if ``estimator`` takes sparse input.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : PlattScaled
            The fitted estimator.
        """
        X, y = self._validate(X, y, reset=True)
        check_classification_targets(y)
        scored = _FiniteScores(self.estimator)
        fewest = int(np.unique(y, return_counts=True)[1].min())
        if fewest >= 2:
            shuffle = self.random_state is not None  # None: unshuffled, the same every run
            folds = StratifiedKFold(
                min(self.cv, fewest), shuffle=shuffle, random_state=self.random_state
            )
            model = CalibratedClassifierCV(scored, ensemble=False, cv=folds)
        else:
            # one "fold" holding every row: the training scores of the model fitted on all
            rows = np.arange(X.shape[0])
            model = CalibratedClassifierCV(_Frozen(scored.fit(X, y)), cv=[(rows, rows)])
        self.calibrated_ = model.fit(X, y)
        self.classes_ = self.calibrated_.classes_
        return self

    def predict_proba(self, X):
        """The sigmoid of the refitted estimator's scores.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order; rows sum to one.
        """
        check_is_fitted(self)
        return self.calibrated_.predict_proba(self._validate(X))

    def predict(self, X):
        """The class of largest calibrated probability.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        check_is_fitted(self)
        return self.calibrated_.predict(self._validate(X))
