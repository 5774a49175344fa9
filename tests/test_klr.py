"""Kernel logistic regression (klogreg paper Eq. 9): the IRLS optimum checked against
scikit-learn's LogisticRegression and a generic L-BFGS solve of the same objective."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.datasets import load_iris, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from kclf.kernels import median_sigma, rbf_kernel
from kclf.klr import KernelLogisticRegression, batched_cg, irls, penalised_loglik
from kclf.klr_cv import KernelLogisticRegressionCV
from kclf.lspc_cv import cv_folds

TIGHT = {"tol": 1e-13, "cg_tol": 1e-12, "max_iter": 200}


@pytest.fixture(scope="module")
def binary():
    return make_classification(120, 4, n_informative=3, n_redundant=0, random_state=0)


@pytest.mark.parametrize("solver", ["cg", "direct"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("lam", [0.1, 3.0])
def test_linear_kernel_matches_sklearn_logistic_regression(binary, solver, fit_intercept, lam):
    X, y = binary
    klr = KernelLogisticRegression(
        kernel="linear", lam=lam, fit_intercept=fit_intercept, solver=solver, **TIGHT
    ).fit(X, y)
    # C = 1 / lam; the paper's intercept (footnote 3) is a penalised constant feature
    Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
    lr = LogisticRegression(C=1.0 / lam, fit_intercept=False, tol=1e-12, max_iter=10000)
    lr.fit(Xa, y)
    np.testing.assert_allclose(klr.predict_proba(X), lr.predict_proba(Xa), atol=1e-4, rtol=0)
    np.testing.assert_allclose(klr.predict_proba(X), lr.predict_proba(Xa), atol=1e-7, rtol=0)
    assert klr.converged_


@pytest.mark.parametrize("solver", ["cg", "direct"])
def test_irls_optimum_equals_lbfgs_on_the_same_objective(binary, solver):
    X, y = binary
    lam = 0.05
    sigma = median_sigma(X)
    K = rbf_kernel(X, sigma=sigma) + 1.0

    def neg(alpha):
        f = K @ alpha
        return -penalised_loglik(f[:, None], alpha[:, None], y[:, None], lam)[0]

    # the same objective in beta = L^T alpha, K = L L^T (so alpha^T K alpha = |beta|^2),
    # which is well conditioned for L-BFGS
    w, U = np.linalg.eigh(K)
    L = U * np.sqrt(np.maximum(w, 0.0))

    def neg_beta(beta):
        f = L @ beta
        value = -(np.sum(y * f - np.logaddexp(0.0, f)) - 0.5 * lam * beta @ beta)
        return value, -(L.T @ (y - expit(f)) - lam * beta)

    res = minimize(
        neg_beta,
        np.zeros(X.shape[0]),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-10},
    )
    klr = KernelLogisticRegression(sigma=sigma, lam=lam, solver=solver, **TIGHT).fit(X, y)
    f_irls = K @ klr.dual_coef_
    f_lbfgs = L @ res.x
    assert -neg(klr.dual_coef_) >= -res.fun - 1e-10 * abs(res.fun)
    np.testing.assert_allclose(-neg(klr.dual_coef_), -res.fun, rtol=1e-9)
    np.testing.assert_allclose(f_irls, f_lbfgs, atol=1e-5)
    np.testing.assert_allclose(klr.decision_function(X), f_irls, atol=1e-10)
    # stationarity: K (y - pi) = lam K alpha
    g = K @ (y - expit(f_irls)) - lam * f_irls
    assert np.max(np.abs(g)) < 1e-6


def test_irls_step_is_eq9():
    """One IRLS step from alpha = 0 solves (K + lam W^{-1}) alpha = K alpha + e exactly."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(float)
    K = rbf_kernel(X, sigma=1.0)
    lam = 0.3
    A, n_iter, _ = irls(K, y[:, None], lam, max_iter=1, solver="direct")
    W = np.full(40, 0.25)
    q = (y - 0.5) / W
    expected = np.linalg.solve(K + lam * np.diag(1.0 / W), q)
    np.testing.assert_allclose(A[:, 0], expected, atol=1e-10)
    assert n_iter[0] == 1


def test_batched_cg_solves_each_column():
    rng = np.random.default_rng(3)
    M = rng.normal(size=(30, 30))
    K = M @ M.T
    lams = np.array([0.1, 1.0, 10.0])
    B = rng.normal(size=(30, 3))
    X, _, converged = batched_cg(
        lambda V, cols: K @ V + lams[cols] * V, B, np.zeros_like(B), 1e-12, 500
    )
    assert converged.all()
    for t in range(3):
        np.testing.assert_allclose(
            X[:, t], np.linalg.solve(K + lams[t] * np.eye(30), B[:, t]), rtol=1e-8, atol=1e-10
        )


def test_separable_data_stays_finite():
    """W -> 0 on confidently fitted points: no division, no NaN."""
    X = np.r_[np.linspace(-3, -1, 20), np.linspace(1, 3, 20)][:, None]
    y = np.r_[np.zeros(20), np.ones(20)]
    for solver in ["cg", "direct"]:
        klr = KernelLogisticRegression(sigma=0.5, lam=1e-8, solver=solver).fit(X, y)
        assert np.all(np.isfinite(klr.dual_coef_))
        assert np.all(klr.predict(X) == y)
        assert klr.predict_proba(X)[[0, -1]].max() > 0.999


def test_multitask_columns_equal_separate_fits(binary):
    X, y = binary
    K = rbf_kernel(X, sigma=2.0) + 1.0
    Y = np.column_stack([y, 1 - y, (X[:, 1] > 0)]).astype(float)
    lams = np.array([0.01, 0.1, 1.0])
    A, _, conv = irls(K, Y, lams, tol=1e-13, cg_tol=1e-12, solver="cg")
    assert conv.all()
    for t in range(3):
        a, _, _ = irls(K, Y[:, [t]], lams[t], tol=1e-13, solver="direct")
        np.testing.assert_allclose(K @ A[:, t], K @ a[:, 0], atol=1e-6)


@pytest.mark.parametrize("multi_class", ["pairwise", "ovr"])
def test_multiclass_probabilities_are_distributions(multi_class):
    X, y = load_iris(return_X_y=True)
    clf = KernelLogisticRegression(lam=0.01, multi_class=multi_class).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (150, 3)
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-8)
    assert np.mean(clf.predict(X) == y) > 0.95
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[clf.decision_function(X).argmax(1)])


def test_ovr_equals_normalised_binary_fits():
    X, y = load_iris(return_X_y=True)
    ovr = KernelLogisticRegression(sigma=1.0, lam=0.1, multi_class="ovr", **TIGHT).fit(X, y)
    cols = []
    for k in range(3):
        b = KernelLogisticRegression(sigma=1.0, lam=0.1, **TIGHT).fit(X, (y == k).astype(int))
        cols.append(b.predict_proba(X)[:, 1])
    P = np.column_stack(cols)
    np.testing.assert_allclose(ovr.predict_proba(X), P / P.sum(1, keepdims=True), atol=1e-7)


def test_pairwise_uses_one_median_sigma():
    X, y = load_iris(return_X_y=True)
    clf = KernelLogisticRegression().fit(X, y)
    assert clf.sigma_ == pytest.approx(median_sigma(X))
    assert all(e.sigma_ == clf.sigma_ for e in clf.coupling_.estimators_)


def test_precomputed_equals_rbf(binary):
    X, y = binary
    a = KernelLogisticRegression(sigma=1.5, lam=0.1, **TIGHT).fit(X[:80], y[:80])
    b = KernelLogisticRegression(kernel="precomputed", lam=0.1, **TIGHT)
    b.fit(rbf_kernel(X[:80], sigma=1.5), y[:80])
    np.testing.assert_allclose(
        a.predict_proba(X[80:]),
        b.predict_proba(rbf_kernel(X[80:], X[:80], sigma=1.5)),
        atol=1e-8,
    )


def test_full_rank_nystroem_equals_exact(binary):
    X, y = binary
    exact = KernelLogisticRegression(sigma=3.0, lam=0.1, **TIGHT).fit(X, y)
    low = KernelLogisticRegression(
        sigma=3.0, lam=0.1, n_components=X.shape[0], tol=1e-13, random_state=0
    ).fit(X, y)
    np.testing.assert_allclose(exact.predict_proba(X), low.predict_proba(X), atol=1e-5)
    small = KernelLogisticRegression(sigma=3.0, lam=0.1, n_components=20, random_state=0)
    assert small.fit(X, y).coef_.shape == (21,)


def test_bad_input_errors(binary):
    X, y = binary
    with pytest.raises(ValueError, match="1 class"):
        KernelLogisticRegression().fit(X, np.zeros(len(y)))
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(ValueError, match="NaN|infinity"):
            KernelLogisticRegression().fit(Xb, y)
    with pytest.raises(ValueError, match="square"):
        KernelLogisticRegression(kernel="precomputed").fit(rbf_kernel(X, X[:50]), y)
    K = rbf_kernel(X)
    clf = KernelLogisticRegression(kernel="precomputed").fit(K, y)
    with pytest.raises(ValueError, match="120"):
        clf.predict(K[:, :100])
    with pytest.raises(ValueError, match="sigma"):
        KernelLogisticRegression(sigma=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="lam"):
        KernelLogisticRegression(lam=-0.1).fit(X, y)
    with pytest.raises(ValueError, match="lam"):
        KernelLogisticRegression(lam=0.0).fit(X, y)
    with pytest.raises(ValueError, match="multi_class"):
        KernelLogisticRegression(multi_class="ovo").fit(X, y)
    with pytest.raises(ValueError, match="precomputed"):
        KernelLogisticRegression(kernel="precomputed", n_components=10).fit(K, y)
    with pytest.raises(ValueError, match="kernel"):
        KernelLogisticRegression(kernel="poly").fit(X, y)
    with pytest.raises(ValueError, match="lams"):
        KernelLogisticRegressionCV(lams=[0.1, -1.0]).fit(X, y)
    with pytest.raises(ValueError, match="sigmas"):
        KernelLogisticRegressionCV(sigmas=[0.0]).fit(X, y)


def naive_cv_scores(X, y, sigmas, lams, folds):
    out = []
    for s in sigmas:
        for lam in lams:
            errs = []
            for tr, va in folds:
                clf = KernelLogisticRegression(sigma=s, lam=lam, **TIGHT).fit(X[tr], y[tr])
                errs.append(np.mean(clf.predict(X[va]) != y[va]))
            out.append(np.mean(errs))
    return np.array(out)


@pytest.mark.parametrize("multi_class", ["pairwise", "ovr"])
def test_cv_chooses_what_the_naive_loop_chooses(multi_class):
    X, y = load_iris(return_X_y=True)
    X = X + np.random.default_rng(0).normal(scale=0.3, size=X.shape)
    sigmas, lams = [0.5, 1.0, 2.0], [1e-3, 1e-1, 10.0]
    cv = KernelLogisticRegressionCV(
        sigmas, lams, cv=3, multi_class=multi_class, random_state=0, **TIGHT
    ).fit(X, y)
    folds = cv_folds(y, 3, 0)
    naive = []
    for s in sigmas:
        for lam in lams:
            errs = []
            for tr, va in folds:
                clf = KernelLogisticRegression(sigma=s, lam=lam, multi_class=multi_class, **TIGHT)
                errs.append(np.mean(clf.fit(X[tr], y[tr]).predict(X[va]) != y[va]))
            naive.append(np.mean(errs))
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], naive, atol=1e-12)
    best = int(np.argmin(naive))
    assert (cv.sigma_, cv.lam_) == (np.repeat(sigmas, 3)[best], np.tile(lams, 3)[best])
    P = cv.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-8)


def test_multitask_cv_equals_single_task_cv(binary):
    X, y = binary
    Y = np.column_stack([y, (X[:, 0] + X[:, 1] > 0)]).astype(int)
    kw = dict(
        sigmas=[1.0, 3.0], lams=[0.01, 1.0], cv=2, random_state=0, scoring="log_loss", **TIGHT
    )
    multi = KernelLogisticRegressionCV(**kw).fit(X, Y)
    assert multi.predict_proba(X).shape == (120, 2)
    folds = cv_folds(Y, 2, 0)
    for t in range(2):
        scores = []
        for s in kw["sigmas"]:
            for lam in kw["lams"]:
                ll = []
                for tr, va in folds:
                    clf = KernelLogisticRegression(sigma=s, lam=lam, **TIGHT).fit(X[tr], Y[tr, t])
                    p = clf.predict_proba(X[va])[np.arange(va.size), Y[va, t]]
                    ll.append(-np.mean(np.log(p)))
                scores.append(np.mean(ll))
        np.testing.assert_allclose(multi.cv_results_["mean_test_score"][t], scores, rtol=1e-7)
        single = KernelLogisticRegression(sigma=multi.sigma_[t], lam=multi.lam_[t], **TIGHT)
        np.testing.assert_allclose(
            multi.predict_proba(X)[:, t], single.fit(X, Y[:, t]).predict_proba(X)[:, 1], atol=1e-8
        )


def expected_failures(estimator):
    if isinstance(estimator, KernelLogisticRegressionCV):
        return {
            "check_classifier_multioutput": "decision_function keeps the log-odds where "
            "predict_proba has rounded to 1.0, so their ranks differ only by float64 ties"
        }
    return {}


@parametrize_with_checks(
    [
        KernelLogisticRegression(),
        KernelLogisticRegression(multi_class="ovr", solver="cg"),
        KernelLogisticRegression(n_components=5, random_state=0),
        KernelLogisticRegressionCV(sigmas=[1.0, 2.0], lams=[0.1, 1.0]),
    ],
    expected_failed_checks=expected_failures,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
