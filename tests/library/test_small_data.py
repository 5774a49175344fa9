"""Every public estimator with its defaults on the smallest data its maths allows.

A binary classifier needs one example of each class (two rows): LSPC's Eq. (3), kernel
logistic regression's Eq. (9), MAPLP's LP, the GP posterior and the ridge likelihood all
have a solution there, and a search with ``cv=2`` folds has a training row in each fold.
Multi-class estimators need one row per class, except kernel logistic regression's search
in pairwise mode, whose coupling of a fold needs every class in the fold's training part:
``cv=2`` examples of each (the folds are stratified then).  CorrLog's default search of
its penalties needs a row per fold (``cv=3``).  One row fewer than the two classes (or the
folds) need is one clear error naming what is missing.
"""

import warnings

import numpy as np
import pytest
from sklearn.svm import SVC

import kclf

# estimator, number of classes (0: a multilabel 0/1 matrix of two labels), fewest rows
CASES = [
    (kclf.LSPC(), 2, 2),
    (kclf.LSPC(), 3, 3),
    (kclf.LSPCCV(), 2, 2),
    (kclf.LSPCCV(), 3, 3),
    (kclf.KernelLogisticRegression(), 2, 2),
    (kclf.KernelLogisticRegression(), 3, 3),
    (kclf.KernelLogisticRegressionCV(), 2, 2),
    (kclf.KernelLogisticRegressionCV(), 3, 6),
    (kclf.KernelLogisticRegressionCV(multi_class="ovr"), 3, 3),
    (kclf.MAPLP(), 2, 2),
    (kclf.MAPLP(), 3, 3),
    (kclf.ManifoldGPC(), 2, 2),
    (kclf.ManifoldGPC(inference="ep"), 2, 2),
    (kclf.WeightedRidgeLogistic(), 2, 2),
    (kclf.PairwiseCoupling(kclf.KernelLogisticRegression()), 3, 3),
    (kclf.CorrLog(), 0, 3),
    (kclf.PlattScaled(SVC()), 2, 2),
    (kclf.PlattScaled(kclf.LSPC()), 3, 3),
]


def _data(n, n_classes):
    X = np.c_[np.arange(n, dtype=float), np.sin(np.arange(n))]
    if n_classes == 0:  # two labels, each with both values among 3 rows
        return X, np.array([[0, 1], [1, 0], [1, 1], [0, 0]])[:n]
    return X, np.arange(n) % n_classes  # a class per row in turn: stratified folds


def _id(case):
    est, c, n = case
    return f"{type(est).__name__}-{c or 'multilabel'}-{n}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_fits_the_smallest_data(case):
    est, n_classes, n = case
    X, y = _data(n, n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # e.g. too few rows to stratify
        P = est.fit(X, y).predict_proba(X)
    assert np.isfinite(P).all() and (P >= 0).all() and (P <= 1).all()
    if n_classes:
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", [c for c in CASES if c[1] in (0, 2) or c[2] > c[1]], ids=_id)
def test_one_row_fewer_is_one_clear_error(case):
    est, n_classes, n = case
    X, y = _data(n - 1, n_classes)
    with pytest.raises(ValueError) as err:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            est.fit(X, y)
    message = str(err.value)
    assert "\n" not in message.strip()
    assert "class" in message or "cv=" in message, message
