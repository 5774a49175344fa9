"""The private helpers the estimators share: one wording for targets with one class, the
binary-target and label-matrix checks, the convergence warning, the folds of every CV
search, and the interface through which PairwiseCoupling fits all pairs at once."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold

import kclf
from kclf import (
    LSPC,
    LSPCCV,
    MAPLP,
    CorrLog,
    KernelLogisticRegression,
    KernelLogisticRegressionCV,
    ManifoldGPC,
    PairwiseCoupling,
    PlattScaled,
    WeightedRidgeLogistic,
)
from kclf._folds import cv_splits
from kclf._validation import (
    binary_labels,
    class_labels,
    label_matrix,
    one_class_message,
    warn_convergence,
)
from kclf.coupling import PairBatching
from kclf.klr._pairs import fit_pairs, pairs_decision

X = np.random.default_rng(0).normal(size=(12, 2))
ONE_CLASS = np.full(12, 3)


@pytest.mark.parametrize(
    "est",
    [
        LSPC(sigma=1.0),
        LSPCCV(),
        KernelLogisticRegression(),
        KernelLogisticRegressionCV(),
        PairwiseCoupling(LSPC(sigma=1.0)),
        MAPLP(sigma=1.0),
        ManifoldGPC(n_centers=3),
    ],
    ids=lambda e: type(e).__name__,
)
def test_every_multiclass_estimator_words_one_class_alike(est):
    with pytest.raises(ValueError) as err:
        est.fit(X, ONE_CLASS)
    assert str(err.value) == one_class_message(type(est).__name__, 3)


@pytest.mark.parametrize(
    "est",
    [WeightedRidgeLogistic(), CorrLog(0.0, 0.1)],
    ids=lambda e: type(e).__name__,
)
def test_every_binary_estimator_words_one_class_and_other_targets_alike(est):
    name = type(est).__name__
    with pytest.raises(ValueError) as err:
        est.fit(X, ONE_CLASS)
    assert str(err.value) == one_class_message(name, 3, binary=True)
    assert "exactly two classes" in str(err.value)
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        est.fit(X, np.arange(12) % 3)
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        est.fit(X, np.linspace(0.0, 1.0, 12))


def test_class_and_binary_labels_return_classes_and_indices():
    classes, yi = class_labels(np.array(["b", "a", "c", "a"]), "X")
    assert classes.tolist() == ["a", "b", "c"] and yi.tolist() == [1, 0, 2, 0]
    classes, yi = binary_labels(np.array([5, 7, 7]), "X")
    assert classes.tolist() == [5, 7] and yi.tolist() == [0, 1, 1]
    with pytest.raises(ValueError, match="Unknown label type"):
        class_labels(np.array([0.5, 1.5]), "X")


def test_label_matrix():
    assert label_matrix(np.array([[0, 1], [1, 1.0]]), 2).dtype.kind == "i"
    with pytest.raises(ValueError, match="2-D"):
        label_matrix(np.zeros(3), 3)
    with pytest.raises(ValueError, match="different numbers of rows"):
        label_matrix(np.zeros((3, 2)), 4)
    with pytest.raises(ValueError, match="only 0 and 1"):
        label_matrix(np.full((3, 2), 2), 3)


def test_warn_convergence_points_at_the_callers_caller():
    def solver():
        warn_convergence("stopped at the cap")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solver()  # this line
    (w,) = caught
    assert w.category is ConvergenceWarning and str(w.message) == "stopped at the cap"
    assert w.filename == __file__


def test_plattscaled_is_public():
    assert "PlattScaled" in kclf.__all__ and kclf.PlattScaled is PlattScaled


def test_cv_splits_takes_an_int_a_splitter_and_an_iterable():
    y = np.tile([0, 1], 10)
    Xs = np.zeros((20, 1))
    by_int = cv_splits(3, Xs, y, np.random.RandomState(4))
    again = cv_splits(3, Xs, y, 4)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(by_int, again, strict=True))
    by_splitter = cv_splits(KFold(4), Xs, y, None)
    by_iterable = cv_splits(list(KFold(4).split(Xs)), Xs, y, None)
    assert len(by_splitter) == len(by_iterable) == 4
    with pytest.raises(ValueError, match="no folds"):
        cv_splits([], Xs, y, None)


# ----------------------------------------------------- PairwiseCoupling's PairBatching


def three_classes(seed=0, n=(20, 14, 26)):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n)
    return rng.normal(size=(y.size, 2)) + 1.5 * np.eye(3, 2)[y], y


def pair_args(y):
    pairs = np.array([(0, 1), (0, 2), (1, 2)])
    return pairs, [np.flatnonzero((y == i) | (y == j)) for i, j in pairs]


class Declines(KernelLogisticRegression):
    """Declines the batched fit: PairwiseCoupling must fit pair by pair."""

    def _fit_pairs(self, X, yi, pairs, pair_index):
        return None


def test_the_interface_declines_by_default():
    assert PairBatching()._fit_pairs(X, ONE_CLASS, [], []) is None
    assert PairBatching._pairs_decision([], X, X, []) is None
    assert isinstance(KernelLogisticRegression(), PairBatching)
    assert not isinstance(LSPC(), PairBatching)


def test_fit_pairs_equals_one_fit_per_pair_and_builds_fitted_estimators():
    X3, y = three_classes()
    pairs, index = pair_args(y)
    est = KernelLogisticRegression(sigma=1.0, lam=0.05)
    fitted = fit_pairs(est, X3, y, pairs, index)
    for (i, _), idx, e in zip(pairs, index, fitted, strict=True):
        ref = KernelLogisticRegression(sigma=1.0, lam=0.05).fit(X3[idx], (y[idx] == i).astype(int))
        assert type(e) is KernelLogisticRegression and e.get_params() == ref.get_params()
        assert set(vars(e)) == set(vars(ref))
        np.testing.assert_array_equal(e.X_fit_, X3[idx])
        np.testing.assert_allclose(e.dual_coef_, ref.dual_coef_, atol=1e-8)
        np.testing.assert_allclose(e.predict_proba(X3), ref.predict_proba(X3), atol=1e-9)


def test_pairs_decision_is_each_pairs_log_odds():
    X3, y = three_classes(seed=1)
    pairs, index = pair_args(y)
    fitted = fit_pairs(KernelLogisticRegression(lam=0.1), X3, y, pairs, index)
    Xt = X3[::4] + 0.3
    F = KernelLogisticRegression._pairs_decision(fitted, X3, Xt, index)
    np.testing.assert_allclose(F, np.column_stack([e.decision_function(Xt) for e in fitted]))
    assert pairs_decision(fitted, None, Xt, index) is None  # no training rows kept
    # not every pair a fitted KernelLogisticRegression: each predicts for itself
    assert KernelLogisticRegression._pairs_decision([LSPC()], X3, Xt, index) is None


def test_pairwise_coupling_uses_the_interface_or_falls_back():
    X3, y = three_classes(seed=2)
    Xt = X3[::5]
    fast = PairwiseCoupling(KernelLogisticRegression(sigma=1.0)).fit(X3, y)
    slow = PairwiseCoupling(Declines(sigma=1.0)).fit(X3, y)
    assert fast.X_fit_ is not None and not hasattr(slow, "X_fit_")
    np.testing.assert_allclose(fast.predict_proba(Xt), slow.predict_proba(Xt), atol=1e-9)


def test_a_pair_that_stops_at_max_iter_warns():
    X3, y = three_classes(seed=3)
    with pytest.warns(ConvergenceWarning, match="1 of 1 binary problem"):
        PairwiseCoupling(KernelLogisticRegression(max_iter=1, lam=1e-3)).fit(X3, y)
