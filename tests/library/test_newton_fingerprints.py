"""Fingerprints: every logistic model fitted by the one Newton solver (kclf/_newton.py)
equals the model its own IRLS / Newton loop fitted before (recorded in
tests/data/newton_fingerprints.npz by tests/library/newton_fingerprints.py), within the
solvers' tolerances.

The tolerances come from the stopping rules, not from the differences observed.  Kernel
logistic regression stops when the relative change of its objective ``Phi`` is at most
``tol``; in Newton's quadratic phase the gap to the optimum is below the last step's gain,
so each fit is within ``eps = tol |Phi|`` of the maximum.  ``Phi`` is ``lam``-strongly
concave in the RKHS norm of ``f`` (in the Euclidean norm of the Nystroem weights), so each
fit is within ``sqrt(2 eps / lam)`` of the maximiser and two fits within twice that:
``r = 2 sqrt(2 tol |Phi| / lam)``.  A prediction moves by at most ``r sqrt(k(x, x))``
(``k(x, x) = 2`` with the intercept's constant feature), a probability by a quarter of
that.  ``WeightedRidgeLogistic`` stops when its gradient's max-norm is at most
``tol max(1, |l^lam|)``; with ``mu`` the strong concavity of ``l^lam`` each fit is within
``sqrt(p) tol max(1, |l^lam|) / mu`` of the maximiser.
"""

import warnings

import numpy as np
import pytest
from newton_fingerprints import (
    CASES,
    FIXTURE,
    LAPLACE_CASES,
    RIDGE_CASES,
    TIGHT,
    data,
    laplace_prior,
)
from scipy.special import expit

from kclf.coupling import couple
from kclf.kernels import rbf_kernel

RECORDED = np.load(FIXTURE)
LOG2 = np.log(2.0)


def dense(design):
    """The design matrix ``Phi = C N^T`` of a factored Nystroem design."""
    return design.C @ design.N.T


def recorded(prefix):
    return {k.split("/", 1)[1]: RECORDED[k] for k in RECORDED.files if k.split("/")[0] == prefix}


def fit(name, tight):
    data_name, make = CASES[name]
    X, y, X_test = data(data_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make(TIGHT if tight else {}).fit(X, y), X, y, X_test


def dual_objective(K, alpha, y, lam):
    f = K @ alpha
    return np.sum(y * f - np.logaddexp(0.0, f)) - 0.5 * lam * alpha @ f


def radius(tol, phi, lam):
    """The distance of two fits that each stopped at ``tol`` (module docstring)."""
    return 2.0 * np.sqrt(2.0 * tol * abs(phi) / lam)


def check_dual(est, X, y01, alpha_old, X_test):
    """One binary dual fit: the RKHS distance of the two ``f`` and their test outputs."""
    K = rbf_kernel(X, None, est.sigma_) + float(est.fit_intercept)
    d = est.dual_coef_ - alpha_old
    r = radius(est.tol, dual_objective(K, alpha_old, y01, est.lam), est.lam)
    assert np.sqrt(max(d @ K @ d, 0.0)) <= r
    Kt = rbf_kernel(X_test, X, est.sigma_) + float(est.fit_intercept)
    assert np.max(np.abs(Kt @ d)) <= r * np.sqrt(2.0)
    return r


def normalised_bound(P, ds):
    """The largest change of ``P = s / sum(s)`` (rows) when every ``s`` moves by <= ds."""
    S = P.sum(axis=1, keepdims=True)  # P here are the raw sigmoids s
    c = P.shape[1]
    return np.max((ds + P / S * c * ds) / (S - c * ds))


@pytest.mark.parametrize("tight", [False, True], ids=["default_tol", "tight_tol"])
@pytest.mark.parametrize(
    "name", ["klr_direct", "klr_direct_sigma", "klr_cg", "klr_ovr_cg", "klr_ovr_direct"]
)
def test_dual_klr_equals_recorded(name, tight):
    est, X, y, X_test = fit(name, tight)
    old = recorded(name + ("_tight" if tight else ""))
    yi = np.searchsorted(est.classes_, y)
    if est.classes_.size == 2:
        r = check_dual(est, X, yi.astype(float), old["dual_coef"], X_test)
        bound = r * np.sqrt(2.0) / 4.0
    else:
        rs = [
            check_dual_column(est, X, (yi == k).astype(float), old["dual_coef"][:, k], X_test, k)
            for k in range(est.classes_.size)
        ]
        Kt = rbf_kernel(X_test, X, est.sigma_) + 1.0
        S = expit(Kt @ old["dual_coef"])
        bound = normalised_bound(S, max(rs) * np.sqrt(2.0) / 4.0)
    np.testing.assert_allclose(est.predict_proba(X_test), old["proba"], rtol=0, atol=bound)


def check_dual_column(est, X, y01, alpha_old, X_test, k):
    K = rbf_kernel(X, None, est.sigma_) + 1.0
    d = est.dual_coef_[:, k] - alpha_old
    r = radius(est.tol, dual_objective(K, alpha_old, y01, est.lam), est.lam)
    assert np.sqrt(max(d @ K @ d, 0.0)) <= r
    return r


def check_pairs(coupling, X, yi, old, X_test):
    """Every pair's fit and its pairwise probabilities on the test rows."""
    bounds = np.zeros((coupling.classes_.size,) * 2)
    for p, ((i, j), e, idx) in enumerate(
        zip(coupling.pairs_, coupling.estimators_, coupling.pair_index_)
    ):
        r = check_dual(e, X[idx], (yi[idx] == i).astype(float), old[f"pair{p}_dual_coef"], X_test)
        bounds[i, j] = bounds[j, i] = r * np.sqrt(2.0) / 4.0
    diff = np.abs(coupling.pairwise_proba(X_test) - old["pair_proba"])
    assert np.all(diff <= bounds)


@pytest.mark.parametrize("tight", [False, True], ids=["default_tol", "tight_tol"])
@pytest.mark.parametrize(
    "name", ["klr_pairwise_stacked", "klr_pairwise_cg", "coupling_default_width"]
)
def test_pairwise_equals_recorded(name, tight):
    est, X, y, X_test = fit(name, tight)
    old = recorded(name + ("_tight" if tight else ""))
    coupling = getattr(est, "coupling_", est)
    check_pairs(coupling, X, np.searchsorted(coupling.classes_, y), old, X_test)
    np.testing.assert_array_equal(est.predict(X_test), est.classes_[old["proba"].argmax(1)])
    # the coupling (now a problem of kclf._newton's loop) of the recorded pairs'
    # probabilities: the recorded coupled probabilities, within its tol = 1e-10 (the
    # coupled map's Lipschitz constant on these rows is a few units)
    coupled = couple(old["pair_proba"], coupling.pair_counts_, tol=coupling.tol)
    np.testing.assert_allclose(coupled, old["proba"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("tight", [False, True], ids=["default_tol", "tight_tol"])
@pytest.mark.parametrize("name", ["klr_nystroem", "klr_nystroem_ovr"])
def test_nystroem_klr_equals_recorded(name, tight):
    est, X, y, X_test = fit(name, tight)
    old = recorded(name + ("_tight" if tight else ""))
    Phi = dense(est._design(X))
    Pt = dense(est._design(X_test))
    W_old = old["coef"].reshape(Phi.shape[1], -1)
    W_new = est.coef_.reshape(Phi.shape[1], -1)
    yi = np.searchsorted(est.classes_, y)
    Y = (yi == 1)[:, None] if W_old.shape[1] == 1 else np.eye(est.classes_.size)[yi]
    rs = []
    for t in range(W_old.shape[1]):
        f = Phi @ W_old[:, t]
        phi = np.sum(Y[:, t] * f - np.logaddexp(0.0, f)) - 0.5 * est.lam * W_old[:, t] @ W_old[:, t]
        rs.append(radius(est.tol, phi, est.lam))
        assert np.linalg.norm(W_new[:, t] - W_old[:, t]) <= rs[-1]
    ds = max(rs) * np.max(np.linalg.norm(Pt, axis=1)) / 4.0
    bound = ds if W_old.shape[1] == 1 else normalised_bound(expit(Pt @ W_old), ds)
    np.testing.assert_allclose(est.predict_proba(X_test), old["proba"], rtol=0, atol=bound)


@pytest.mark.parametrize("tight", [False, True], ids=["default_tol", "tight_tol"])
@pytest.mark.parametrize("name", ["cv_binary", "cv_tasks", "cv_ovr", "cv_pairwise", "cv_nystroem"])
def test_klr_cv_equals_recorded(name, tight):
    est, X, y, X_test = fit(name, tight)
    old = recorded(name + ("_tight" if tight else ""))
    n_tr = X.shape[0] - X.shape[0] // 2
    c = 1 if y.ndim == 2 or np.unique(y).size == 2 else np.unique(y).size
    lams = np.asarray(est.cv_results_["lam"] if y.ndim == 2 else est.cv_results_["lam"])
    # every fold's fit: |Phi| <= n_tr log 2 (Phi(0) = -n_tr log 2 <= Phi* <= 0); a
    # validation output moves by <= r sqrt(2), the log loss of a row by <= c times that
    r_fold = radius(est.tol, n_tr * LOG2, np.min(lams)) * np.sqrt(2.0)
    scores = np.asarray(est.cv_results_["mean_test_score"], dtype=float)
    if name != "cv_pairwise":  # (the coupled log loss has no such simple bound)
        np.testing.assert_allclose(scores, old["cv_scores"], rtol=0, atol=c * r_fold)
    # the choice: the same setting, or one whose recorded score is as good within the bound
    best_old = np.nanmin(old["cv_scores"], axis=-1)
    for t, (s, lam) in enumerate(zip(np.atleast_1d(est.sigma_), np.atleast_1d(est.lam_))):
        row = np.atleast_2d(old["cv_scores"])[t]
        k = np.flatnonzero((est.cv_results_["sigma"] == s) & (est.cv_results_["lam"] == lam))
        assert row[k[0]] <= np.atleast_1d(best_old)[t] + 2.0 * c * r_fold
    same = np.array_equal(np.atleast_1d(est.sigma_), old["sigma"]) and np.array_equal(
        np.atleast_1d(est.lam_), old["lam"]
    )
    if not same:
        return
    n = X.shape[0]
    r_final = radius(est.tol, n * LOG2, np.min(np.atleast_1d(est.lam_))) * np.sqrt(2.0) / 4.0
    if name == "cv_pairwise":
        coupling = est.best_estimator_.coupling_
        check_pairs(coupling, X, np.searchsorted(coupling.classes_, y), old, X_test)
        return
    if name == "cv_ovr":
        Kt = rbf_kernel(X_test, X, est.sigma_) + 1.0
        r_final = normalised_bound(expit(Kt @ old["dual_coef"]), r_final)
    np.testing.assert_allclose(est.predict_proba(X_test), old["proba"], rtol=0, atol=r_final)


@pytest.mark.parametrize("name", list(RIDGE_CASES))
def test_weighted_ridge_equals_recorded(name):
    from kclf import WeightedRidgeLogistic

    data_name, params = RIDGE_CASES[name]
    X, y, X_test = data(data_name)
    est = WeightedRidgeLogistic(**params).fit(X, y)
    old = recorded(name)
    lam, tol = est.lam, est.tol
    # the centred design the solver sees (module docstring of WeightedRidgeLogistic)
    mean = X.mean(axis=0) if est.fit_intercept else np.zeros(X.shape[1])
    A = np.hstack([X - mean, np.ones((X.shape[0], 1))]) if est.fit_intercept else X
    beta_old = old["coef"][: X.shape[1]]
    eta = (X - mean) @ beta_old + (old["coef"][-1] + mean @ beta_old if est.fit_intercept else 0)
    w = expit(eta) * (1.0 - expit(eta))
    mask = np.r_[np.ones(X.shape[1]), 0.0] if est.fit_intercept else np.ones(X.shape[1])
    # the strong concavity near the maximiser (half the Hessian's smallest eigenvalue there)
    mu = 0.5 * np.linalg.eigvalsh(0.5 * (1 - lam) * (A.T * w) @ A + np.diag(lam * mask))[0]
    g_max = tol * max(1.0, abs(float(old["objective"][0])))
    r = 2.0 * np.sqrt(A.shape[1]) * g_max / mu
    At = np.hstack([X_test - mean, np.ones((len(X_test), 1))]) if est.fit_intercept else X_test
    bound = r * np.max(np.linalg.norm(At, axis=1)) / 4.0
    np.testing.assert_allclose(est.predict_proba(X_test), old["proba"], rtol=0, atol=bound)
    new = np.r_[est.coef_[0], est.intercept_]
    assert np.linalg.norm(new[: X.shape[1]] - beta_old) <= r
    # each objective is within ||g||^2 / (2 mu) of the maximum, and its summation loses
    # at most n eps times the sum of its terms' magnitudes
    t = (y == est.classes_[1]).astype(float)
    terms = np.abs(t * eta).sum() + np.logaddexp(0.0, eta).sum()
    round_off = X.shape[0] * np.finfo(float).eps * terms
    gap = A.shape[1] * g_max**2 / (2.0 * mu)
    assert abs(est.objective_ - float(old["objective"][0])) <= 2 * (gap + round_off)


@pytest.mark.parametrize("name", list(LAPLACE_CASES))
def test_laplace_mode_equals_recorded(name):
    """MGPC's Laplace mode stops when its objective ``psi`` (Rasmussen & Williams Eq. 3.12)
    gains less than ``tol``; ``psi`` is 1-strongly concave in the prior's RKHS norm
    ``||f||_K^2 = f^T K^-1 f``, so each mode is within ``sqrt(2 tol)`` of the maximiser,
    two within twice that, and an entry of ``f`` within ``max sqrt(K_ii)`` times it."""
    from kclf.mgpc._solver import laplace_mode

    data_name, tol = LAPLACE_CASES[name]
    X, y, _ = data(data_name)
    K = laplace_prior(X)
    r = laplace_mode(K, 2.0 * y - 1.0, 100, tol)
    old = recorded(name)
    bound = 2.0 * np.sqrt(2.0 * tol) * np.sqrt(K.diagonal().max())
    np.testing.assert_allclose(r["f"], old["f"], rtol=0, atol=bound)
