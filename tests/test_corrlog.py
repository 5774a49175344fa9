"""CorrLog (Li et al. 2016): inference against enumeration, learning against generic solvers."""

import itertools
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import approx_fprime, minimize
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from kclf import belief_propagation as bp
from kclf.corrlog import CorrLog
from kclf.datasets.corrlog_toy import make_corrlog_toy

MULAN = Path(__file__).resolve().parents[2] / "shared" / "data" / "mulan"


def random_tree(m, rng, scale):
    A = np.zeros((m, m))
    for i in range(1, m):
        j = rng.integers(i)
        A[i, j] = A[j, i] = rng.normal(scale=scale)
    return A


def random_dense(m, rng, scale):
    A = np.triu(rng.normal(scale=scale, size=(m, m)), 1)
    return A + A.T


def brute_force(u, A):
    """MAP and marginals of one instance by an explicit loop over {-1,+1}^m."""
    m = len(u)
    best, best_s, Z, p1 = None, -np.inf, 0.0, np.zeros(m)
    for y in itertools.product((-1, 1), repeat=m):
        y = np.array(y)
        s = sum(y[i] * u[i] for i in range(m))
        s += sum(A[i, j] * y[i] * y[j] for i in range(m) for j in range(i + 1, m))
        if s > best_s:
            best, best_s = y, s
        w = np.exp(s)
        Z += w
        p1 += w * (y > 0)
    return best, p1 / Z


# ---------------------------------------------------------------------------------------
# inference
# ---------------------------------------------------------------------------------------


def test_exact_enumeration_matches_explicit_loop():
    rng = np.random.default_rng(1)
    U, A = rng.normal(size=(20, 5)), random_dense(5, rng, 1.0)
    Ymap, P = bp.exact_map(U, A), bp.exact_marginals(U, A)
    for k in range(len(U)):
        y, p = brute_force(U[k], A)
        np.testing.assert_array_equal(Ymap[k], y)
        np.testing.assert_allclose(P[k], p, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_bp_is_exact_on_trees(seed):
    # max-product and sum-product are exact on trees (Pearl); strong couplings on purpose
    rng = np.random.default_rng(seed)
    m = 8
    A = random_tree(m, rng, scale=2.0)
    U = rng.normal(size=(500, m))
    Y, (_, n_iter, converged) = bp.max_product(U, A, return_info=True)
    assert converged.all() and n_iter <= m + 1  # messages settle after diameter+1 sweeps
    np.testing.assert_array_equal(Y, bp.exact_map(U, A))
    np.testing.assert_allclose(bp.sum_product(U, A), bp.exact_marginals(U, A), atol=1e-12)


def test_bp_on_a_forest_with_isolated_labels():
    rng = np.random.default_rng(7)
    A = np.zeros((5, 5))
    A[0, 1] = A[1, 0] = -1.5
    A[2, 3] = A[3, 2] = 2.0
    U = rng.normal(size=(200, 5))
    np.testing.assert_array_equal(bp.max_product(U, A), bp.exact_map(U, A))


def loopy_agreement(scale, seeds=range(10), n=400, m=6):
    agree, agree_converged, gaps = [], [], []
    for seed in seeds:
        rng = np.random.default_rng(100 + seed)
        A, U = random_dense(m, rng, scale), rng.normal(size=(n, m))
        Y, (_, _, converged) = bp.max_product(U, A, return_info=True)
        ok = np.all(Y == bp.exact_map(U, A), axis=1)
        agree.append(ok.mean())
        agree_converged.append(ok[converged].mean())
        gaps.append(np.abs(bp.sum_product(U, A) - bp.exact_marginals(U, A)))
    return np.array(agree), np.array(agree_converged), np.concatenate(gaps)


def test_loopy_bp_agrees_with_exact_on_weakly_coupled_random_models():
    """Fully connected m=6, fields N(0,1), couplings N(0, 0.1^2), 10 seeded models x 400.

    Measured here: 99.4% of the joint MAP vectors equal enumeration's (worst model 97.8%);
    marginals within 0.007 of the exact ones.
    """
    agree, _, gaps = loopy_agreement(0.1)
    assert agree.mean() >= 0.98 and agree.min() >= 0.95
    assert gaps.max() < 0.02


def test_loopy_bp_on_frustrated_models_is_right_where_it_converges():
    """Couplings N(0, 0.3^2) make frustrated loops: undamped max-product then oscillates on
    22% of the instances within its 50 iterations. Measured here: 87% agreement overall
    (worst model 60%), 99.97% on the instances whose messages converged; marginal gap
    mean 0.007. A converged max-product fixed point is a neighbourhood maximum (Weiss and
    Freeman 2001), so we require >= 99% where converged.
    """
    agree, agree_converged, gaps = loopy_agreement(0.3)
    assert agree_converged.min() >= 0.99
    assert agree.mean() >= 0.8
    assert gaps.mean() < 0.02


def test_damping_does_not_change_tree_fixed_point():
    rng = np.random.default_rng(3)
    A, U = random_tree(6, rng, 1.0), rng.normal(size=(100, 6))
    P = bp.sum_product(U, A, max_iter=500, damping=0.5, tol=1e-13)
    np.testing.assert_allclose(P, bp.exact_marginals(U, A), atol=1e-9)


def test_bp_argument_errors():
    with pytest.raises(ValueError, match="coupling"):
        bp.max_product(np.zeros((2, 3)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="symmetric"):
        bp.max_product(np.zeros((2, 2)), np.array([[0.0, 1.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="damping"):
        bp.max_product(np.zeros((2, 2)), np.zeros((2, 2)), damping=1.0)


# ---------------------------------------------------------------------------------------
# learning
# ---------------------------------------------------------------------------------------


def pseudo_nll(X, Y, B, b, A):
    """Eq. (12) written out label by label (independent of kclf's vectorised code)."""
    S = 2 * Y - 1
    n, m = Y.shape
    total = 0.0
    for i in range(m):
        f = X @ B[i] + b[i] + sum(A[i, j] * S[:, j] for j in range(m) if j != i)
        total += np.sum(np.log1p(np.exp(-2.0 * S[:, i] * f)))
    return total / n


def unpack(theta, d, m):
    B = theta[: m * d].reshape(m, d)
    b = theta[m * d : m * d + m]
    A = np.zeros((m, m))
    A[np.triu_indices(m, 1)] = theta[m * d + m :]
    return B, b, A + A.T


def objective(theta, X, Y, rho1, rho2):
    n, d = X.shape
    m = Y.shape[1]
    B, b, A = unpack(theta, d, m)
    a = A[np.triu_indices(m, 1)]
    w = np.concatenate([B.ravel(), a])
    return pseudo_nll(X, Y, B, b, A) + rho2 * (w @ w) + rho1 * np.abs(w).sum()


def small_problem(seed=0, n=150, d=3, m=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    beta = rng.normal(size=(m, d))
    A = random_dense(m, rng, 0.8)
    Y = (bp.exact_map(X @ beta.T + rng.normal(scale=1.0, size=(n, m)), A) > 0).astype(int)
    return X, Y


def test_rho1_zero_matches_lbfgs_on_the_same_objective():
    X, Y = small_problem()
    d, m, rho2 = X.shape[1], Y.shape[1], 1e-2
    clf = CorrLog(rho1=0.0, rho2=rho2, scaling=None, tol=1e-15, max_iter=20000).fit(X, Y)
    ref = minimize(
        objective,
        np.zeros(m * d + m + m * (m - 1) // 2),
        args=(X, Y, 0.0, rho2),
        method="L-BFGS-B",
        jac="3-point",
        options={"gtol": 1e-11, "ftol": 1e-15, "maxiter": 5000},
    )
    B, b, A = unpack(ref.x, d, m)
    np.testing.assert_allclose(clf.coef_, B, atol=1e-5)
    np.testing.assert_allclose(clf.intercept_, b, atol=1e-5)
    np.testing.assert_allclose(clf.couplings_, A, atol=1e-5)
    assert objective(ref.x, X, Y, 0, rho2) >= clf.objective_path_[-1] - 1e-10


def test_elastic_net_solution_satisfies_subgradient_optimality():
    # 0 in grad f + rho1 * d|w|: |g_k| <= rho1 where w_k = 0, g_k = -rho1 sign(w_k) elsewhere
    X, Y = small_problem(seed=2)
    d, m, rho1, rho2 = X.shape[1], Y.shape[1], 0.2, 1e-2
    clf = CorrLog(rho1=rho1, rho2=rho2, scaling=None, tol=1e-15, max_iter=20000).fit(X, Y)
    iu = np.triu_indices(m, 1)
    theta = np.concatenate([clf.coef_.ravel(), clf.intercept_, clf.couplings_[iu]])
    g = approx_fprime(theta, objective, 1e-7, X, Y, 0.0, rho2)
    penalised = np.r_[np.ones(m * d), np.zeros(m), np.ones(len(iu[0]))].astype(bool)
    zero = penalised & (theta == 0)
    assert zero.any(), "this rho1 should zero some coordinates"
    assert np.all(np.abs(g[zero]) <= rho1 + 1e-5)
    nz = penalised & (theta != 0)
    np.testing.assert_allclose(g[nz], -rho1 * np.sign(theta[nz]), atol=1e-5)
    np.testing.assert_allclose(g[~penalised], 0.0, atol=1e-5)


@pytest.mark.parametrize("step", ["lipschitz", "backtracking"])
def test_monotone_fista_objective_never_increases(step):
    X, Y = make_corrlog_toy(300, np.random.default_rng(5))
    clf = CorrLog(rho1=1e-3, rho2=1e-4, step=step, tol=1e-12, max_iter=3000).fit(X, Y)
    path = clf.objective_path_
    assert len(path) > 50
    assert np.all(np.diff(path) <= 0.0)
    # and it reaches the same minimum whichever step rule
    other = "lipschitz" if step == "backtracking" else "backtracking"
    ref = CorrLog(rho1=1e-3, rho2=1e-4, step=other, tol=1e-12, max_iter=3000).fit(X, Y)
    assert abs(path[-1] - ref.objective_path_[-1]) <= 1e-6 * abs(path[-1])


def test_plain_fista_is_not_monotone_on_the_same_problem():
    # so the monotone test above is not passing for free (measured: ~1300 rises in 3000)
    X, Y = make_corrlog_toy(300, np.random.default_rng(5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        clf = CorrLog(rho1=1e-3, rho2=1e-4, monotone=False, tol=1e-12, max_iter=1000).fit(X, Y)
    assert np.sum(np.diff(clf.objective_path_) > 0) > 10


def test_ilr_equals_sklearn_logistic_regression_per_label():
    # couplings=False, rho1=0: label i solves (1/n) sum log(1+exp(-2 y beta^T x)) + rho2|beta|^2,
    # i.e. sklearn's C sum log(1+exp(-y w^T x)) + |w|^2/2 with w = 2 beta and C = 2/(n rho2)
    X, Y = small_problem(seed=4, n=200)
    n, rho2 = len(X), 1e-2
    ilr = CorrLog(rho1=0.0, rho2=rho2, couplings=False, scaling=None, tol=1e-15, max_iter=20000)
    ilr.fit(X, Y)
    assert not ilr.couplings_.any()
    for i in range(Y.shape[1]):
        lr = LogisticRegression(C=2.0 / (n * rho2), tol=1e-12, max_iter=10000).fit(X, Y[:, i])
        np.testing.assert_allclose(2 * ilr.coef_[i], lr.coef_[0], atol=1e-5)
        np.testing.assert_allclose(2 * ilr.intercept_[i], lr.intercept_[0], atol=1e-5)


def test_scaling_is_folded_into_raw_coefficients():
    X, Y = small_problem(seed=6)
    X = X * [1.0, 100.0, 0.01] + [5.0, -3.0, 0.0]
    for scaling in ("standardize", "whiten"):
        clf = CorrLog(rho1=1e-3, rho2=1e-2, scaling=scaling, inference="exact").fit(X, Y)
        U = X @ clf.coef_.T + clf.intercept_
        np.testing.assert_array_equal(clf.predict(X), bp.exact_map(U, clf.couplings_) > 0)


# ---------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------


def test_exact_and_bp_prediction_agree_on_two_labels():
    # two labels form a tree: BP is exact
    X, Y = make_corrlog_toy(300, np.random.default_rng(0))
    a = CorrLog(1e-3, 1e-3, inference="bp").fit(X, Y)
    b = CorrLog(1e-3, 1e-3, inference="exact").fit(X, Y)
    Xt, _ = make_corrlog_toy(500, np.random.default_rng(1))
    np.testing.assert_array_equal(a.predict(Xt), b.predict(Xt))
    np.testing.assert_allclose(a.predict_proba(Xt), b.predict_proba(Xt), atol=1e-10)


def test_toy_example_corrlog_beats_ilr():
    """Sec. V: CorrLog models the dependence of y2's boundary on y1; ILR cannot.

    Measured here (500 training, 4000 test points, CV-chosen penalties): subset accuracy
    CorrLog 0.949, ILR 0.890.
    """
    X, Y = make_corrlog_toy(500, np.random.default_rng(10))
    Xt, Yt = make_corrlog_toy(4000, np.random.default_rng(11))
    corr = CorrLog().fit(X, Y).score(Xt, Yt)
    ilr = CorrLog(couplings=False).fit(X, Y).score(Xt, Yt)
    assert corr >= ilr + 0.04, (corr, ilr)


def test_cv_records_grid_and_picks_from_it():
    X, Y = make_corrlog_toy(200, np.random.default_rng(2))
    clf = CorrLog(rho1_grid=[0.0, 1e-3], rho2_grid=[1e-1, 1e-3], cv=2).fit(X, Y)
    res = clf.cv_results_
    assert len(res["mean_score"]) == 4
    best = np.argmax(res["mean_score"])
    assert clf.rho1_ == res["rho1"][best] and clf.rho2_ == res["rho2"][best]
    fixed = CorrLog(rho1=0.0, rho2=1e-2).fit(X, Y)
    assert fixed.cv_results_ is None and fixed.rho2_ == 1e-2


def test_constant_label_is_predicted_constant_with_a_warning():
    X, Y = make_corrlog_toy(200, np.random.default_rng(3))
    Y3 = np.column_stack([Y, np.ones(len(Y), dtype=int)])
    with pytest.warns(UserWarning, match=r"labels \[2\] are constant"):
        clf = CorrLog(1e-3, 1e-3).fit(X, Y3)
    assert clf.constant_labels_ == {2: 1}
    ref = CorrLog(1e-3, 1e-3).fit(X, Y)
    np.testing.assert_array_equal(clf.predict(X)[:, :2], ref.predict(X))
    assert np.all(clf.predict(X)[:, 2] == 1) and np.all(clf.predict_proba(X)[:, 2] == 1.0)
    assert not clf.couplings_[2].any()


def test_bad_input_errors():
    X, Y = make_corrlog_toy(50, np.random.default_rng(4))
    with pytest.raises(ValueError, match="only 0 and 1"):
        CorrLog(0.0, 1e-2).fit(X, 2 * Y - 1)
    with pytest.raises(ValueError, match="only 0 and 1"):
        CorrLog(0.0, 1e-2).fit(X, Y + 0.5)
    with pytest.raises(ValueError, match="inconsistent numbers of samples|different numbers"):
        CorrLog(0.0, 1e-2).fit(X[:-1], Y)
    with pytest.raises(ValueError, match="Only binary classification"):
        CorrLog(0.0, 1e-2).fit(X, Y[:, 0] + Y[:, 1])  # a 1-D target with three classes
    with pytest.raises(ValueError, match="one class"):
        CorrLog(0.0, 1e-2).fit(X, np.ones(len(X)))
    with pytest.raises(ValueError, match="dim 3"):
        CorrLog(0.0, 1e-2).fit(X, Y[:, :, None])
    with pytest.raises(ValueError, match="m <= 12"):
        CorrLog(0.0, 1e-2, inference="exact").fit(np.eye(14), np.eye(14, dtype=int)[:, :13])
    with pytest.raises(ValueError, match="rho1"):
        CorrLog(rho1=-1.0, rho2=1e-2).fit(X, Y)


def test_all_labels_constant_still_predicts():
    X = np.random.default_rng(0).normal(size=(10, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        clf = CorrLog().fit(X, np.zeros((10, 3), dtype=int))
    assert clf.predict(X).sum() == 0 and clf.predict_proba(X).shape == (10, 3)


# A 1-D binary target is the one-label model (classes_ its two values), so the generic
# checks on binary targets run. One is expected to fail, for the MAP decoder only:
EXPECTED_FAILED_MAP = {
    "check_classifier_multioutput": (
        "with decode='map', predict is the joint MAP of Eq. (21), which need not equal "
        "thresholding the per-label marginals of predict_proba at 0.5 (the check assumes "
        "it does; decode='marginal' passes it)"
    ),
}


@parametrize_with_checks(
    [
        CorrLog(rho1=1e-3, rho2=1e-2, max_iter=300),
        CorrLog(rho1=1e-3, rho2=1e-2, max_iter=300, decode="marginal"),
    ],
    expected_failed_checks=lambda est: EXPECTED_FAILED_MAP if est.decode == "map" else {},
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)


# ---------------------------------------------------------------------------------------
# real data
# ---------------------------------------------------------------------------------------


@pytest.mark.shared
def test_scene_corrlog_subset_accuracy_at_least_ilr():
    if not (MULAN / "scene-train.arff").is_file():
        pytest.skip("../shared/data not present: MULAN scene mirror (mulan/scene-*.arff) missing")
    from kclf.datasets.mulan import load_scene

    d = load_scene(MULAN)
    # the penalties 3-fold CV picks on the training part (random_state=0); measured here:
    # subset accuracy CorrLog 0.621 (0.628 with inference="exact"), ILR 0.530
    kw = {"rho1": 1e-3, "rho2": 1e-1}
    corr = CorrLog(**kw).fit(d["X_train"], d["Y_train"]).score(d["X_test"], d["Y_test"])
    ilr = CorrLog(couplings=False, **kw).fit(d["X_train"], d["Y_train"])
    assert corr >= ilr.score(d["X_test"], d["Y_test"]) + 0.03
