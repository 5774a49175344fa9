"""WeightedRidgeLogistic: Newton and gradient reach the maximiser of l^lam (Sec. 2.2)."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from kclf.mgpc import WeightedRidgeLogistic
from kclf.mgpc._ridge_solver import weighted_ridge_objective


def _l_lam(beta, X, t, lam):
    """The paper's l^lam written out, without intercept."""
    eta = X @ beta
    return 0.5 * (1 - lam) * np.sum(t * eta - np.log1p(np.exp(eta))) - 0.5 * lam * beta @ beta


def _grad(beta, X, t, lam):
    return 0.5 * (1 - lam) * X.T @ (t - expit(X @ beta)) - lam * beta


@pytest.mark.parametrize("lam", [0.05, 0.3, 0.8])
def test_newton_and_gradient_reach_the_same_optimum(lam):
    X, y = make_classification(150, 6, random_state=1)
    t = y.astype(float)
    nw = WeightedRidgeLogistic(lam=lam, fit_intercept=False, tol=1e-12).fit(X, y)
    gd = WeightedRidgeLogistic(
        lam=lam, solver="gradient", fit_intercept=False, tol=1e-11, max_iter=200000
    ).fit(X, y)
    bn, bg = nw.coef_[0], gd.coef_[0]
    # l^lam is lam-strongly concave, so ||beta - beta*|| <= ||grad l^lam(beta)|| / lam
    bound = (np.linalg.norm(_grad(bn, X, t, lam)) + np.linalg.norm(_grad(bg, X, t, lam))) / lam
    assert np.linalg.norm(bn - bg) <= bound + 1e-12
    assert np.linalg.norm(bn - bg) < 1e-6
    assert nw.objective_ == pytest.approx(_l_lam(bn, X, t, lam), rel=1e-12)
    assert gd.objective_ == pytest.approx(nw.objective_, abs=1e-9)
    assert nw.n_iter_ < 30 < gd.n_iter_


@pytest.mark.parametrize("lam", [0.02, 0.5])
def test_matches_generic_optimiser_and_sklearn(lam):
    X, y = make_classification(120, 4, weights=[0.3], random_state=2)
    t = y.astype(float)
    est = WeightedRidgeLogistic(lam=lam, tol=1e-12).fit(X, y)
    A = np.hstack([X, np.ones((len(y), 1))])
    mask = np.r_[np.ones(4), 0.0]  # the intercept is not penalised
    res = minimize(
        lambda b: -weighted_ridge_objective(b, A, t, lam, 1),
        np.zeros(5),
        jac=lambda b: -(0.5 * (1 - lam) * A.T @ (t - expit(A @ b)) - lam * mask * b),
        method="BFGS",
        options={"gtol": 1e-10},
    )
    np.testing.assert_allclose(est.coef_[0], res.x[:4], atol=1e-5)
    np.testing.assert_allclose(est.intercept_[0], res.x[4], atol=1e-5)
    # -l^lam / lam = ||beta||^2 / 2 + C * sum logloss with C = (1 - lam) / (2 lam)
    sk = LogisticRegression(C=(1 - lam) / (2 * lam), tol=1e-12, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(est.coef_, sk.coef_, atol=1e-6)
    np.testing.assert_allclose(est.intercept_, sk.intercept_, atol=1e-6)
    np.testing.assert_allclose(est.predict_proba(X), sk.predict_proba(X), atol=1e-6)


def test_lam_zero_is_mle_and_labels_are_kept():
    X, y = make_classification(200, 3, n_informative=2, n_redundant=0, flip_y=0.3, random_state=3)
    labels = np.where(y == 1, "pos", "neg")
    est = WeightedRidgeLogistic(lam=0.0, tol=1e-12).fit(X, labels)
    A = np.hstack([X, np.ones((200, 1))])
    # MLE: score equations X' (t - pi) = 0
    np.testing.assert_allclose(
        A.T @ (y - expit(A @ np.r_[est.coef_[0], est.intercept_])), 0, atol=1e-8
    )
    assert set(est.predict(X)) <= {"neg", "pos"}
    assert list(est.classes_) == ["neg", "pos"]


def test_gradient_iteration_cap_warns():
    X, y = make_classification(100, 5, random_state=0)
    with pytest.warns(Warning, match="did not reach"):
        WeightedRidgeLogistic(lam=0.01, solver="gradient", max_iter=5).fit(X, y)


def test_bad_input():
    X, y = make_classification(30, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match="one class"):
        WeightedRidgeLogistic().fit(X, np.ones(30))
    with pytest.raises(ValueError, match="Only binary"):
        WeightedRidgeLogistic().fit(X, np.arange(30) % 3)
    Xn = X.copy()
    Xn[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        WeightedRidgeLogistic().fit(Xn, y)
    for lam in (-0.1, 1.0, 2):
        with pytest.raises(ValueError, match="'lam' parameter"):
            WeightedRidgeLogistic(lam=lam).fit(X, y)
    with pytest.raises(ValueError, match="'solver' parameter"):
        WeightedRidgeLogistic(solver="lbfgs").fit(X, y)


@parametrize_with_checks(
    [WeightedRidgeLogistic(), WeightedRidgeLogistic(lam=0.2, solver="gradient", max_iter=3000)]
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


@pytest.mark.parametrize("solver", ["newton", "gradient"])
@pytest.mark.parametrize("offset", [1e3, 1e4])
def test_uncentred_features_reach_the_optimum(solver, offset):
    """Features far from the origin.  The reference maximises the same
    l^lam with a generic solver (BFGS) in the coordinates (beta, b + mean' beta), which
    describe the same models and values since the intercept is not penalised."""
    X, y = make_classification(150, 4, random_state=1)
    t = y.astype(float)
    lam = 0.1
    Xo = X + offset
    mu = Xo.mean(axis=0)
    Ac = np.hstack([Xo - mu, np.ones((150, 1))])
    mask = np.r_[np.ones(4), 0.0]
    res = minimize(
        lambda b: -weighted_ridge_objective(b, Ac, t, lam, 1),
        np.zeros(5),
        jac=lambda b: -(0.5 * (1 - lam) * Ac.T @ (t - expit(Ac @ b)) - lam * mask * b),
        method="BFGS",
        options={"gtol": 1e-10},
    )
    beta_ref, b_ref = res.x[:4], res.x[4] - mu @ res.x[:4]
    kw = {"max_iter": 50000} if solver == "gradient" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = WeightedRidgeLogistic(lam=lam, solver=solver, tol=1e-10, **kw).fit(Xo, y)
    # the value of l^lam at our solution, on the uncentred design as the caller sees it
    A = np.hstack([Xo, np.ones((150, 1))])
    ours = weighted_ridge_objective(np.r_[est.coef_[0], est.intercept_], A, t, lam, 1)
    assert ours == pytest.approx(-res.fun, abs=1e-8)
    assert est.objective_ == pytest.approx(-res.fun, abs=1e-9)
    np.testing.assert_allclose(est.coef_[0], beta_ref, atol=1e-5)
    np.testing.assert_allclose(est.intercept_[0], b_ref, rtol=1e-7, atol=1e-5)


def test_three_classes_name_one_vs_rest_which_works():
    """Several classes: one line naming OneVsRestClassifier, and that wrapper fits them
    (normalised one-vs-rest probabilities)."""
    from sklearn.datasets import load_iris
    from sklearn.multiclass import OneVsRestClassifier

    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"Only binary .*OneVsRestClassifier") as err:
        WeightedRidgeLogistic().fit(X, y)
    assert "\n" not in str(err.value)
    ovr = OneVsRestClassifier(WeightedRidgeLogistic(lam=0.01)).fit(X, y)
    P = ovr.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.mean(ovr.predict(X) == y) > 0.9


@pytest.mark.parametrize("solver", ["newton", "gradient"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_integer_weights_repeat_rows_and_zero_weights_drop_them(solver, fit_intercept):
    """l(beta) with weights c_i is the log-likelihood of row i repeated c_i times, so the
    weighted fit is the fit on the repeated rows (0: the row left out), to the
    solvers' tolerance: both reach gradient <= tol max(1, |l|) on the same strongly
    concave l^lam, whose maximiser is unique."""
    X, y = make_classification(80, 4, random_state=5)
    w = np.random.default_rng(0).integers(0, 4, size=80)
    kw = dict(lam=0.05, solver=solver, fit_intercept=fit_intercept, tol=1e-11, max_iter=200000)
    weighted = WeightedRidgeLogistic(**kw).fit(X, y, sample_weight=w)
    repeated = WeightedRidgeLogistic(**kw).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-7)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, atol=1e-7)
    assert weighted.objective_ == pytest.approx(repeated.objective_, rel=1e-10)


def test_weighted_optimum_equals_generic_optimiser():
    X, y = make_classification(100, 3, n_informative=2, n_redundant=0, random_state=6)
    t = y.astype(float)
    c = np.random.default_rng(1).uniform(0.1, 3.0, size=100)
    lam = 0.1
    est = WeightedRidgeLogistic(lam=lam, fit_intercept=False, tol=1e-12).fit(X, y, sample_weight=c)
    res = minimize(
        lambda b: -weighted_ridge_objective(b, X, t, lam, 0, c),
        np.zeros(3),
        jac=lambda b: -(0.5 * (1 - lam) * X.T @ (c * (t - expit(X @ b))) - lam * b),
        method="BFGS",
        options={"gtol": 1e-11},
    )
    np.testing.assert_allclose(est.coef_[0], res.x, atol=1e-8)


def test_bad_weights():
    X, y = make_classification(30, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match="non-zero"):
        WeightedRidgeLogistic().fit(X, y, sample_weight=np.zeros(30))
    with pytest.raises(ValueError, match="[Nn]egative"):
        WeightedRidgeLogistic().fit(X, y, sample_weight=-np.ones(30))
