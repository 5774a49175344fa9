import numpy as np
import pytest
from array_api_checks import xfail_float32_array_api
from sklearn.utils.estimator_checks import parametrize_with_checks

from kclf import LSPCCV
from kclf._folds import cv_folds
from kclf._scoring import score_proba
from kclf.kernels import gram, grams, rbf_kernel
from kclf.lspc import LSPC
from kclf_workflow.experiments.lspc_toy import run_trial


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
    lam, Xt = 1e-3, np.r_[X * 3, np.full((5, 3), 60.0)]  # the last rows: every k(x, x_j) = 0
    P = LSPC(sigma=0.5, lam=lam, rounding=rounding).fit(X, y).predict_proba(Xt)
    assert P.min() >= 0
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    # values: Eq. (6) (outputs) or Eq. (4) (parameters) applied to alpha from an SVD
    # least-squares solve of Eq. (3)
    K = rbf_kernel(X, X, 0.5)
    alpha = ridge_lstsq(K, np.eye(3)[y], lam)
    if rounding == "parameters":
        alpha = np.maximum(alpha, 0.0)
    Kt = rbf_kernel(Xt, X, 0.5)
    Fp = np.maximum(Kt @ alpha, 0.0)
    S = Fp.sum(axis=1)
    expected = np.where(S[:, None] > 0, Fp / np.where(S > 0, S, 1.0)[:, None], 1.0 / 3)
    # both solves are backward stable on a system of condition kappa <= (||K||^2 / n + lam)
    # / lam, so alpha agrees to 10 kappa eps ||alpha|| (max(0, .) is 1-Lipschitz) and
    # F = K_t alpha to e_i = ||K_t,i|| times that; a ratio F_k / sum_j F_j moves by at
    # most 2 c e / (S - c e) (c = 3 classes)
    n = len(y)
    kappa = (np.linalg.norm(K, 2) ** 2 / n + lam) / lam
    e = np.linalg.norm(Kt, axis=1) * 10 * kappa * np.finfo(float).eps * np.linalg.norm(alpha)
    sure = S > 6 * e
    bound = np.where(sure, 6 * e / np.where(sure, S - 3 * e, 1.0), 1.0)
    assert np.all(np.abs(P - expected) <= bound[:, None])
    assert sure.sum() >= 80 and (S == 0).sum() == 5  # both regimes are exercised
    np.testing.assert_array_equal(P[S == 0], 1.0 / 3)


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


def smoothest_best(means, sigmas, lams, higher=False):
    """(sigma, lambda) of the best mean score (sigma-major grid); among settings within
    1e-12 of the best, the largest sigma, then the largest lambda (the documented tie rule)."""
    means = -np.asarray(means) if higher else np.asarray(means)
    ties = [k for k, v in enumerate(means) if v <= means.min() + 1e-12]
    return max((sigmas[k // len(lams)], lams[k % len(lams)]) for k in ties)


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
        chosen.append(smoothest_best(means, sigmas, lams, higher=scoring == "auc"))
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
    assert (cv.sigma_, cv.lam_) == smoothest_best(scores, sigmas, lams)


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
        ({}, np.ones((4, 2)), [1, 1, 1, 1], "at least two classes"),
        ({}, [[np.nan, 1], [0, 1]], [0, 1], "NaN"),
        ({}, [[np.inf, 1], [0, 1]], [0, 1], "infinity"),
        ({"sigma": -1.0}, np.eye(4), [0, 1, 0, 1], "'sigma' parameter"),
        ({"lam": -0.1}, np.eye(4), [0, 1, 0, 1], "'lam' parameter"),
        ({"lam": 0.0}, np.eye(4), [0, 1, 0, 1], "'lam' parameter"),
        ({"rounding": "both"}, np.eye(4), [0, 1, 0, 1], "'rounding' parameter"),
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
    with pytest.raises(ValueError, match="'cv' parameter"):
        LSPCCV(cv=1).fit(X, y)


@parametrize_with_checks(
    # the searches at their default widths (multiples of the median distance): the class
    # weight check's blobs have a spread of 20, at which a fixed width of 1 fails for
    # LSPC itself (two thirds of its test points class 0); LSPCCV at its default grid
    [LSPC(), LSPC(basis="classwise"), LSPCCV(random_state=0), LSPCCV()],
)
def test_sklearn_compatible(estimator, check):
    xfail_float32_array_api(check)
    check(estimator)


def test_rank_auc_equals_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    from kclf._scoring import rank_auc

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


def _tanh_kernel(A, B):
    """A symmetric indefinite kernel (the "sigmoid kernel")."""
    return np.tanh(0.5 * A @ B.T - 1.0)


def _naive_precomputed_scores(K, y, lams, folds, scoring):
    return np.array(
        [
            np.mean(
                [
                    score_proba(
                        LSPC(lam=lam, kernel="precomputed")
                        .fit(K[np.ix_(tr, tr)], y[tr])
                        .predict_proba(K[np.ix_(va, tr)]),
                        y[va],
                        scoring,
                    )
                    for tr, va in folds
                ]
            )
            for lam in lams
        ]
    )


@pytest.mark.parametrize("asymmetric", [False, True])
@pytest.mark.parametrize("scoring", ["error", "log_loss"])
def test_fast_cv_equals_the_naive_loop_on_an_indefinite_kernel(scoring, asymmetric):
    """The eigen identity holds for any symmetric K (no clipping of
    negative eigenvalues) and, through the SVD, for a non-symmetric one."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=120) > 0).astype(int)
    K = _tanh_kernel(X, X)
    if asymmetric:
        K = K + 0.3 * np.tanh(X[:, [0]] - X[:, 0])
    assert np.linalg.eigvalsh(0.5 * (K + K.T)).min() < -10  # strongly indefinite
    lams = [1e-3, 1e-2, 1e-1, 1.0]
    cv = LSPCCV(lams=lams, cv=3, kernel="precomputed", scoring=scoring, random_state=0)
    fast = cv.fit(K, y).cv_results_["mean_test_score"]
    naive = _naive_precomputed_scores(K, y, lams, cv_folds(y, 3, 0), scoring)
    # both solve Eq. (3) on each fold; log loss moves by round-off times the condition
    # number (||K||^2/m + lam) / lam <= 1e7 of the fold systems
    np.testing.assert_allclose(fast, naive, rtol=1e-7, atol=0)
    if not asymmetric:
        callable_cv = LSPCCV(lams=lams, cv=3, kernel=_tanh_kernel, scoring=scoring, random_state=0)
        np.testing.assert_allclose(
            callable_cv.fit(X, y).cv_results_["mean_test_score"], naive, rtol=1e-7, atol=0
        )


def test_ties_go_to_the_smoother_model():
    """Among settings with the best CV score, the largest sigma, then the largest
    lambda, whatever the grid order."""
    X, y = blobs(n=80, seed=2, d=2)
    X[y == 1] += 6.0  # separable: zero CV error for most settings
    sigmas, lams = [0.5, 2.0, 1.0], [1e-3, 1.0, 1e-2]  # the smoothest is not first
    cv = LSPCCV(sigmas, lams, cv=2, random_state=0).fit(X, y)
    res = cv.cv_results_
    tie = res["mean_test_score"] == res["mean_test_score"].min()
    assert len(set(res["sigma"][tie])) > 1 and len(set(res["lam"][tie])) > 1
    assert tie[0]  # the grid's first setting ties; the smoother one must win
    assert (cv.sigma_, cv.lam_) == max(zip(res["sigma"][tie], res["lam"][tie]))
    assert (cv.sigma_, cv.lam_) == (2.0, 1.0)
    # multi-task: the same rule per task
    multi = LSPCCV(sigmas, lams, cv=2, random_state=0).fit(X, np.c_[y, y])
    assert list(zip(multi.sigma_, multi.lam_)) == [(2.0, 1.0)] * 2


def test_cv_accepts_a_splitter_and_an_iterable_of_folds():
    """cv as an int, a scikit-learn splitter, or (train, validation) pairs."""
    from sklearn.model_selection import ShuffleSplit, StratifiedKFold

    X, y = blobs(n=90, c=3, seed=5)
    sigmas, lams = [0.5, 1.0, 2.0], [1e-2, 0.1, 1.0]
    splitter = StratifiedKFold(3, shuffle=True, random_state=7)
    folds = list(splitter.split(X, y))
    a = LSPCCV(sigmas, lams, cv=splitter, scoring="log_loss").fit(X, y)
    b = LSPCCV(sigmas, lams, cv=folds, scoring="log_loss").fit(X, y)
    c = LSPCCV(sigmas, lams, cv=iter(folds), scoring="log_loss").fit(X, y)
    naive = [
        np.mean(
            [
                score_proba(
                    LSPC(sigma=s, lam=lam).fit(X[tr], y[tr]).predict_proba(X[va]), y[va], "log_loss"
                )
                for tr, va in folds
            ]
        )
        for s in sigmas
        for lam in lams
    ]
    for m in (a, b, c):
        np.testing.assert_allclose(m.cv_results_["mean_test_score"], naive, rtol=1e-9)
    # an int is the seeded shuffled folds of cv_folds
    d = LSPCCV(sigmas, lams, cv=3, random_state=0).fit(X, y)
    e = LSPCCV(sigmas, lams, cv=cv_folds(y, 3, 0)).fit(X, y)
    np.testing.assert_array_equal(
        d.cv_results_["mean_test_score"], e.cv_results_["mean_test_score"]
    )
    # multi-task with a splitter
    Y = np.c_[y == 0, y == 2].astype(int)
    f = LSPCCV(sigmas, lams, cv=ShuffleSplit(3, test_size=0.3, random_state=0)).fit(X, Y)
    assert f.predict_proba(X).shape == (90, 2)
    with pytest.raises(ValueError, match="cv: fold 0 indexes"):
        LSPCCV(sigmas, lams, cv=[(np.arange(50), np.arange(80, 95))]).fit(X, y)
    with pytest.raises(ValueError, match="cv"):
        LSPCCV(sigmas, lams, cv="three").fit(X, y)


def test_a_one_class_task_predicts_its_constant_and_warns():
    """An all-zero (or all-one) task is fitted, predicts its label with
    probability 1 everywhere, and the warning names it; the other tasks are unaffected."""
    X, y = blobs(n=60, seed=6)
    Y = np.c_[y, np.zeros(60), 1 - y, np.ones(60)].astype(int)
    with pytest.warns(UserWarning, match=r"task 1 \(all 0\), task 3 \(all 1\)"):
        cv = LSPCCV([0.5, 1.0], [0.01, 0.1], random_state=0).fit(X, Y)
    Xt = np.r_[X[:5], np.full((2, 3), 1e3)]  # far away every kernel value is 0
    P = cv.predict_proba(Xt)
    np.testing.assert_array_equal(P[:, 1], 0.0)
    np.testing.assert_array_equal(P[:, 3], 1.0)
    np.testing.assert_array_equal(cv.predict(Xt)[:, [1, 3]], np.c_[np.zeros(7), np.ones(7)])
    assert np.isnan(cv.sigma_[[1, 3]]).all() and np.isnan(cv.lam_[[1, 3]]).all()
    ref = LSPCCV([0.5, 1.0], [0.01, 0.1], random_state=0).fit(X, Y[:, [0, 2]])
    np.testing.assert_allclose(P[:, [0, 2]], ref.predict_proba(Xt), atol=1e-12)
    np.testing.assert_array_equal(cv.sigma_[[0, 2]], ref.sigma_)


@pytest.mark.parametrize("multi", [False, True])
def test_changing_X_after_fit_does_not_change_the_model(multi):
    """The fitted model keeps a copy of the training inputs."""
    X, y = blobs(n=50, seed=8)
    Xt = X[:10] + 0.1
    if multi:
        est, target = LSPCCV([1.0], [0.1], random_state=0), np.c_[y, 1 - y]
    else:
        est, target = LSPC(sigma=1.0), y
    X_caller = X.copy()
    before = est.fit(X_caller, target).predict_proba(Xt)
    X_caller += 5.0
    np.testing.assert_array_equal(est.predict_proba(Xt), before)
