"""The estimators the workflow wraps around the library's and its peers' for its
experiments: GPy's EP classifier (an optional peer), a grid-searched RBF SVC with Platt
scaling, a search by an estimator's own criterion (no inner CV), and an estimator
whose Gaussian widths are multiples of the median distance of
what it is fitted on."""

from __future__ import annotations

import importlib.util

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import GridSearchCV, ParameterGrid, StratifiedKFold
from sklearn.svm import SVC

from kclf import PlattScaled
from kclf.kernels import median_sigma
from kclf.model_selection import sigma_grid

#: why ``gpy_ep`` did not run (the curves file's ``skipped`` entry, the caption's note)
GPY_MISSING = "GPy is not installed (pip install GPy: the optional extra kclf[bench])"


def gpy_available():
    """Whether GPy can be imported (without importing it)."""
    return importlib.util.find_spec("GPy") is not None


class GPyEPClassifier(ClassifierMixin, BaseEstimator):
    """GPy's EP classifier as a binary scikit-learn-like classifier: ``GPy.core.GP`` with an
    RBF kernel (variance 1, length scale ``length_scale``: the median distance of the
    training inputs by default, scikit-learn GPC's start here), the Bernoulli (probit)
    likelihood and ``EP()``; ``model.optimize()`` (GPy's own optimiser, EP alternated
    with the kernel's hyper-parameters) fits the variance and length scale.  GPy visits
    the sites in an order drawn from NumPy's global generator: it is seeded with
    ``random_state`` for the fit and restored afterwards."""

    def __init__(self, length_scale=None, random_state=0):
        self.length_scale = length_scale
        self.random_state = random_state

    def fit(self, X, y):
        import GPy

        X = np.asarray(X, dtype=float)
        self.classes_, y01 = np.unique(y, return_inverse=True)
        if self.classes_.size != 2:
            raise ValueError(f"GPyEPClassifier is binary, got classes {self.classes_}")
        ls = median_sigma(X) if self.length_scale is None else self.length_scale
        state = np.random.get_state()  # noqa: NPY002 (GPy draws from the global generator)
        try:
            np.random.seed(self.random_state % 2**32)  # noqa: NPY002
            self.model_ = GPy.core.GP(
                X,
                y01.astype(float)[:, None],
                kernel=GPy.kern.RBF(X.shape[1], variance=1.0, lengthscale=ls),
                likelihood=GPy.likelihoods.Bernoulli(),
                inference_method=GPy.inference.latent_function_inference.EP(),
            )
            self.model_.optimize()
        finally:
            np.random.set_state(state)  # noqa: NPY002
        return self

    def predict_proba(self, X):
        """Columns in ``classes_`` order: GPy's predictive mean of the Bernoulli output,
        ``Phi(mu / sqrt(1 + s2))``."""
        p = np.clip(self.model_.predict(np.asarray(X, dtype=float))[0].ravel(), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def decision_function(self, X):
        """The latent predictive mean (positive means ``classes_[1]``)."""
        return self.model_.predict_noiseless(np.asarray(X, dtype=float))[0].ravel()

    def predict(self, X):
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]


class PlattSVC(ClassifierMixin, BaseEstimator):
    """An RBF ``SVC`` whose ``C`` and ``gamma`` a grid search chooses (none for a grid of
    one point), its decisions from
    the refitted SVC and its probabilities by Platt scaling (:class:`kclf.PlattScaled`,
    out-of-fold decision values on ``cv`` folds)."""

    def __init__(self, grid, cv, random_state):
        self.grid, self.cv, self.random_state = grid, cv, random_state

    def fit(self, X, y):
        points = list(ParameterGrid(self.grid))
        if len(points) == 1:  # nothing to choose: no search
            self.best_params_ = points[0]
        else:
            folds = StratifiedKFold(self.cv, shuffle=True, random_state=self.random_state)
            search = GridSearchCV(SVC(), self.grid, cv=folds, refit=False).fit(X, y)
            self.best_params_ = search.best_params_
        self.platt_ = PlattScaled(
            SVC(**self.best_params_), cv=self.cv, random_state=self.random_state
        )
        self.platt_.fit(X, y)
        # ensemble=False: the calibration's one estimator is the SVC refitted on all rows
        self.svc_ = self.platt_.calibrated_.calibrated_classifiers_[0].estimator
        self.classes_ = self.platt_.classes_
        return self

    def predict(self, X):
        return self.svc_.predict(X)

    def predict_proba(self, X):
        return self.platt_.predict_proba(X)


class _PredictsByItsFit(ClassifierMixin, BaseEstimator):
    """Predictions of the fitted estimator the attribute ``_fitted`` names."""

    _fitted = "estimator_"

    def predict(self, X):
        return getattr(self, self._fitted).predict(X)

    def predict_proba(self, X):
        return getattr(self, self._fitted).predict_proba(X)


class MedianWidths(_PredictsByItsFit):
    """An estimator whose Gaussian widths are multiples of the median distance of the
    inputs it is fitted on (a preprocessed training fold): ``build(widths)`` makes the
    estimator of the widths :func:`kclf.model_selection.sigma_grid` of ``factors``;
    ``factors`` None passes None (the estimator's own default)."""

    def __init__(self, build, factors):
        self.build, self.factors = build, factors

    def fit(self, X, y):
        widths = None if self.factors is None else sigma_grid(X, self.factors)
        self.estimator_ = self.build(widths).fit(X, y)
        self.classes_ = self.estimator_.classes_
        return self


def oob_accuracy(forest):
    """A fitted ``RandomForestClassifier(oob_score=True)``'s out-of-bag accuracy: the share
    of its training rows whose vote by the trees that did not draw them is their class."""
    return forest.oob_score_


class OwnCriterionSearch(_PredictsByItsFit):
    """``estimator`` at each point of ``param_grid``, fitted once on all the rows it is
    given, and the point of the highest ``criterion(fitted)`` kept (ties: the first point
    in ``ParameterGrid`` order, as ``GridSearchCV`` breaks them): a search with no inner
    CV, by a criterion the estimator computes from its own fit (:func:`oob_accuracy`).
    ``best_params_``, ``best_score_``, ``best_estimator_`` (the
    kept fit, not refitted) and ``scores_`` (every point's, in grid order)."""

    _fitted = "best_estimator_"

    def __init__(self, estimator, param_grid, criterion):
        self.estimator, self.param_grid, self.criterion = estimator, param_grid, criterion

    def fit(self, X, y):
        best, self.scores_ = None, []
        for point in ParameterGrid(self.param_grid):
            fitted = clone(self.estimator).set_params(**point).fit(X, y)
            score = float(self.criterion(fitted))
            self.scores_.append(score)
            if best is None or score > best[0]:
                best = (score, point, fitted)
        self.best_score_, self.best_params_, self.best_estimator_ = best
        self.classes_ = self.best_estimator_.classes_
        return self


def gpy_missing():
    """Why the GPy peers cannot run here (:data:`GPY_MISSING`), or None when they can."""
    return None if gpy_available() else GPY_MISSING
