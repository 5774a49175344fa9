"""Low-rank LSPC: ``LSPC(n_basis=b)`` and ``LSPCCV(n_basis=b)``."""

import tracemalloc

import numpy as np
import pytest
from array_api_checks import xfail_float32_array_api
from sklearn.cluster import KMeans
from sklearn.model_selection import ShuffleSplit
from sklearn.utils.estimator_checks import parametrize_with_checks

from kclf._folds import cv_folds
from kclf._scoring import score_proba
from kclf.kernels import rbf_kernel
from kclf.lspc import LSPC, LSPCCV
from kclf.lspc._solver import effective_alpha, round_outputs


def blobs(n=80, seed=0, d=3, c=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    X = rng.normal(size=(n, d)) + 1.5 * y[:, None]
    return X, y


def direct_alpha(K, Y, lam):
    """Eq. (3) for the (n, b) design matrix ``K``: the explicit normal equations
    ``(K^T K / n + lam I_b) alpha = K^T Y / n`` by numpy's LU solve."""
    n, b = K.shape
    return np.linalg.solve(K.T @ K / n + lam * np.eye(b), K.T @ Y / n)


# Both sides solve the same b x b symmetric positive definite system, of condition number
# at most (||K||^2 / n + lam) / lam <= 1 + n / lam (kernel values <= 1, ||K||_2 <= n):
# 1 + 80 / 0.05 = 1601 below, so round-off moves alpha by ~1e-12 at most; 1e-8 leaves a
# wide margin and still catches any wrong centre, row or scaling (O(1e-2) and more).
TOL = 1e-8


@pytest.mark.parametrize("rounding", ["outputs", "parameters", "none"])
@pytest.mark.parametrize("basis", ["full", "classwise"])
def test_b_equal_n_is_the_exact_model(rounding, basis):
    X, y = blobs(c=3, seed=1)
    Xt = np.r_[X[:7] + 0.3, X[-5:] * 2]
    exact = LSPC(sigma=1.2, lam=0.05, rounding=rounding, basis=basis).fit(X, y)
    for b in (X.shape[0], 10 * X.shape[0]):
        low = LSPC(sigma=1.2, lam=0.05, rounding=rounding, basis=basis, n_basis=b)
        low.fit(X, y)
        np.testing.assert_array_equal(low.center_index_, np.arange(X.shape[0]))
        np.testing.assert_allclose(low.alpha_, exact.alpha_, atol=TOL, rtol=0)
        np.testing.assert_allclose(low.predict_proba(Xt), exact.predict_proba(Xt), atol=TOL)


@pytest.mark.parametrize("lam", [1e-3, 0.1])
def test_b_below_n_equals_a_direct_solve(lam):
    X, y = blobs(n=150, c=3, seed=2)
    Xt = X[:20] + 0.2
    model = LSPC(sigma=1.5, lam=lam, rounding="parameters", n_basis=25, random_state=4)
    model.fit(X, y)
    idx = model.center_index_
    assert idx.size == 25 and np.unique(idx).size == 25
    np.testing.assert_array_equal(model.X_fit_, X[idx])
    K = rbf_kernel(X, X[idx], 1.5)
    alpha = direct_alpha(K, np.eye(3)[y], lam)
    # condition number <= 1 + 150 / 1e-3 = 1.5e5: round-off ~1e-10 relative
    np.testing.assert_allclose(model.alpha_, alpha, atol=TOL, rtol=0)
    F = rbf_kernel(Xt, X[idx], 1.5) @ np.maximum(alpha, 0.0)
    np.testing.assert_allclose(model.predict_proba(Xt), round_outputs(F, "parameters"), atol=TOL)


def test_classwise_low_rank_is_the_block_solution():
    X, y = blobs(n=120, c=3, seed=3)
    model = LSPC(sigma=1.0, lam=0.1, basis="classwise", n_basis=30, random_state=0).fit(X, y)
    idx = model.center_index_
    K = rbf_kernel(X, X[idx], 1.0)
    for c in range(3):
        cols = y[idx] == c
        a = direct_alpha(K[:, cols], (y == c)[:, None].astype(float), 0.1)[:, 0]
        np.testing.assert_allclose(model.alpha_[cols, c], a, atol=TOL, rtol=0)
        assert np.all(model.alpha_[~cols, c] == 0)


def test_kmeans_centres():
    X, y = blobs(n=150, seed=4)
    model = LSPC(sigma=1.0, lam=0.1, n_basis=12, centers="kmeans", random_state=0).fit(X, y)
    C = KMeans(12, n_init=1, random_state=0).fit(X).cluster_centers_
    np.testing.assert_allclose(model.X_fit_, C, atol=1e-12)
    assert model.center_index_ is None
    alpha = direct_alpha(rbf_kernel(X, C, 1.0), np.eye(2)[y], 0.1)
    np.testing.assert_allclose(model.alpha_, alpha, atol=TOL, rtol=0)


def test_random_state_fixes_the_centres():
    X, y = blobs(n=200, seed=5)
    a = LSPC(sigma=1.0, n_basis=20, random_state=7).fit(X, y)
    b = LSPC(sigma=1.0, n_basis=20, random_state=7).fit(X, y)
    c = LSPC(sigma=1.0, n_basis=20, random_state=8).fit(X, y)
    np.testing.assert_array_equal(a.center_index_, b.center_index_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert not np.array_equal(a.center_index_, c.center_index_)
    cv_a = LSPCCV([0.5, 1.0], [0.01, 0.1], n_basis=20, random_state=3).fit(X, np.c_[y, 1 - y])
    cv_b = LSPCCV([0.5, 1.0], [0.01, 0.1], n_basis=20, random_state=3).fit(X, np.c_[y, 1 - y])
    np.testing.assert_array_equal(cv_a.center_index_, cv_b.center_index_)
    np.testing.assert_array_equal(cv_a.predict_proba(X), cv_b.predict_proba(X))


def naive_lowrank_scores(X, ind, labels, C, sigmas, lams, folds, rounding, scoring):
    """One direct solve of Eq. (3) per (sigma, lambda, fold) with the search's fixed
    centres ``C``; ``ind`` (n, n_tasks, n_cls) indicators.  Mean fold scores,
    (n_tasks, n_settings)."""
    n_tasks = labels.shape[1]
    out = np.zeros((n_tasks, len(sigmas) * len(lams)))
    for si, s in enumerate(sigmas):
        for li, lam in enumerate(lams):
            for t in range(n_tasks):
                sc = []
                for tr, va in folds:
                    alpha = direct_alpha(rbf_kernel(X[tr], C, s), ind[tr, t], lam)
                    F = rbf_kernel(X[va], C, s) @ effective_alpha(alpha, rounding)
                    sc.append(score_proba(round_outputs(F, rounding), labels[va, t], scoring))
                out[t, si * len(lams) + li] = np.nanmean(sc)
    return out


@pytest.mark.parametrize(
    "rounding,scoring",
    [("outputs", "auc"), ("parameters", "log_loss"), ("none", "error"), ("outputs", "log_loss")],
)
def test_fast_lowrank_cv_equals_the_naive_loop_multitask(rounding, scoring):
    rng = np.random.default_rng(7)
    X = rng.poisson(1.0, size=(120, 6)).astype(float)
    Y = np.c_[X[:, 0] > 1, X[:, 1] + X[:, 2] > 2, rng.random(120) < 0.3].astype(int)
    sigmas, lams = [0.8, 1.6, 3.2], [1e-3, 1e-2, 0.1, 1.0]
    cv = LSPCCV(sigmas, lams, cv=3, rounding=rounding, scoring=scoring, random_state=3, n_basis=30)
    cv.fit(X, Y)
    C = X[cv.center_index_]
    ind = np.stack([1 - Y, Y], axis=2).astype(float)
    naive = naive_lowrank_scores(X, ind, Y, C, sigmas, lams, cv_folds(Y, 3, 3), rounding, scoring)
    # error and AUC are counts of exact comparisons, equal unless round-off flips one;
    # log loss moves by round-off times the condition number (<= 1 + 80 / 1e-3)
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], naive, rtol=1e-9, atol=0)
    # the final model: one low-rank LSPC per task at its chosen setting, same centres
    for t in range(3):
        m = LSPC(sigma=cv.sigma_[t], lam=cv.lam_[t], rounding=rounding, n_basis=30)
        m = m._fit(X, Y[:, t], centers=(cv.center_index_, C))
        np.testing.assert_allclose(cv.predict_proba(X)[:, t], m.predict_proba(X)[:, 1], atol=TOL)
        direct = direct_alpha(rbf_kernel(X, C, cv.sigma_[t]), ind[:, t], cv.lam_[t])
        np.testing.assert_allclose(cv.alpha_[:, t, :], direct, atol=TOL, rtol=0)


@pytest.mark.parametrize("cv_kind", ["kfold", "shuffle"])
def test_fast_lowrank_cv_equals_the_naive_loop_multiclass(cv_kind):
    """Single task, three classes; also with folds whose validation parts overlap and
    do not cover the data (ShuffleSplit), where the row groups are not the folds."""
    X, y = blobs(n=150, c=3, seed=9)
    sigmas, lams = [0.5, 1.0, 2.0], [1e-2, 0.1, 1.0]
    if cv_kind == "kfold":
        cv_arg, folds = 2, cv_folds(y, 2, 0)
    else:
        cv_arg = ShuffleSplit(3, test_size=0.3, train_size=0.5, random_state=0)
        folds = list(cv_arg.split(X, y))
    cv = LSPCCV(sigmas, lams, cv=cv_arg, random_state=0, scoring="log_loss", n_basis=40)
    cv.fit(X, y)
    C = cv.best_estimator_.X_fit_
    naive = naive_lowrank_scores(
        X, np.eye(3)[y][:, None, :], y[:, None], C, sigmas, lams, folds, "outputs", "log_loss"
    )
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], naive[0], rtol=1e-9, atol=0)
    best = cv.best_estimator_
    assert best.n_basis == 40 and (best.sigma, best.lam) == (cv.sigma_, cv.lam_)
    direct = direct_alpha(rbf_kernel(X, C, cv.sigma_), np.eye(3)[y], cv.lam_)
    np.testing.assert_allclose(best.alpha_, direct, atol=TOL, rtol=0)


def test_no_n_by_n_matrix():
    """Memory O(n b): at n = 4000 an n x n float64 matrix alone is 128 MB; the low-rank fit,
    search and prediction (b = 20, d = 2) stay far below it."""
    rng = np.random.default_rng(0)
    n = 4000
    X = rng.normal(size=(n, 2))
    Y = (X + 0.5 * rng.normal(size=(n, 2)) > 0).astype(int)
    tracemalloc.start()
    LSPC(sigma=1.0, n_basis=20, random_state=0).fit(X, Y[:, 0]).predict_proba(X)
    LSPCCV([0.5, 1.0], [0.01, 0.1], n_basis=20, random_state=0).fit(X, Y).predict_proba(X)
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert top < n * n * 8 / 8  # 16 MB


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"n_basis": 0}, "'n_basis' parameter"),
        ({"n_basis": 2.5}, "'n_basis' parameter"),
        ({"n_basis": 5, "centers": "grid"}, "'centers' parameter"),
        ({"n_basis": 5, "centers": "kmeans", "basis": "classwise"}, "classwise"),
        ({"n_basis": 5, "kernel": "precomputed"}, "n_basis"),
    ],
)
def test_bad_low_rank_arguments(kwargs, match):
    X, y = blobs(n=20)
    if kwargs.get("kernel") == "precomputed":
        X = rbf_kernel(X, X, 1.0)
    with pytest.raises(ValueError, match=match):
        LSPC(**kwargs).fit(X, y)
    cv_kwargs = {k: v for k, v in kwargs.items() if k != "basis"}
    if "basis" not in kwargs:
        with pytest.raises(ValueError, match=match):
            LSPCCV(**cv_kwargs).fit(X, y)


#: the checks a low-rank model of random centres cannot pass, and why (as its docstring says)
RANDOM_CENTRES = {
    check: (
        "the centres are drawn from the rows by position: the repeated rows of the check "
        "(and its shuffled order) draw other centres than the weighted rows, an equally "
        "likely draw of another model; the weights' own equivalence holds where the "
        "centres are the same (tests/library/test_lspc_weights.py)"
    )
    for check in (
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    )
}


@parametrize_with_checks(
    [
        LSPC(n_basis=10, random_state=0),
        LSPC(n_basis=10, basis="classwise", random_state=0),
        LSPCCV(lams=[0.01, 0.1], random_state=0, n_basis=10),
    ],
    expected_failed_checks=lambda est: RANDOM_CENTRES,
)
def test_sklearn_compatible(estimator, check):
    xfail_float32_array_api(check)
    check(estimator)


def test_symmetric_eigh_falls_back_to_evr_where_divide_and_conquer_fails(monkeypatch):
    """LAPACK's dsyevd failed to converge on a Gram matrix of the KEEL set movement_libras
    (duplicate rows, entries down to 1e-197, at width median / 16); the relatively robust
    representations driver must then give the same decomposition as numpy's eigh."""
    import scipy.linalg

    from kclf.lspc import _solver

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    A = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))
    real = scipy.linalg.eigh
    drivers = []

    def failing_evd(a, *args, driver=None, **kwargs):
        drivers.append(driver)
        if driver == "evd":
            a[:] = np.nan  # dsyevd works in place: a failure leaves the input spoilt
            raise np.linalg.LinAlgError("dsyevd did not converge")
        return real(a, *args, driver=driver, **kwargs)

    monkeypatch.setattr(_solver.scipy.linalg, "eigh", failing_evd)
    s, V = _solver.symmetric_eigh(A.copy())
    assert drivers == ["evd", "evr"]
    np.testing.assert_allclose(s, np.linalg.eigvalsh(A), rtol=0, atol=1e-12)
    np.testing.assert_allclose(V @ np.diag(s) @ V.T, A, rtol=0, atol=1e-12)
