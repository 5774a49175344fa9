"""KernelLogisticRegressionCV's Nystroem path."""

from itertools import combinations

import numpy as np
import pytest
from array_api_checks import xfail_float32_array_api
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from kclf._folds import cv_folds
from kclf._scoring import score_proba
from kclf.coupling import couple
from kclf.klr import KernelLogisticRegression, KernelLogisticRegressionCV


def dense(design):
    """The design matrix ``Phi = C N^T`` of a factored Nystroem design."""
    return design.C @ design.N.T


def data(n=160, seed=0, c=2, tasks=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    if tasks:
        return X, (X[:, :tasks] + 0.7 * rng.normal(size=(n, tasks)) > 0).astype(int)
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=n), np.linspace(-0.6, 0.6, c - 1))
    return X, y


def naive_scores(cv, X, y, sigmas, lams, folds, m):
    """One independent fit per (sigma, lambda, fold): scikit-learn's LogisticRegression
    (``C = 1 / lam``, no separate intercept) on the Nystroem features of all of ``X`` plus
    a constant column -- the objective of Eq. (6) in feature space, solved by another
    solver."""
    out = []
    for s in sigmas:
        est = KernelLogisticRegression(sigma=s, n_components=m, random_state=0).fit(X, y)
        Phi = dense(est._design(X))
        for lam in lams:
            sc = []
            for tr, va in folds:
                lr = LogisticRegression(C=1.0 / lam, fit_intercept=False, tol=1e-12, max_iter=10000)
                lr.fit(Phi[tr], y[tr])
                sc.append(score_proba(lr.predict_proba(Phi[va]), y[va], "log_loss"))
            out.append(np.mean(sc))
    return np.array(out)


def test_nystroem_search_scores_equal_independent_fits_and_final_model():
    X, y = data()
    sigmas, lams, m = [0.7, 1.5], [0.1, 1.0, 10.0], 25
    cv = KernelLogisticRegressionCV(
        sigmas, lams, cv=2, scoring="log_loss", random_state=0, n_components=m, tol=1e-12
    ).fit(X, y)
    naive = naive_scores(cv, X, y, sigmas, lams, cv_folds(y, 2, 0), m)
    # both reach the unique optimum of a strictly convex problem (Newton to a relative
    # objective change of 1e-12, lbfgs to tol 1e-12): scores agree to ~1e-6
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], naive, rtol=1e-5)
    ref = KernelLogisticRegression(
        sigma=cv.sigma_, lam=cv.lam_, n_components=m, random_state=0, tol=1e-12
    ).fit(X, y)
    np.testing.assert_allclose(cv.predict_proba(X), ref.predict_proba(X), atol=1e-12)
    assert cv.best_estimator_.n_components == m


@pytest.mark.parametrize("multi_class", ["ovr", "pairwise"])
def test_nystroem_multiclass_and_multitask(multi_class):
    X, y = data(c=3, seed=1)
    cv = KernelLogisticRegressionCV(
        [1.0, 2.0], [0.1, 1.0], random_state=0, n_components=20, multi_class=multi_class
    ).fit(X, y)
    ref = KernelLogisticRegression(
        sigma=cv.sigma_, lam=cv.lam_, n_components=20, random_state=0, multi_class=multi_class
    ).fit(X, y)
    np.testing.assert_allclose(cv.predict_proba(X), ref.predict_proba(X), atol=1e-12)
    # the search's scores: the same error rate as fitting each setting on each fold
    folds = cv_folds(y, 2, 0)
    for k, (s, lam) in enumerate(zip(cv.cv_results_["sigma"], cv.cv_results_["lam"])):
        errs = []
        for tr, va in folds:
            est = KernelLogisticRegression(
                sigma=s, lam=lam, n_components=20, random_state=0, multi_class=multi_class
            )
            # the search's features come from all of X: fit them there, then the fold
            full = est.fit(X, y)
            lr = LogisticRegression(C=1.0 / lam, fit_intercept=False, tol=1e-12, max_iter=10000)
            if multi_class == "ovr":
                Phi = dense(full._design(X))
                P = np.column_stack(
                    [
                        lr.fit(Phi[tr], (y[tr] == j).astype(int)).predict_proba(Phi[va])[:, 1]
                        for j in range(3)
                    ]
                )
            else:
                # every pair on its fold rows of the one shared design, then coupled
                Phi = dense(full.coupling_.estimators_[0]._design(X))
                R = np.full((va.size, 3, 3), 0.5)
                for i, j in combinations(range(3), 2):
                    rows = tr[(y[tr] == i) | (y[tr] == j)]
                    r = lr.fit(Phi[rows], (y[rows] == i).astype(int)).predict_proba(Phi[va])
                    R[:, i, j], R[:, j, i] = r[:, 1], r[:, 0]
                counts = np.bincount(y[tr], minlength=3)
                P = couple(R, counts[:, None] + counts[None, :])
            pred = np.argmax(P, axis=1)
            errs.append(np.mean(pred != y[va]))
        assert cv.cv_results_["mean_test_score"][k] == pytest.approx(np.mean(errs), abs=1e-12)
    Xm, Y = data(seed=2, tasks=2)
    multi = KernelLogisticRegressionCV([1.0], [0.1, 1.0], random_state=0, n_components=15).fit(
        Xm, Y
    )
    for t in range(2):
        ref = KernelLogisticRegression(
            sigma=1.0, lam=multi.lam_[t], n_components=15, random_state=0
        ).fit(Xm, Y[:, t])
        np.testing.assert_allclose(
            multi.predict_proba(Xm)[:, t], ref.predict_proba(Xm)[:, 1], atol=1e-12
        )


def test_pairwise_search_in_a_basis_of_every_row_equals_the_exact_search():
    """Pairwise multi-class search with every row a landmark: the shared design is exact
    on every fold's pairs (``Phi Phi^T = K``), so the fold scores, the choice and the
    refitted model are the exact search's (probabilities to the bound of
    ``test_scale_pairwise.pair_bound``: each fit within ``tol |Phi|`` of its maximum)."""
    X, y = data(n=90, c=4, seed=3)
    grid = dict(sigma_factors=[0.5, 1.0], lams=[0.03, 0.3], cv=2, random_state=0, tol=1e-12)
    exact = KernelLogisticRegressionCV(**grid).fit(X, y)
    shared = KernelLogisticRegressionCV(n_components=X.shape[0], **grid).fit(X, y)
    np.testing.assert_array_equal(
        shared.cv_results_["mean_test_score"], exact.cv_results_["mean_test_score"]
    )
    assert (shared.sigma_, shared.lam_) == (exact.sigma_, exact.lam_)
    bound = 0.5 * np.sqrt(2.0) * np.sqrt(2.0 * 1e-12 * y.size * np.log(2.0) / exact.lam_)
    R = shared.best_estimator_.coupling_.pairwise_proba(X)
    R_exact = exact.best_estimator_.coupling_.pairwise_proba(X)
    assert np.abs(R - R_exact).max() <= bound


@pytest.mark.parametrize("seed", [0, 1])
def test_pairwise_nystroem_is_deterministic_from_random_state(seed):
    """Fewer landmarks than rows: the same ``random_state`` draws the same shared basis
    (and folds), another one another."""
    X, y = data(n=120, c=3, seed=4)

    def make(random_state):
        return KernelLogisticRegressionCV(
            sigma_factors=[0.5, 1.0], lams=[0.1, 1.0], n_components=15, random_state=random_state
        ).fit(X, y)

    a, b, other = make(seed), make(seed), make(seed + 10)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(
        a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"]
    )
    pairs = a.best_estimator_.coupling_.estimators_
    assert len({id(e.nystroem_) for e in pairs}) == 1  # one basis for every pair
    landmarks = pairs[0].nystroem_.components_
    assert landmarks.shape[0] == 15
    assert not np.array_equal(
        landmarks, other.best_estimator_.coupling_.estimators_[0].nystroem_.components_
    )


def test_nystroem_search_rejects_precomputed():
    X, y = data(n=20)
    with pytest.raises(ValueError, match="n_components"):
        KernelLogisticRegressionCV(kernel="precomputed", n_components=5).fit(X @ X.T, y)
    with pytest.raises(ValueError, match="n_components"):
        KernelLogisticRegressionCV(n_components=0).fit(X, y)


@parametrize_with_checks(
    [
        # at least as many landmarks as the weight checks' 15 distinct rows, which the
        # weighted and the repeated fits then both take (kclf.klr._solver.landmark_rows)
        KernelLogisticRegressionCV(
            sigmas=[1.0, 2.0], lams=[0.1, 1.0], n_components=20, random_state=0
        )
    ]
)
def test_sklearn_compatible(estimator, check):
    xfail_float32_array_api(check)
    check(estimator)
