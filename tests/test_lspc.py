import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from kclf.experiments.lspc_toy import run_trial
from kclf.kernels import gram, grams, rbf_kernel
from kclf.lspc import LSPC
from kclf.lspc_cv import LSPCCV, cv_folds, score_proba


def blobs(n=80, seed=0, d=3, c=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, c, n)
    X = rng.normal(size=(n, d)) + 1.5 * y[:, None]
    return X, y


def ridge_lstsq(K, Y, lam):
    """Eq. (3) written as ridge regression, (1/2n)||K a - y||^2 + (lam/2)||a||^2 (equal to
    Eq. (3) up to a constant), solved by an SVD-based least-squares on the stacked system."""
    n, b = K.shape
    A = np.r_[K / np.sqrt(n), np.sqrt(lam) * np.eye(b)]
    rhs = np.r_[Y / np.sqrt(n), np.zeros((b, Y.shape[1]))]
    return np.linalg.lstsq(A, rhs, rcond=None)[0]


@pytest.mark.parametrize("lam", [1e-2, 0.1, 1.0])
def test_alpha_equals_direct_solution_of_eq3(lam):
    X, y = blobs(c=3)
    model = LSPC(sigma=1.3, lam=lam, rounding="none").fit(X, y)
    K = rbf_kernel(X, X, 1.3)
    expected = ridge_lstsq(K, np.eye(3)[y], lam)
    np.testing.assert_allclose(model.alpha_, expected, atol=1e-8, rtol=0)


def test_classwise_basis_equals_block_solution():
    X, y = blobs(c=3, seed=1)
    model = LSPC(sigma=1.0, lam=0.1, basis="classwise").fit(X, y)
    K = rbf_kernel(X, X, 1.0)
    for c in range(3):
        own = y == c
        a = ridge_lstsq(K[:, own], own[:, None].astype(float), 0.1)[:, 0]
        np.testing.assert_allclose(model.alpha_[own, c], a, atol=1e-8)
        assert np.all(model.alpha_[~own, c] == 0)


@pytest.mark.parametrize("rounding", ["outputs", "parameters"])
def test_probabilities_are_distributions(rounding):
    X, y = blobs(c=3)
    P = LSPC(sigma=0.5, lam=1e-3, rounding=rounding).fit(X, y).predict_proba(X * 3)
    assert P.min() >= 0
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)


def test_outputs_rounding_is_eq6():
    X, y = blobs()
    model = LSPC(sigma=1.0, lam=1e-3).fit(X, y)
    Xt = np.random.default_rng(5).normal(scale=4, size=(200, 3))
    F = rbf_kernel(Xt, X, 1.0) @ model.alpha_
    Fp = np.maximum(F, 0)
    Z = Fp.sum(axis=1, keepdims=True)
    expected = np.where(Z > 0, Fp / np.where(Z > 0, Z, 1), 0.5)
    np.testing.assert_allclose(model.predict_proba(Xt), expected, atol=1e-12)
    # far from the data every output is 0: the uniform rule of Eq. (6)
    np.testing.assert_allclose(model.predict_proba(np.full((1, 3), 1e3)), [[0.5, 0.5]])


def test_parameters_rounding_is_eq4():
    X, y = blobs(seed=3)
    model = LSPC(sigma=0.7, lam=1e-3, rounding="parameters").fit(X, y)
    Xt = np.random.default_rng(1).normal(size=(50, 3))
    F = rbf_kernel(Xt, X, 0.7) @ np.maximum(model.alpha_, 0)
    np.testing.assert_allclose(model.predict_proba(Xt), F / F.sum(axis=1, keepdims=True))


def test_toy_experiment_reproduces_figure1_claim():
    """Sec. 3.1: over 20 seeded trials (sigma, lambda by 2-fold CV for each method),
    LSPC-new is closer to the true posterior than LSPC, and no less accurate."""
    rows = []
    for t in range(20):
        rows += run_trial(2024, t)[0]
    val = {(r["method"], r["metric"], r["trial"]): r["value"] for r in rows}

    def per_trial(m, k):
        return np.array([val[(m, k, t)] for t in range(20)])

    l1_new, l1_old = per_trial("LSPC-new", "l1_posterior"), per_trial("LSPC", "l1_posterior")
    assert l1_new.mean() < l1_old.mean()
    acc_new, acc_old = per_trial("LSPC-new", "accuracy"), per_trial("LSPC", "accuracy")
    # "no worse": the mean paired difference is not significantly negative (one-sided, 5%)
    d = acc_new - acc_old
    assert d.mean() >= -1.729 * d.std(ddof=1) / np.sqrt(d.size)


def naive_search(X, Y, sigmas, lams, folds, rounding, scoring):
    """The plain loop: one LSPC fit per (task, sigma, lambda, fold)."""
    chosen = []
    for t in range(Y.shape[1]):
        means = []
        for s in sigmas:
            for lam in lams:
                sc = []
                for tr, va in folds:
                    m = LSPC(sigma=s, lam=lam, rounding=rounding).fit(X[tr], Y[tr, t])
                    v = score_proba(m.predict_proba(X[va]), Y[va, t], scoring)
                    sc.append(v)
                means.append(np.mean(sc))
        means = np.array(means)
        best = np.argmax(means) if scoring == "auc" else np.argmin(means)
        chosen.append((sigmas[best // len(lams)], lams[best % len(lams)]))
    return chosen


@pytest.mark.parametrize(
    "rounding,scoring",
    [("outputs", "auc"), ("parameters", "log_loss"), ("none", "error"), ("outputs", "error")],
)
def test_multitask_search_chooses_what_the_naive_loop_chooses(rounding, scoring):
    rng = np.random.default_rng(7)
    X = rng.poisson(1.0, size=(90, 6)).astype(float)
    Y = np.c_[X[:, 0] > 1, X[:, 1] + X[:, 2] > 2, rng.random(90) < 0.3].astype(int)
    sigmas, lams = [0.8, 1.6, 3.2], [1e-3, 1e-2, 0.1, 1.0]
    cv = LSPCCV(sigmas, lams, cv=3, rounding=rounding, scoring=scoring, random_state=3).fit(X, Y)
    folds = cv_folds(Y, 3, 3)
    expected = naive_search(X, Y, sigmas, lams, folds, rounding, scoring)
    assert list(zip(cv.sigma_, cv.lam_)) == expected
    # the final multi-task model equals one LSPC per task with the chosen setting
    for t, (s, lam) in enumerate(expected):
        m = LSPC(sigma=s, lam=lam, rounding=rounding).fit(X, Y[:, t])
        np.testing.assert_allclose(cv.predict_proba(X)[:, t], m.predict_proba(X)[:, 1], atol=1e-8)


def test_single_task_search_matches_naive_loop_with_error():
    X, y = blobs(n=120, c=3, seed=4)
    sigmas, lams = [0.5, 1.0, 2.0], [1e-2, 0.1, 1.0]
    cv = LSPCCV(sigmas, lams, cv=2, random_state=0).fit(X, y)
    folds = cv_folds(y, 2, 0)
    scores = []
    for s in sigmas:
        for lam in lams:
            scores.append(
                np.mean(
                    [
                        np.mean(LSPC(sigma=s, lam=lam).fit(X[tr], y[tr]).predict(X[va]) != y[va])
                        for tr, va in folds
                    ]
                )
            )
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], scores, atol=1e-12)
    assert (cv.sigma_, cv.lam_) == (sigmas[np.argmin(scores) // 3], lams[np.argmin(scores) % 3])


def test_precomputed_kernel_matches_rbf():
    X, y = blobs()
    Xt = X[:10] + 0.1
    a = LSPC(sigma=1.1).fit(X, y).predict_proba(Xt)
    b = (
        LSPC(kernel="precomputed")
        .fit(rbf_kernel(X, X, 1.1), y)
        .predict_proba(rbf_kernel(Xt, X, 1.1))
    )
    np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs,X,y,match",
    [
        ({}, np.ones((4, 2)), [1, 1, 1, 1], "2 classes"),
        ({}, [[np.nan, 1], [0, 1]], [0, 1], "NaN"),
        ({}, [[np.inf, 1], [0, 1]], [0, 1], "infinity"),
        ({"sigma": -1.0}, np.eye(4), [0, 1, 0, 1], "sigma must be"),
        ({"lam": -0.1}, np.eye(4), [0, 1, 0, 1], "lam must be"),
        ({"lam": 0.0}, np.eye(4), [0, 1, 0, 1], "lam must be"),
        ({"rounding": "both"}, np.eye(4), [0, 1, 0, 1], "rounding must be"),
        ({"kernel": "precomputed"}, np.ones((4, 3)), [0, 1, 0, 1], "square"),
    ],
)
def test_bad_input_errors_name_the_problem(kwargs, X, y, match):
    with pytest.raises(ValueError, match=match):
        LSPC(**kwargs).fit(X, y)


def test_precomputed_prediction_kernel_must_match_training_size():
    K = rbf_kernel(np.eye(4), np.eye(4), 1.0)
    model = LSPC(kernel="precomputed").fit(K, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="4 columns"):
        model.predict_proba(np.ones((2, 3)))


def test_lspccv_bad_grid_and_cv():
    X, y = blobs()
    with pytest.raises(ValueError, match="sigmas"):
        LSPCCV(sigmas=[1.0, -2.0]).fit(X, y)
    with pytest.raises(ValueError, match="cv must be"):
        LSPCCV(cv=1).fit(X, y)


@parametrize_with_checks(
    [LSPC(), LSPC(basis="classwise"), LSPCCV(sigmas=[0.5, 1.0], lams=[0.01, 0.1], random_state=0)]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_rank_auc_equals_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    from kclf.lspc_cv import rank_auc

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = np.round(rng.normal(size=300) + y, 1)  # many ties
    assert abs(rank_auc(y, s) - roc_auc_score(y, s)) < 1e-12
    assert np.isnan(rank_auc(np.ones(5, int), s[:5]))


def test_grams_over_a_width_grid_equal_the_kernel_bit_for_bit():
    X = np.random.default_rng(0).normal(size=(40, 3))
    sigmas = [0.3, 1.0, 4.0]
    for (s, K), want in zip(grams("rbf", X, sigmas), sigmas, strict=True):
        assert s == want
        assert np.array_equal(K, rbf_kernel(X, None, want))
    (_, K), (_, K2) = grams("linear", X, [np.nan, np.nan])
    assert np.array_equal(K, gram("linear", X)) and np.array_equal(K2, K)
