"""Sample weights and sparse input of LSPC and LSPCCV (issue 43, items 2 and 3).

A row of weight ``w`` stands for ``w`` copies of it: integer weights give the fit of the
repeated rows and a zero weight that of the row dropped, on every path (the exact and
low-rank bases, the class-wise basis, class weights, several tasks, every rounding), and
a CSR or CSC matrix gives the dense array's probabilities.  The tolerances are those of
two solves of the same system in another order of summation: ``n / lam`` amplifying a few
ulps, at most 1e-10 here (n below 200, lam >= 0.01)."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification

from kclf import LSPC, LSPCCV

ATOL = 1e-10


def data(n=60, classes=3, seed=0):
    X, y = make_classification(
        n, 4, n_informative=3, n_redundant=0, n_classes=classes, random_state=seed
    )
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 4, n)
    w[0] = 0  # at least one row dropped
    return X, y, w, rng.normal(size=(25, 4))


def groups_folds(groups):
    return [(np.flatnonzero(groups != g), np.flatnonzero(groups == g)) for g in np.unique(groups)]


LSPC_PATHS = [
    {},
    {"class_weight": "balanced"},
    {"class_weight": {0: 2.0, 1: 0.5}},
    {"basis": "classwise"},
    {"rounding": "parameters"},
    {"rounding": "none"},
    {"kernel": "linear"},
    {"n_basis": 1000, "random_state": 0},  # every row a centre: the exact model
    {"n_basis": 1000, "basis": "classwise", "random_state": 0},
]


@pytest.mark.parametrize("params", LSPC_PATHS, ids=str)
def test_lspc_integer_weights_equal_the_repeated_rows(params):
    X, y, w, Xt = data()
    rep = np.repeat(np.arange(y.size), w)
    weighted = LSPC(**params).fit(X, y, sample_weight=w)
    repeated = LSPC(**params).fit(X[rep], y[rep])
    for method in ("predict_proba", "decision_function"):
        np.testing.assert_allclose(
            getattr(weighted, method)(Xt), getattr(repeated, method)(Xt), rtol=0, atol=ATOL
        )
    # the default width: the weighted median over the pairs of the repeated rows
    if weighted.sigma_ is not None:
        assert weighted.sigma_ == pytest.approx(repeated.sigma_, rel=1e-14)


@pytest.mark.parametrize(
    "params",
    [{"n_basis": 8, "random_state": 1}, {"n_basis": 8, "centers": "kmeans", "random_state": 1}],
    ids=str,
)
def test_lspc_zero_weights_equal_the_rows_dropped_with_few_centres(params):
    """Centres of a low-rank model are drawn among the rows of positive weight, so a zero
    weight is the row dropped (the same draw); each centre is one basis function."""
    X, y, w, Xt = data()
    w = np.minimum(w, 1)  # 0 or 1
    keep = w > 0
    a = LSPC(**params).fit(X, y, sample_weight=w)
    b = LSPC(**params).fit(X[keep], y[keep])
    np.testing.assert_allclose(a.predict_proba(Xt), b.predict_proba(Xt), rtol=0, atol=ATOL)
    if params.get("centers") != "kmeans":
        np.testing.assert_array_equal(a.X_fit_, b.X_fit_)


def test_lspc_weights_of_one_are_no_weights_and_scale_like_lambda():
    """Weights of one: the unweighted fit.  Weights c w: the squared loss and the basis
    multiplicities both scale, ``H`` by c, so the fit is the one of ``lam / c``."""
    X, y, w, Xt = data()
    base = LSPC(sigma=1.3, lam=0.1).fit(X, y)
    ones = LSPC(sigma=1.3, lam=0.1).fit(X, y, sample_weight=np.ones(y.size))
    np.testing.assert_allclose(ones.predict_proba(Xt), base.predict_proba(Xt), atol=ATOL)
    w = w + 1.0
    twice = LSPC(sigma=1.3, lam=0.1).fit(X, y, sample_weight=2 * w)
    half_lam = LSPC(sigma=1.3, lam=0.05).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(twice.predict_proba(Xt), half_lam.predict_proba(Xt), atol=ATOL)


SEARCH_PATHS = [
    {},
    {"scoring": "log_loss"},
    {"scoring": "auc"},
    {"class_weight": "balanced"},
    {"basis": "classwise"},
    {"rounding": "parameters"},
    {"n_basis": 1000, "random_state": 0},
]


@pytest.mark.parametrize("tasks", [False, True], ids=["one task", "two tasks"])
@pytest.mark.parametrize("params", SEARCH_PATHS, ids=str)
def test_lspccv_integer_weights_equal_the_repeated_rows(params, tasks):
    """The search with the folds given as groups of rows: every fold's fit, its weighted
    validation scores, the choice and the refit equal those of the repeated rows."""
    X, y, w, Xt = data()
    if params.get("scoring") == "auc":
        y = (y == 1).astype(int)
    t = np.c_[y == 0, y == 1].astype(int) if tasks else y
    groups = np.arange(y.size) % 3
    rep = np.repeat(np.arange(y.size), w)
    grid = dict(lams=[0.01, 0.1, 1.0], **params)
    weighted = LSPCCV(cv=groups_folds(groups), **grid).fit(X, t, sample_weight=w)
    repeated = LSPCCV(cv=groups_folds(groups[rep]), **grid).fit(X[rep], t[rep])
    # a log loss of posteriors near 0 amplifies the fits' round-off: rtol 1e-9
    np.testing.assert_allclose(
        weighted.cv_results_["mean_test_score"],
        repeated.cv_results_["mean_test_score"],
        rtol=1e-9,
        atol=1e-14,
    )
    for method in ("predict_proba", "decision_function"):
        a, b = getattr(weighted, method)(Xt), getattr(repeated, method)(Xt)
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=ATOL)


@pytest.mark.parametrize("params", [{}, {"n_basis": 10, "random_state": 2}], ids=str)
def test_lspccv_lowrank_weighted_search_equals_the_weighted_refits(params):
    """The weighted low-rank search (rows scaled by sqrt(w) in the fold Gram sums) scores
    each setting as a weighted LSPC fitted on the fold and scored with the validation
    weights would."""
    from kclf._scoring import score_proba

    X, y, w, _ = data(n=80)
    w = w + 0.5  # real weights
    folds = groups_folds(np.arange(y.size) % 2)
    lams = [0.01, 0.1]
    cv = LSPCCV(sigmas=[0.8, 1.6], lams=lams, cv=folds, scoring="log_loss", **params)
    cv.fit(X, y, sample_weight=w)
    centers = None if not params else cv.best_estimator_.center_index_
    naive = []
    for s in (0.8, 1.6):
        for lam in lams:
            per_fold = []
            for tr, va in folds:
                est = LSPC(s, lam, **params)
                if centers is not None:
                    # the search's centres, as the search fixes them for every fold
                    est._fit(X[tr], y[tr], centers=(None, X[centers]), sample_weight=w[tr])
                else:
                    est.fit(X[tr], y[tr], sample_weight=w[tr])
                per_fold.append(score_proba(est.predict_proba(X[va]), y[va], "log_loss", w[va]))
            naive.append(np.mean(per_fold))
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], naive, rtol=1e-9)


def test_bad_sample_weights_are_refused_in_one_line():
    X, y, _, _ = data()
    for est in (LSPC(), LSPCCV(lams=[0.1])):
        with pytest.raises(ValueError, match="at least one non-zero"):
            est.fit(X, y, sample_weight=np.zeros(y.size))
        with pytest.raises(ValueError, match="Negative values in data passed to .sample_weight."):
            est.fit(X, y, sample_weight=-np.ones(y.size))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize(
    "make",
    [
        lambda: LSPC(),
        lambda: LSPC(kernel="linear", lam=1.0),
        lambda: LSPC(n_basis=15, random_state=0),
        lambda: LSPC(n_basis=15, centers="kmeans", random_state=0),
        lambda: LSPCCV(lams=[0.01, 0.1], random_state=0),
        lambda: LSPCCV(lams=[0.01, 0.1], random_state=0, n_basis=15),
        lambda: LSPCCV(lams=[0.01, 0.1], random_state=0, basis="classwise"),
    ],
    ids=["lspc", "linear", "lowrank", "kmeans", "lspccv", "lspccv-lowrank", "lspccv-classwise"],
)
def test_sparse_input_gives_the_dense_probabilities(make, fmt):
    """Text-like data: 60 rows of 40 features, 80 % zeros (the column medians 0, so the
    dense path's translation is none and the two differ by summation order only)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(90, 40)) * (rng.uniform(size=(90, 40)) < 0.2)
    y = (X[:, :5].sum(axis=1) > 0).astype(int)
    Xs = sp.csr_matrix(X).asformat(fmt)
    dense = make().fit(X[:60], y[:60])
    sparse = make().fit(Xs[:60], y[:60])
    np.testing.assert_allclose(
        sparse.predict_proba(Xs[60:]), dense.predict_proba(X[60:]), rtol=0, atol=1e-9
    )
    np.testing.assert_allclose(
        sparse.predict_proba(X[60:]), dense.predict_proba(X[60:]), rtol=0, atol=1e-9
    )
    assert sparse.__sklearn_tags__().input_tags.sparse
