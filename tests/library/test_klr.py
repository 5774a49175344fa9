"""Kernel logistic regression (klogreg paper Eq. 9): the IRLS optimum checked against
scikit-learn's LogisticRegression and a generic L-BFGS solve of the same objective."""

import numpy as np
import pytest
from array_api_checks import xfail_float32_array_api
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import rankdata
from sklearn.datasets import load_iris, make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from kclf._folds import cv_folds
from kclf.coupling import PairwiseCoupling
from kclf.kernels import median_sigma, rbf_kernel
from kclf.klr import KernelLogisticRegression, KernelLogisticRegressionCV
from kclf.klr._solver import irls, penalised_loglik

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
    with pytest.raises(ValueError, match="at least two classes in y, got one class"):
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


def smoothest_best(means, sigmas, lams):
    """(sigma, lambda) of the lowest mean score (sigma-major grid); among settings within
    1e-12 of it, the largest sigma, then the largest lambda (the documented tie rule)."""
    ties = [k for k, v in enumerate(means) if v <= min(means) + 1e-12]
    return max((sigmas[k // len(lams)], lams[k % len(lams)]) for k in ties)


def naive_cv_scores(X, y, sigmas, lams, folds, **kw):
    """Mean validation error of one KernelLogisticRegression fit per (sigma, lambda, fold),
    sigma-major: what the CV fast path must reproduce."""
    out = []
    for s in sigmas:
        for lam in lams:
            errs = []
            for tr, va in folds:
                clf = KernelLogisticRegression(sigma=s, lam=lam, **TIGHT, **kw).fit(X[tr], y[tr])
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
    naive = naive_cv_scores(X, y, sigmas, lams, cv_folds(y, 3, 0), multi_class=multi_class)
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], naive, atol=1e-12)
    assert (cv.sigma_, cv.lam_) == smoothest_best(naive, sigmas, lams)
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


@parametrize_with_checks(
    [
        KernelLogisticRegression(),
        KernelLogisticRegression(multi_class="ovr", solver="cg"),
        # as many landmarks as the weight checks' 15 distinct rows: their fits then take
        # them all (landmark_rows), the other checks' data have more rows than that
        KernelLogisticRegression(n_components=20, random_state=0),
        KernelLogisticRegressionCV(sigmas=[1.0, 2.0], lams=[0.1, 1.0]),
        KernelLogisticRegressionCV(sigmas=[1.0, 2.0], lams=[0.1, 1.0], n_jobs=2),
    ]
)
def test_sklearn_compatible(estimator, check):
    xfail_float32_array_api(check)
    check(estimator)


def test_cg_at_tiny_lambda_converges_or_falls_back_to_direct():
    """At n = 300, lam = 1e-7 CG cannot reach its tolerance within its
    cap; the fit must still reach the optimum (stationarity y - pi = lam alpha, the zero of
    the gradient K (y - pi - lam alpha) for a non-singular K) and agree with the direct
    solver, without a warning."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y = make_classification(300, 5, n_informative=3, n_redundant=0, flip_y=0.05, random_state=0)
    lam = 1e-7
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        cg = KernelLogisticRegression(lam=lam, solver="cg").fit(X, y)
        direct = KernelLogisticRegression(lam=lam, solver="direct").fit(X, y)
    for m in (cg, direct):
        assert m.converged_
        p = m.predict_proba(X)[:, 1]
        # IRLS stops at a relative change of Phi <= 1e-6, near the optimum; the old CG path
        # stopped with residuals of order 1
        assert np.max(np.abs(y - p - lam * m.dual_coef_)) < 1e-5
    np.testing.assert_allclose(cg.predict_proba(X), direct.predict_proba(X), atol=1e-5)


@pytest.mark.parametrize("lam", [1e-4, 1e-3])
def test_cg_steps_have_no_error_floor(lam):
    """CG solves for the IRLS step, whose right-hand side vanishes at the optimum, so its
    relative tolerance does not leave a floor (solving for alpha itself left the CG fit
    0.02 away from the optimum at lam = 1e-4, reported as converged)."""
    X, y = make_classification(400, 5, n_informative=3, n_redundant=0, flip_y=0.05, random_state=0)
    cg = KernelLogisticRegression(lam=lam, solver="cg").fit(X, y)
    ref = KernelLogisticRegression(lam=lam, solver="direct", **TIGHT).fit(X, y)
    assert cg.converged_
    np.testing.assert_allclose(cg.predict_proba(X), ref.predict_proba(X), atol=1e-4)


def test_a_fit_that_does_not_converge_warns():
    from sklearn.exceptions import ConvergenceWarning

    X, y = load_iris(return_X_y=True)
    for kw in ({}, {"multi_class": "ovr"}, {"n_components": 30, "random_state": 0}):
        with pytest.warns(ConvergenceWarning, match="did not reach"):
            m = KernelLogisticRegression(lam=1e-3, max_iter=1, **kw).fit(X, y)
        assert m.converged_ is False
    # pairwise mode and PairwiseCoupling report convergence too
    m = KernelLogisticRegression(lam=0.1).fit(X, y)
    assert m.converged_ is True and m.coupling_.converged_ is True
    with pytest.warns(ConvergenceWarning):
        m = KernelLogisticRegression(lam=1e-3, max_iter=1).fit(X, y)
    assert m.converged_ is False and m.coupling_.converged_ is False
    with pytest.warns(ConvergenceWarning, match="of the search"):
        KernelLogisticRegressionCV([1.0], [1e-3], cv=2, max_iter=1, random_state=0).fit(X, y)


def test_klr_cv_ties_go_to_the_smoother_model(binary):
    X, y = binary
    X = X.copy()
    X[y == 1] += 8.0  # separable: zero CV error for most settings
    sigmas, lams = [2.0, 8.0, 4.0], [1e-3, 1.0, 1e-2]  # the smoothest is not first
    cv = KernelLogisticRegressionCV(sigmas, lams, cv=2, random_state=0).fit(X, y)
    res = cv.cv_results_
    tie = res["mean_test_score"] == res["mean_test_score"].min()
    assert len(set(res["sigma"][tie])) > 1 and len(set(res["lam"][tie])) > 1
    assert tie[0]  # the grid's first setting ties; the smoother one must win
    assert (cv.sigma_, cv.lam_) == max(zip(res["sigma"][tie], res["lam"][tie])) == (8.0, 1.0)


def test_klr_cv_accepts_a_splitter_and_an_iterable_of_folds(binary):
    from sklearn.model_selection import StratifiedKFold

    X, y = binary
    sigmas, lams = [1.0, 3.0], [0.01, 1.0]
    splitter = StratifiedKFold(3, shuffle=True, random_state=2)
    folds = list(splitter.split(X, y))
    a = KernelLogisticRegressionCV(sigmas, lams, cv=splitter, **TIGHT).fit(X, y)
    b = KernelLogisticRegressionCV(sigmas, lams, cv=folds, **TIGHT).fit(X, y)
    naive = naive_cv_scores(X, y, sigmas, lams, folds)
    for m in (a, b):
        np.testing.assert_allclose(m.cv_results_["mean_test_score"], naive, atol=1e-12)


def test_klr_cv_one_class_task_predicts_its_constant_and_warns(binary):
    X, y = binary
    Y = np.c_[y, np.zeros_like(y), np.ones_like(y)]
    kw = dict(sigmas=[1.0, 3.0], lams=[0.01, 1.0], random_state=0)
    with pytest.warns(UserWarning, match=r"task 1 \(all 0\), task 2 \(all 1\)"):
        cv = KernelLogisticRegressionCV(**kw).fit(X, Y)
    P = cv.predict_proba(X[:7])
    np.testing.assert_array_equal(P[:, 1:], np.c_[np.zeros(7), np.ones(7)])
    np.testing.assert_array_equal(cv.predict(X[:7])[:, 1:], np.c_[np.zeros(7), np.ones(7)])
    np.testing.assert_array_equal(cv.decision_function(X[:7])[:, 1:], [[-745.0, 745.0]] * 7)
    assert cv.estimators_[1] is None and np.isnan(cv.sigma_[1])
    ref = KernelLogisticRegressionCV(**kw).fit(X, np.c_[y, 1 - y])  # the same folds
    np.testing.assert_allclose(P[:, 0], ref.predict_proba(X[:7])[:, 0], atol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"n_components": 30, "random_state": 0}])
def test_changing_X_after_fit_does_not_change_the_model(binary, kw):
    X, y = binary
    X_caller = X.copy()
    m = KernelLogisticRegression(sigma=2.0, **kw).fit(X_caller, y)
    before = m.predict_proba(X[:10])
    X_caller += 5.0
    np.testing.assert_array_equal(m.predict_proba(X[:10]), before)


def strictly_ordered(d, p):
    """Every pair of rows whose probabilities differ has its scores in the same strict
    order (the probabilities sorted, the scores must increase wherever they do)."""
    order = np.argsort(p, kind="stable")
    dp, dd = np.diff(p[order]), np.diff(d[order])
    return bool(np.all(dd[dp > 0] > 0))


def test_decision_function_increases_with_the_positive_probability():
    """Binary KLR, PairwiseCoupling of two classes and KLR-CV's tasks: where two rows'
    probabilities of the positive class differ, so do their scores, in the same order;
    the data are separable (linear kernel, small lambda), so many probabilities round to 1
    (KLR's and the coupling's scores keep ordering those rows; the multi-task scores
    tie exactly where the probabilities do)."""
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(-2.0, 1.0, (60, 2)), rng.normal(2.0, 1.0, (60, 2))]
    y = np.r_[np.zeros(60), np.ones(60)].astype(int)
    Xt = rng.normal(0.0, 4.0, (400, 2))
    klr = KernelLogisticRegression(kernel="linear", lam=1e-4).fit(X, y)
    pc = PairwiseCoupling(KernelLogisticRegression(kernel="linear", lam=1e-4)).fit(X, y)
    pc_loop = PairwiseCoupling(LogisticRegression(C=1e4)).fit(X, y)
    Y = np.c_[y, (X[:, 0] > 2.5)].astype(int)
    multi = KernelLogisticRegressionCV(kernel="linear", lams=[1e-4, 1e-2], cv=2).fit(X, Y)
    for est in (klr, pc, pc_loop):
        p, d = est.predict_proba(Xt)[:, 1], est.decision_function(Xt)
        assert np.sum(p == 1.0) > 10 or est is pc_loop  # rounding does happen
        assert strictly_ordered(d, p)
        np.testing.assert_array_equal(d > 0, est.predict(Xt) == 1)
    P, D = multi.predict_proba(Xt), multi.decision_function(Xt)
    assert np.sum(P[:, 0] == 1.0) > 10
    for t in range(2):
        assert strictly_ordered(D[:, t], P[:, t])
        np.testing.assert_array_equal(rankdata(D[:, t]), rankdata(P[:, t]))
    np.testing.assert_array_equal(D > 0, multi.predict(Xt) == 1)


@pytest.mark.parametrize(
    "params",
    [
        {"sigma": 1.5},
        {"kernel": "linear", "lam": 1.0},
        {"multi_class": "ovr", "solver": "cg"},
        {"n_components": 30, "random_state": 0},
    ],
)
def test_sparse_input_gives_the_dense_probabilities(params):
    """CSR and CSC inputs: the kernels equal the dense ones to round-off (Gaussian:
    distances of uncentred sparse rows, eps (||x||^2 + ||y||^2)), so do the fits."""
    from scipy import sparse

    X, y = load_iris(return_X_y=True)
    X = np.where(X > np.median(X, axis=0), X, 0.0)  # half the entries zero
    dense = KernelLogisticRegression(**params, **TIGHT).fit(X, y)
    for container in (sparse.csr_matrix, sparse.csc_matrix):
        est = KernelLogisticRegression(**params, **TIGHT).fit(container(X), y)
        np.testing.assert_allclose(
            est.predict_proba(container(X)), dense.predict_proba(X), rtol=0, atol=1e-8
        )
    cv = KernelLogisticRegressionCV(sigmas=[1.0, 2.0], lams=[0.01, 1.0], **TIGHT)
    a = cv.fit(sparse.csr_matrix(X), y).predict_proba(X)
    np.testing.assert_allclose(a, cv.fit(X, y).predict_proba(X), rtol=0, atol=1e-8)


def test_weighted_search_scores_equal_weighted_fits():
    """KLR-CV with sample_weight: each fold's score is the weighted score of a
    KernelLogisticRegression fitted with the training rows' weights."""
    from kclf._scoring import score_proba

    X, y = make_classification(90, 4, n_informative=3, n_redundant=0, random_state=2)
    w = np.random.default_rng(3).uniform(0.0, 3.0, 90)
    folds = [
        (np.arange(90)[k::3], np.setdiff1d(np.arange(90), np.arange(90)[k::3])) for k in (0, 1)
    ]
    sigmas, lams = [1.0, 3.0], [0.01, 1.0]
    cv = KernelLogisticRegressionCV(sigmas, lams, cv=folds, scoring="log_loss", **TIGHT)
    cv.fit(X, y, sample_weight=w)
    naive = []
    for s in sigmas:
        for lam in lams:
            sc = []
            for tr, va in folds:
                est = KernelLogisticRegression(sigma=s, lam=lam, **TIGHT)
                est.fit(X[tr], y[tr], sample_weight=w[tr])
                sc.append(score_proba(est.predict_proba(X[va]), y[va], "log_loss", w[va]))
            naive.append(np.mean(sc))
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], naive, rtol=1e-9)


@pytest.mark.parametrize("n_components", [None, 20])
def test_n_jobs_gives_identical_results(n_components):
    X, y = load_iris(return_X_y=True)
    kw = dict(sigma_factors=[0.5, 1.0, 2.0], lams=[0.01, 1.0], n_components=n_components)
    fits = [
        KernelLogisticRegressionCV(**kw, random_state=0, n_jobs=j).fit(X, y) for j in (1, 2, -1)
    ]
    for other in fits[1:]:
        np.testing.assert_array_equal(
            other.cv_results_["mean_test_score"], fits[0].cv_results_["mean_test_score"]
        )
        np.testing.assert_array_equal(other.predict_proba(X), fits[0].predict_proba(X))


@pytest.mark.parametrize("params", [{}, {"n_components": 10}])
def test_an_overflowing_linear_kernel_is_refused_in_one_line(params):
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=0)
    for est in (
        KernelLogisticRegression(kernel="linear", **params),
        KernelLogisticRegressionCV(kernel="linear", **params),
    ):
        with pytest.raises(ValueError, match="overflows") as err:
            est.fit(1e300 * X, y)
        assert "\n" not in str(err.value)


@pytest.mark.parametrize("sigma", [0.5, 2.0])
def test_nystroem_fit_on_nearly_collinear_landmarks_reaches_the_optimum(sigma):
    """Two input dimensions and a wide kernel make the landmarks' kernel numerically
    singular (scikit-learn floors its eigenvalues at 1e-12, so ``N = K_mm^{-1/2}`` reaches
    1e6): the Hessian of the factored design, ``N (C^T W C) N^T``, then carried round-off
    far above ``lam`` (its Cholesky failed: KEEL's phoneme in the benchmark).  The fit
    takes the design formed and reaches the optimum a generic solver (scipy's
    trust-region Newton on the same features) finds: the Newton loop stops at a
    relative change of 1e-10 in the objective, within 1e-6 in probability."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 2))
    y = (np.sin(4 * X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=600) > 1).astype(int)
    est = KernelLogisticRegression(
        sigma=sigma, lam=1e-3, n_components=100, random_state=0, tol=1e-10
    ).fit(X, y)
    eig = np.linalg.eigvalsh(rbf_kernel(est.nystroem_.components_, sigma=1.0))
    assert eig.min() < 1e-12 * eig.max()  # the landmarks' kernel is singular in floats
    assert est.converged_ and est.n_iter_[0] <= 20
    Phi = est._design(X).formed().C

    def objective(w):
        f = Phi @ w
        p = expit(f)
        value = np.sum(np.logaddexp(0.0, f) - y * f) + 0.5e-3 * w @ w
        return value, Phi.T @ (p - y) + 1e-3 * w

    def hessian(w):
        p = expit(Phi @ w)
        return (Phi.T * (p * (1 - p))) @ Phi + 1e-3 * np.eye(Phi.shape[1])

    ref = minimize(
        objective,
        np.zeros(Phi.shape[1]),
        jac=True,
        hess=hessian,
        method="trust-exact",
        options={"gtol": 1e-10},
    )
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], expit(Phi @ ref.x), atol=1e-6)
