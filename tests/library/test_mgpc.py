"""ManifoldGPC: MLA against scikit-learn's GPC, EP against brute-force integration."""

import warnings

import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss
from scipy import integrate, stats
from scipy.linalg import solve_triangular
from scipy.special import erf, expit, ndtr
from sklearn.datasets import load_digits, make_classification
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF
from sklearn.gaussian_process.kernels import ConstantKernel as C
from sklearn.utils.estimator_checks import parametrize_with_checks

from kclf.kernels import rbf_kernel
from kclf.mgpc import ManifoldGPC
from kclf.mgpc._evidence_walk import EvidenceWalk
from kclf.mgpc._solver import _COEFS, _LAMBDAS, ep_sites, laplace_mode, logistic_gaussian_integral
from kclf.mgpc.mgpc import DEFAULT_AMPLITUDES


def _data(n=60, p=4, seed=0):
    X, y = make_classification(n, p, n_informative=3, n_redundant=0, random_state=seed)
    Xt, _ = make_classification(25, p, n_informative=3, n_redundant=0, random_state=seed + 1)
    return X, y, Xt


def logistic_erf_mixture(f):
    """Williams & Barber's erf-mixture approximation of the sigmoid itself, from kclf's
    constants (the limit ``var -> 0`` of ``logistic_gaussian_integral``): the oracle of
    the constants' check below."""
    f = np.asarray(f, dtype=float)
    out = (_COEFS * 0.5 * erf(_LAMBDAS * f.ravel())).sum(axis=0) + 0.5 * _COEFS.sum()
    return out.reshape(f.shape)


# ---------------------------------------------------------------- MLA vs scikit-learn


@pytest.mark.parametrize("ls, amp, seed", [(1.5, 3.0, 0), (0.7, 10.0, 1), (3.0, 1.0, 2)])
def test_identity_map_laplace_equals_sklearn_gpc(ls, amp, seed):
    X, y, Xt = _data(seed=seed)
    ours = ManifoldGPC(n_centers=None, length_scale=ls, amplitude=amp, tol=1e-12).fit(X, y)
    ref = GaussianProcessClassifier(C(amp, "fixed") * RBF(ls, "fixed"), optimizer=None).fit(X, y)
    mean, var = ours.predict_latent(Xt, return_var=True)
    ref_mean, ref_var = ref.base_estimator_.latent_mean_and_variance(Xt)
    np.testing.assert_allclose(mean, ref_mean, atol=1e-6, rtol=0)
    np.testing.assert_allclose(var, ref_var, atol=1e-6, rtol=0)
    np.testing.assert_allclose(ours.predict_proba(Xt), ref.predict_proba(Xt), atol=1e-6, rtol=0)
    p = ours.predict_proba(Xt)[:, 1]
    np.testing.assert_allclose(ours.decision_function(Xt), np.log(p / (1 - p)), rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    assert ours.log_marginal_likelihood_ == pytest.approx(ref.log_marginal_likelihood(), abs=1e-6)


@pytest.mark.parametrize("inference", ["laplace", "ep"])
def test_identity_map_on_large_scale_inputs(inference):
    # distances of hundreds: the covariance must not be built from an underflowed exp(-d^2/2)
    X, y, Xt = _data(40)
    X, Xt = 100.0 * X, 100.0 * Xt
    ls = 100.0 * 1.5
    clf = ManifoldGPC(n_centers=None, inference=inference, length_scale=ls, amplitude=4.0)
    clf.fit(X, y)
    ref = ManifoldGPC(n_centers=None, inference=inference, length_scale=1.5, amplitude=4.0)
    ref.fit(X / 100.0, y)
    np.testing.assert_allclose(clf.predict_latent(Xt), ref.predict_latent(Xt / 100.0))
    assert clf.log_marginal_likelihood_ == pytest.approx(ref.log_marginal_likelihood_)


def test_laplace_mode_is_stationary_and_eq5_eq6_hold():
    X, y, Xt = _data(40)
    ypm = 2.0 * y - 1.0
    K = 2.0 * rbf_kernel(X, X, 1.2)
    r = laplace_mode(K, ypm, tol=1e-14)
    # gradient of g(M) = log p(y|M) - M' C^-1 M / 2 vanishes: M = C (t - pi(M))
    np.testing.assert_allclose(r["f"], K @ (y - expit(r["f"])), atol=1e-9)
    clf = ManifoldGPC(n_centers=None, length_scale=1.2, amplitude=2.0, tol=1e-14).fit(X, y)
    Ks = 2.0 * rbf_kernel(X, Xt, 1.2)
    W = expit(r["f"]) * (1 - expit(r["f"]))
    mean_eq5 = Ks.T @ np.linalg.solve(K, r["f"])
    var_eq6 = 2.0 - np.einsum("ij,ij->j", Ks, np.linalg.solve(K + np.diag(1.0 / W), Ks))
    mean, var = clf.predict_latent(Xt, return_var=True)
    np.testing.assert_allclose(mean, mean_eq5, atol=1e-6)
    np.testing.assert_allclose(var, var_eq6, atol=1e-8)


def test_erf_mixture_integral_against_quadrature():
    """The predictive integral int sigma(f) N(f | m, v) df replaces the sigmoid by Williams &
    Barber's mixture s(f) = sum_k c_k Phi(sqrt(2) lambda_k f) (scikit-learn's constants),
    whose Gaussian integral is sum_k c_k Phi(sqrt(2) lambda_k m / sqrt(1 + 2 lambda_k^2 v)).
    Tolerances: |int (sigma - s) N| <= sup |sigma - s|, found here from the constants (not
    from kclf), and the round-off of the mixture, whose terms cancel from |c_k| ~ 3500."""
    from sklearn.gaussian_process._gpc import COEFS, LAMBDAS

    c, lam = COEFS.ravel(), LAMBDAS.ravel()

    def mixture(f):
        return ndtr(np.sqrt(2) * lam[:, None] * np.atleast_1d(f)[None, :]).T @ c

    # sup |sigma - s| on a grid of step h, plus h/2 * max |(sigma - s)'| between nodes
    # (beyond |f| = 40 both are 0 or 1 to 1e-17); the derivative is explicit
    h = 1e-3
    grid = np.arange(-40, 40 + h, h)
    diff = np.abs(expit(grid) - mixture(grid))
    slope = expit(grid) * expit(-grid) - np.exp(-(np.outer(grid, lam) ** 2)) @ (
        c * lam / np.sqrt(np.pi)
    )
    sup_err = diff.max() + h / 2 * np.abs(slope).max()
    assert sup_err < 1e-3  # the mixture's accuracy
    roundoff = 8 * np.abs(c).sum() * np.finfo(float).eps  # about 7e-12
    np.testing.assert_allclose(
        logistic_erf_mixture(grid[::997]), mixture(grid[::997]), atol=roundoff
    )
    for m, v in [(0.0, 1.0), (1.3, 0.2), (-2.0, 5.0), (4.0, 30.0), (-7.0, 0.01)]:
        closed = c @ ndtr(np.sqrt(2) * lam * m / np.sqrt(1 + 2 * lam**2 * v))
        assert logistic_gaussian_integral(m, v) == pytest.approx(closed, abs=roundoff)
        # m +- 12 sd holds all but 2 Phi(-12) ~ 4e-33 of the mass (quad on the whole line
        # can miss a narrow peak)
        exact, quad_err = integrate.quad(
            lambda f, m=m, v=v: expit(f) * stats.norm.pdf(f, m, np.sqrt(v)),
            m - 12 * np.sqrt(v),
            m + 12 * np.sqrt(v),
            epsabs=1e-13,
        )
        assert abs(logistic_gaussian_integral(m, v) - exact) <= sup_err + quad_err + roundoff
    assert logistic_gaussian_integral(0.0, 3.0) == pytest.approx(0.5, abs=sup_err + roundoff)


# ---------------------------------------------------------------- EP


def _gauss_expectation(K, g, n_nodes=60):
    """E[g(f)] for f ~ N(0, K), n <= 3, by a tensor Gauss-Hermite rule on f = L u."""
    n = K.shape[0]
    x, w = hermegauss(n_nodes)
    w = w / np.sqrt(2 * np.pi)
    U = np.stack(np.meshgrid(*([x] * n), indexing="ij"), -1).reshape(-1, n)
    Wt = np.prod(np.stack(np.meshgrid(*([w] * n), indexing="ij"), -1).reshape(-1, n), axis=1)
    F = U @ np.linalg.cholesky(K).T
    return float(Wt @ g(F))


def _true_log_z(K, y):
    return np.log(_gauss_expectation(K, lambda F: np.prod(ndtr(F * y), axis=1)))


def _ep_site_log_z(K, y, r):
    """log int N(f|0,K) prod_i Ztilde_i N(f_i | mutilde_i, 1/tau_i) df by quadrature, with
    Ztilde_i from its definition (the tilted normaliser over the Gaussian's normaliser)."""
    tau, nu = r["tau"], r["nu"]
    mt, vt = nu / tau, 1.0 / tau
    mc, vc = r["cavity_mean"], r["cavity_var"]
    log_zi = np.log(ndtr(y * mc / np.sqrt(1 + vc)))
    log_zt = log_zi - stats.norm.logpdf(mc, mt, np.sqrt(vc + vt))
    integral = _gauss_expectation(K, lambda F: np.prod(stats.norm.pdf(F, mt, np.sqrt(vt)), 1))
    return log_zt.sum() + np.log(integral)


def test_brute_force_integration_matches_orthant_probability():
    # the quadrature used below is itself checked against scipy's MVN CDF:
    # Z = P(y_i (f_i + e_i) > 0) with e ~ N(0, I)
    K = np.array([[1.5, 0.9, 0.4], [0.9, 2.0, 0.7], [0.4, 0.7, 1.0]])
    y = np.array([1.0, -1.0, 1.0])
    D = np.diag(y)
    cdf = stats.multivariate_normal.cdf(
        np.zeros(3), np.zeros(3), D @ (K + np.eye(3)) @ D, abseps=1e-10, releps=1e-10
    )
    assert _true_log_z(K, y) == pytest.approx(np.log(cdf), abs=1e-6)


@pytest.mark.parametrize("k, y", [(0.7, 1.0), (4.0, -1.0), (25.0, 1.0)])
def test_ep_exact_for_one_point(k, y):
    # one site: the tilted distribution is the posterior, so EP's Z and moments are exact;
    # Z = Phi(0) = 1/2, mean = y k N(0) / (Phi(0) sqrt(1 + k)) (R&W Eq. (3.82) with mu = 0)
    r = ep_sites(np.array([[k]]), np.array([y]), tol=1e-12)
    assert r["log_marginal_likelihood"] == pytest.approx(np.log(0.5), abs=1e-12)
    assert r["mu"][0] == pytest.approx(y * k * stats.norm.pdf(0) / (0.5 * np.sqrt(1 + k)))
    assert r["log_marginal_likelihood"] == pytest.approx(
        _true_log_z(np.array([[k]]), np.array([y])), abs=1e-10
    )


@pytest.mark.parametrize("n", [2, 3])
def test_ep_exact_for_diagonal_prior(n):
    # a diagonal K factorises into n one-site problems, each solved exactly by EP
    K = np.diag([0.5, 3.0, 9.0][:n])
    y = np.array([1.0, -1.0, 1.0][:n])
    r = ep_sites(K, y, tol=1e-12)
    exact = n * np.log(0.5)
    assert r["log_marginal_likelihood"] == pytest.approx(exact, abs=1e-10)
    assert r["log_marginal_likelihood"] == pytest.approx(_true_log_z(K, y), abs=1e-9)


@pytest.mark.parametrize(
    "K, y",
    [
        (np.array([[1.0, 0.8], [0.8, 1.0]]), np.array([1.0, -1.0])),
        (np.array([[4.0, 3.0], [3.0, 4.0]]), np.array([1.0, 1.0])),
        (np.array([[1.5, 0.9, 0.4], [0.9, 2.0, 0.7], [0.4, 0.7, 1.0]]), np.array([1.0, -1.0, 1.0])),
        (
            np.array([[6.0, 5.0, 4.0], [5.0, 6.0, 5.0], [4.0, 5.0, 6.0]]),
            np.array([1.0, 1.0, -1.0]),
        ),
    ],
)
def test_ep_log_marginal_likelihood_by_brute_force(K, y):
    r = ep_sites(K, y, tol=1e-13, max_iter=500)
    assert r["converged"]
    # 1. the closed form (R&W Eq. 3.65, stable form) is the integral of EP's approximation
    assert r["log_marginal_likelihood"] == pytest.approx(_ep_site_log_z(K, y, r), abs=1e-8)
    # 2. at EP's fixed point every tilted distribution N(f_i|cavity) Phi(y_i f_i) has the
    #    moments of the posterior marginal (moment matching), checked by 1-D quadrature
    for i in range(len(y)):
        m, s = r["cavity_mean"][i], np.sqrt(r["cavity_var"][i])

        def tilted(f, k, i=i, m=m, s=s):
            return f**k * stats.norm.pdf(f, m, s) * ndtr(y[i] * f)

        z0 = integrate.quad(tilted, -np.inf, np.inf, args=(0,), epsabs=1e-13)[0]
        m1 = integrate.quad(tilted, -np.inf, np.inf, args=(1,), epsabs=1e-13)[0] / z0
        m2 = integrate.quad(tilted, -np.inf, np.inf, args=(2,), epsabs=1e-13)[0] / z0
        assert m1 == pytest.approx(r["mu"][i], abs=1e-8)
        assert m2 - m1**2 == pytest.approx(r["sigma_diag"][i], abs=1e-8)
    # 3. EP approximates (does not equal) the true evidence: for the probit likelihood the
    #    gap on these small problems is known to be small (Kuss & Rasmussen 2005)
    assert abs(r["log_marginal_likelihood"] - _true_log_z(K, y)) < 0.05


def _reference_ep(K, y, tol=1e-13, max_sweeps=2000):
    """R&W Algorithm 3.5 as written, slowly: sites updated one at a time in order, the
    posterior recomputed from scratch (Sigma = (K^-1 + S)^-1 by a dense solve) before every
    site update; stops when a sweep moves no site parameter by more than ``tol``."""
    n = len(y)
    tau, nu = np.zeros(n), np.zeros(n)
    for _ in range(max_sweeps):
        old = np.r_[tau, nu]
        for i in range(n):
            # Sigma = K - K S^1/2 (I + S^1/2 K S^1/2)^-1 S^1/2 K, mu = Sigma nu
            sS = np.sqrt(tau)
            B = np.eye(n) + sS[:, None] * K * sS[None, :]
            Sigma = K - (K * sS) @ np.linalg.solve(B, sS[:, None] * K)
            mu = Sigma @ nu
            tau_c = 1 / Sigma[i, i] - tau[i]
            nu_c = mu[i] / Sigma[i, i] - nu[i]
            m, v = nu_c / tau_c, 1 / tau_c
            z = y[i] * m / np.sqrt(1 + v)
            ratio = stats.norm.pdf(z) / ndtr(z)
            m_hat = m + y[i] * v * ratio / np.sqrt(1 + v)
            v_hat = v - v**2 * ratio * (z + ratio) / (1 + v)
            tau[i] = max(1 / v_hat - tau_c, 0.0)
            nu[i] = m_hat / v_hat - nu_c
        if np.abs(np.r_[tau, nu] - old).max() <= tol:
            return tau, nu
    raise AssertionError("reference EP did not converge")


def _ep_problem(n, amp, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)  # overlapping classes
    return amp * rbf_kernel(X, X, 1.0), y


# the parallel, accelerated iteration stops when the fixed-point equations ask no site
# parameter to move by more than tol (relative to the largest); the distance to the fixed
# point is then at most tol / (1 - rho) for the contraction rho of the EP map near it, under
# 0.99 on these problems: sites within 100 tol of the reference's
@pytest.mark.parametrize("n, amp, seed", [(12, 1.0, 0), (20, 30.0, 1), (25, 300.0, 2)])
def test_ep_fixed_point_equals_sequential_reference(n, amp, seed):
    K, y = _ep_problem(n, amp, seed)
    tau_ref, nu_ref = _reference_ep(K, y)
    tol = 1e-10
    r = ep_sites(K, y, tol=tol, max_iter=500)
    assert r["converged"] and r["residual"] <= tol
    scale = max(1.0, np.abs(tau_ref).max(), np.abs(nu_ref).max())
    np.testing.assert_allclose(r["tau"], tau_ref, atol=100 * tol * scale, rtol=0)
    np.testing.assert_allclose(r["nu"], nu_ref, atol=100 * tol * scale, rtol=0)
    # started elsewhere (the sites of another amplitude): the same fixed point
    other = ep_sites(K / 10.0, y, tol=1e-3)
    warm = ep_sites(K, y, tol=tol, max_iter=500, sites=(other["tau"], other["nu"]))
    np.testing.assert_allclose(warm["tau"], tau_ref, atol=100 * tol * scale, rtol=0)
    np.testing.assert_allclose(warm["nu"], nu_ref, atol=100 * tol * scale, rtol=0)
    # and without acceleration (plain parallel updates) too, if more slowly
    plain = ep_sites(K, y, tol=tol, max_iter=5000, anderson_depth=0)
    np.testing.assert_allclose(plain["tau"], tau_ref, atol=100 * tol * scale, rtol=0)


# tau_i Sigma_ii = 1 - (B^-1)_ii where that difference keeps its digits, K_ii - ||V_i||^2
# (R&W) below _DIRECT_BELOW, including tau_i = 0; against Sigma = (K^-1 + S)^-1 solved
# densely: K's condition number (< 1e4 here) times eps bounds both sides' error
@pytest.mark.parametrize(
    "taus, n_direct",
    [
        (np.zeros(30), 30),  # every column by R&W's formula (the first sweep from tau = 0)
        (np.r_[np.zeros(10), np.full(10, 1e-12), np.logspace(-2, 3, 10)], 20),
        (np.logspace(-1, 4, 30), 0),
    ],
)
def test_ep_posterior_marginals_equal_the_dense_posterior(taus, n_direct):
    from kclf.mgpc._solver import _DIRECT_BELOW, _ep_posterior

    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    K = 2.0 * rbf_kernel(X, X, 1.0) + 0.01 * np.eye(30)
    nu = rng.normal(size=30) * taus
    sigma_diag, mu, factor = _ep_posterior(K, taus, nu)
    L = factor.L
    Sigma = np.linalg.inv(np.linalg.inv(K) + np.diag(taus))
    assert np.linalg.cond(K) < 1e4
    np.testing.assert_allclose(sigma_diag, np.diag(Sigma), rtol=1e-10, atol=0)
    np.testing.assert_allclose(mu, Sigma @ nu, rtol=0, atol=1e-10 * np.abs(Sigma @ nu).max())
    sS = np.sqrt(taus)
    np.testing.assert_allclose(L @ L.T, np.eye(30) + sS[:, None] * K * sS, atol=1e-12)
    # which branch each column took: tau = 0 or tau_i Sigma_ii tiny by R&W's formula
    direct = taus * np.diag(Sigma) < _DIRECT_BELOW
    assert direct.sum() == n_direct


@pytest.mark.parametrize("amp, seed", [(1.0, 0), (30.0, 1)])
def test_ep_evidence_gradient_matches_finite_differences(amp, seed):
    # R&W Eq. (5.27) holds at EP's fixed point: the sites are re-converged at every
    # perturbed point, so the central differences see the sites move too
    from kclf.kernels import squared_distances
    from kclf.mgpc._solver import ep_log_marginal_likelihood_gradient

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(20, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=20) > 0, 1.0, -1.0)
    d2 = squared_distances(X)

    def kernel(theta):  # log length scale, log amplitude, log bias
        ls, a, b = np.exp(theta)
        R = a * np.exp(-0.5 * d2 / ls**2)
        return R + b, [R * d2 / ls**2, R, np.full_like(R, b)]

    def lml(theta):
        return ep_sites(kernel(theta)[0], y, tol=1e-13, max_iter=500)["log_marginal_likelihood"]

    theta = np.log([0.8, amp, 0.5])
    K, dK = kernel(theta)
    grad = ep_log_marginal_likelihood_gradient(K, ep_sites(K, y, tol=1e-13, max_iter=500), dK)
    h = 1e-5
    fd = [(lml(theta + h * e) - lml(theta - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


def test_ep_converges_where_undamped_parallel_updates_oscillate():
    from kclf.mgpc._solver import _ep_step

    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + 0.1 * rng.normal(size=60) > 0, 1.0, -1.0)  # nearly separable
    K = 1000.0 * rbf_kernel(X, X, 2.0)
    # every site to its moment-matching value at once, no damping: never settles
    tau, nu = np.zeros(60), np.zeros(60)
    for _ in range(300):
        tau_t, nu_t, _ = _ep_step(K, y, tau, nu, np.ones(60))
        change = max(np.abs(tau_t - tau).max(), np.abs(nu_t - nu).max())
        tau, nu = tau_t, nu_t
    assert change > 1e-3
    tol = 1e-10
    r = ep_sites(K, y, tol=tol, max_iter=100)
    assert r["converged"]
    tau_ref, nu_ref = _reference_ep(K, y)
    scale = max(1.0, np.abs(tau_ref).max(), np.abs(nu_ref).max())
    np.testing.assert_allclose(r["tau"], tau_ref, atol=100 * tol * scale, rtol=0)
    np.testing.assert_allclose(r["nu"], nu_ref, atol=100 * tol * scale, rtol=0)


@pytest.mark.parametrize("amplitude, seed", [([1.0, 8.0, 64.0], 4), (None, 3)])
def test_fitted_sites_equal_sequential_reference_after_the_grid_search(amplitude, seed):
    # the estimator's final sites (searched on the grid at search_tol, then refined to tol;
    # with the default amplitudes, after the bisection's EP runs) are EP's fixed point at
    # the chosen hyper-parameters
    X, y, _ = _data(25, seed=seed)
    tol = 1e-10
    clf = ManifoldGPC(
        n_centers=None,
        inference="ep",
        length_scale=[0.5, 1.0, 2.0],
        amplitude=amplitude,
        tol=tol,
        max_iter=500,
    ).fit(X, y)
    if amplitude is None:  # the bisection chose an amplitude the walk did not visit
        assert DEFAULT_AMPLITUDES.index(clf.amplitude_) % 2 == 1
    X, y = X[clf.train_rows_], y[clf.train_rows_]  # the order of the fitted sites
    K = clf.amplitude_ * rbf_kernel(X, X, clf.length_scale_)
    tau_ref, nu_ref = _reference_ep(K, 2.0 * y - 1.0)
    scale = max(1.0, np.abs(tau_ref).max(), np.abs(nu_ref).max())
    np.testing.assert_allclose(clf.sqrt_w_**2, tau_ref, atol=100 * tol * scale, rtol=0)
    # the predictive weights of R&W Algorithm 3.6: (K + S^-1)^-1 S^-1 nu = alpha
    alpha_ref = np.linalg.solve(K * tau_ref[:, None] + np.eye(len(y)), nu_ref)
    np.testing.assert_allclose(clf.alpha_, alpha_ref, atol=1e-6, rtol=0)


def test_laplace_and_ep_on_a_separable_toy():
    # two well separated blobs: both approximations classify every point, and EP, whose
    # approximation matches the posterior's moments, is the more confident; Laplace's
    # evidence (a Gaussian around the mode of a skewed posterior) is the lower
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(-2.0, 0.5, size=(20, 2)), rng.normal(2.0, 0.5, size=(20, 2))]
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    Xt = np.r_[rng.normal(-2.0, 0.5, size=(10, 2)), rng.normal(2.0, 0.5, size=(10, 2))]
    yt = np.r_[np.zeros(10, int), np.ones(10, int)]
    kw = dict(n_centers=None, length_scale=1.5, amplitude=16.0)
    la = ManifoldGPC(inference="laplace", **kw).fit(X, y)
    ep = ManifoldGPC(inference="ep", **kw).fit(X, y)
    for clf in (la, ep):
        assert clf.score(X, y) == 1.0 and clf.score(Xt, yt) == 1.0
    p_la, p_ep = la.predict_proba(Xt)[np.arange(20), yt], ep.predict_proba(Xt)[np.arange(20), yt]
    assert (p_ep > p_la).all()
    assert ep.log_marginal_likelihood_ > la.log_marginal_likelihood_


def test_ep_prediction_is_eq8():
    X, y, Xt = _data(30)
    ypm = 2.0 * y - 1.0
    K = 3.0 * rbf_kernel(X, X, 1.1)
    r = ep_sites(K, ypm, tol=1e-12)
    clf = ManifoldGPC(
        n_centers=None, inference="ep", length_scale=1.1, amplitude=3.0, tol=1e-12
    ).fit(X, y)
    Ks = 3.0 * rbf_kernel(X, Xt, 1.1)
    A = K + np.diag(1.0 / r["tau"])
    mean = Ks.T @ np.linalg.solve(A, r["nu"] / r["tau"])
    var = 3.0 - np.einsum("ij,ij->j", Ks, np.linalg.solve(A, Ks))
    m, v = clf.predict_latent(Xt, return_var=True)
    np.testing.assert_allclose(m, mean, atol=1e-7)
    np.testing.assert_allclose(v, var, atol=1e-7)
    np.testing.assert_allclose(
        clf.predict_proba(Xt)[:, 1], ndtr(mean / np.sqrt(1 + var)), atol=1e-7
    )


# ---------------------------------------------------------------- feature map, hyper-parameters


def test_feature_map_is_kernel_to_seeded_kmeans_centres():
    X, y, Xt = _data(50)
    a = ManifoldGPC(n_centers=6, sigma=2.0, length_scale=1.0, amplitude=1.0, random_state=3)
    b = ManifoldGPC(n_centers=6, sigma=2.0, length_scale=1.0, amplitude=1.0, random_state=3)
    a.fit(X, y)
    b.fit(X, y)
    np.testing.assert_array_equal(a.centers_, b.centers_)
    assert a.centers_.shape == (6, X.shape[1])
    np.testing.assert_allclose(a.Z_train_, rbf_kernel(X[a.train_rows_], a.centers_, 2.0))
    np.testing.assert_array_equal(np.sort(a.train_rows_), np.arange(len(y)))
    # every centre is the mean of the training points closest to it (k-means fixed point)
    lab = np.argmin(((X[:, None, :] - a.centers_[None]) ** 2).sum(-1), axis=1)
    for j in range(6):
        np.testing.assert_allclose(a.centers_[j], X[lab == j].mean(0), atol=1e-6)


@pytest.mark.parametrize("inference", ["laplace", "ep"])
def test_grid_choice_maximises_marginal_likelihood(inference):
    X, y, _ = _data(40)
    ls, amp = [0.5, 1.0, 2.0], [1.0, 8.0]
    kw = dict(n_centers=None, inference=inference)
    # search_tol=tol: every grid point's EP to the full tolerance
    clf = ManifoldGPC(length_scale=ls, amplitude=amp, search_tol=1e-8, **kw).fit(X, y)
    assert clf.hyperparameter_scores_.shape == (1, 3, 2)
    _, i, j = np.unravel_index(np.argmax(clf.hyperparameter_scores_), (1, 3, 2))
    assert (clf.length_scale_, clf.amplitude_) == (ls[i], amp[j])
    # the default search: EP's grid points to search_tol=1e-3, the chosen one refined; its
    # scores are off by about the square of the sites' error (the evidence is stationary
    # in the sites at EP's fixed point)
    fast = ManifoldGPC(length_scale=ls, amplitude=amp, **kw).fit(X, y)
    assert (fast.length_scale_, fast.amplitude_) == (ls[i], amp[j])
    assert fast.log_marginal_likelihood_ == pytest.approx(clf.log_marginal_likelihood_, abs=1e-9)
    np.testing.assert_allclose(
        fast.hyperparameter_scores_, clf.hyperparameter_scores_, atol=1e-5, rtol=0
    )
    for i, a in enumerate(ls):
        for j, b in enumerate(amp):
            single = ManifoldGPC(length_scale=a, amplitude=b, **kw)
            lml = single.fit(X, y).log_marginal_likelihood_
            assert clf.hyperparameter_scores_[0, i, j] == pytest.approx(lml, abs=1e-9)


def _check_walk(values, start, seen):
    """``seen`` (sorted indices of ``values`` visited) is one run from ``start`` up to the
    grid's edge or the first fall, and down from ``start`` to the edge or the first fall
    only if the first step up did not rise (unimodal: the maximum is then not above).
    Returns whether the way down was skipped."""
    lo, hi = seen[0], seen[-1]
    assert start in seen and (np.diff(seen) == 1).all()
    assert hi == len(values) - 1 or values[hi] < values[hi - 1]
    assert (np.diff(values[start:hi]) >= 0).all()  # no fall before the top end
    if start + 1 < len(values) and values[start + 1] > values[start]:
        assert lo == start
        return start > 0
    assert lo == 0 or values[lo] < values[lo + 1]
    assert (np.diff(values[lo + 1 : start + 1]) <= 0).all()
    return False


@pytest.mark.parametrize("inference, seed", [("laplace", 1), ("ep", 0)])
def test_the_grid_walk_stops_at_the_first_falls(inference, seed):
    # amplitudes along a row, and length scales by their rows' best evidence, are walked
    # out from a start until the evidence first falls (downwards only where the first
    # step up did not rise)
    X, y, _ = _data(40, seed=seed)
    ls, amp = list(2.0 ** np.arange(-3, 4)), list(4.0 ** np.arange(7))
    kw = dict(n_centers=None, inference=inference, search_tol=1e-8)
    clf = ManifoldGPC(length_scale=ls, amplitude=amp, **kw).fit(X, y)
    full = np.array(
        [
            [
                ManifoldGPC(length_scale=a, amplitude=b, **kw).fit(X, y).log_marginal_likelihood_
                for b in amp
            ]
            for a in ls
        ]
    )
    scores = clf.hyperparameter_scores_[0]
    rows = np.flatnonzero(np.isfinite(scores).any(axis=1))
    middle = len(ls) // 2
    # rows and amplitudes did stop short (else this test tests nothing)
    assert len(rows) < len(ls) and np.isinf(scores[rows]).any()
    row_best = scores.max(axis=1)
    skipped = [_check_walk(row_best, middle, rows)]
    for i in rows:
        seen = np.flatnonzero(np.isfinite(scores[i]))
        np.testing.assert_allclose(scores[i, seen], full[i, seen], atol=1e-9, rtol=0)
        # the middle row starts in the middle, the others at the best amplitude of their
        # neighbour towards the middle
        start = len(amp) // 2 if i == middle else np.argmax(scores[i - np.sign(i - middle)])
        skipped.append(_check_walk(full[i], start, seen))
    assert any(skipped)  # a way down was skipped somewhere (else that rule is untested)
    # on this data the evidence is unimodal along every row and across the rows' best:
    # the walk finds the full grid's maximum
    i, j = np.unravel_index(np.argmax(full), full.shape)
    assert (clf.length_scale_, clf.amplitude_) == (ls[i], amp[j])


@pytest.mark.parametrize(
    "inference, seed, ls, case",
    [
        ("ep", 2, 4.0, "above"),
        ("laplace", 2, 1.0, "above"),
        ("ep", 1, 2.0, "below"),
        ("laplace", 0, 1.0, "below"),
        ("ep", 1, 4.0, "kept"),
        ("laplace", 1, 1.0, "kept"),
        ("ep", 0, 2.0, "kept"),  # the grid's first amplitude
        ("ep", 0, 0.5, "kept"),  # its last
    ],
)
def test_default_amplitudes_walked_coarse_then_bisected(inference, seed, ls, case):
    # amplitude=None: 1, 2, 4, ..., 4096 walked at every other value, then the chosen
    # amplitude's neighbour above tried, and the one below only if that did not improve;
    # with the evidence unimodal along the row this is the full grid's best amplitude
    X, y, _ = _data(40, seed=seed)
    kw = dict(n_centers=None, inference=inference, length_scale=ls)
    clf = ManifoldGPC(**kw).fit(X, y)
    amps = np.asarray(DEFAULT_AMPLITUDES)
    assert amps.size == 13 and np.allclose(amps[1:] / amps[:-1], 2.0)
    full = np.array(
        [ManifoldGPC(amplitude=a, **kw).fit(X, y).log_marginal_likelihood_ for a in amps]
    )
    assert (np.diff(np.sign(np.diff(full))) <= 0).all()  # unimodal, so the claim applies
    best = int(np.argmax(full))
    assert clf.amplitude_ == amps[best]
    assert clf.log_marginal_likelihood_ == pytest.approx(full[best], abs=1e-6)
    scores = clf.hyperparameter_scores_[0, 0]
    assert scores.shape == (13,)
    coarse = 2 * int(np.argmax(scores[::2]))  # the walk's choice
    tried = list(np.flatnonzero(np.isfinite(scores[1::2])) * 2 + 1)
    above, below = coarse + 1, coarse - 1
    expected = {"above": best == above, "below": best == below, "kept": best == coarse}
    assert expected[case]
    expect = [above] if above < 13 else []
    if best != above and below >= 0:
        expect.append(below)
    assert tried == sorted(expect)
    # the tried points' EP ran to search_tol: off by about the square of the sites' error
    np.testing.assert_allclose(scores[tried], full[tried], atol=1e-4, rtol=0)
    # a given grid is walked as given: every point a candidate, none added
    given = ManifoldGPC(amplitude=amps[::2], **kw).fit(X, y)
    assert given.hyperparameter_scores_.shape == (1, 1, 7)
    assert given.amplitude_ == amps[coarse]


@pytest.mark.parametrize("inference", ["laplace", "ep"])
def test_the_walk_keeps_at_most_two_rows_of_factors(inference, monkeypatch):
    # a row's n x n factors (one per amplitude visited) are dropped once read: when a row
    # starts, at most the previous row and the best one so far are alive, however many
    # rows the walk visits
    import gc
    import weakref

    X, y, _ = _data(40)
    rows, alive_at_start = [], []
    search_row = EvidenceWalk.row

    def watched(self, R, *args):
        gc.collect()
        alive_at_start.append(sum(any(ref() is not None for ref in row) for row in rows))
        row = search_row(self, R, *args)
        rows.append([weakref.ref(r["L"]) for r, _, _ in row.values()])
        return row

    monkeypatch.setattr(EvidenceWalk, "row", watched)
    clf = ManifoldGPC(
        n_centers=(5, None),
        inference=inference,
        length_scale=list(2.0 ** np.arange(-3, 4)),
        amplitude=[1.0, 8.0],
        random_state=0,
    ).fit(X, y)
    assert len(rows) >= 5  # enough rows that keeping them all would show
    assert max(alive_at_start) <= 2
    assert np.isfinite(clf.log_marginal_likelihood_)


def test_feature_map_width_grid_is_searched_jointly():
    X, y, _ = _data(40)
    sigmas = [0.5, 2.0, 8.0]
    kw = dict(n_centers=5, length_scale=[0.3, 1.0], amplitude=[1.0, 8.0], random_state=0)
    clf = ManifoldGPC(sigma=sigmas, **kw).fit(X, y)
    assert clf.hyperparameter_scores_.shape == (3, 2, 2)
    h = np.unravel_index(np.argmax(clf.hyperparameter_scores_), (3, 2, 2))[0]
    assert clf.sigma_ == sigmas[h]
    single = ManifoldGPC(sigma=sigmas[h], **kw).fit(X, y)
    assert single.log_marginal_likelihood_ == pytest.approx(clf.log_marginal_likelihood_)
    np.testing.assert_allclose(single.decision_function(X), clf.decision_function(X))


@pytest.mark.parametrize("inference", ["laplace", "ep"])
@pytest.mark.parametrize("seed, maps, winner", [(2, (5, None), None), (7, (None, 5, 12), 12)])
def test_feature_maps_are_searched_by_the_evidence(inference, seed, maps, winner):
    # a sequence of n_centers: the map (with its width, length scale and amplitude) whose
    # grid point has the highest evidence, the same model as fitting that map alone
    X, y, Xt = _data(40, seed=seed)
    kw = dict(inference=inference, sigma=[0.5, 2.0], random_state=0)
    clf = ManifoldGPC(n_centers=maps, **kw).fit(X, y)
    # one row per map and width: two widths per k-means map, one for the identity
    assert clf.hyperparameter_scores_.shape[0] == sum(1 if m is None else 2 for m in maps)
    alone = {m: ManifoldGPC(n_centers=m, **kw).fit(X, y) for m in maps}
    best = max(maps, key=lambda m: alone[m].log_marginal_likelihood_)
    assert clf.n_centers_ == best == winner  # both kinds of map win one of the cases
    assert (clf.centers_ is None) == (best is None)
    single = alone[best]
    assert (clf.sigma_, clf.length_scale_, clf.amplitude_) == (
        single.sigma_,
        single.length_scale_,
        single.amplitude_,
    )
    # EP's sites at the chosen point are refined to tol from either search's sites
    assert clf.log_marginal_likelihood_ == pytest.approx(single.log_marginal_likelihood_, abs=1e-6)
    np.testing.assert_allclose(clf.predict_proba(Xt), single.predict_proba(Xt), atol=1e-6)
    # each map's rows hold the evidence that map's own search found (up to search_tol
    # in EP's sites: its search starts from the previous map's best sites)
    rows = iter(clf.hyperparameter_scores_)
    for m in maps:
        own = alone[m].hyperparameter_scores_
        for r in own:
            got = next(rows)
            seen = np.isfinite(got) & np.isfinite(r)
            assert seen.any()
            np.testing.assert_allclose(got[seen], r[seen], atol=1e-3)
    assert (ManifoldGPC(n_centers=5, **kw).fit(X, y).n_centers_) == 5


@pytest.mark.parametrize("inference", ["laplace", "ep"])
def test_digits_3_vs_8(inference):
    d = load_digits()
    m = np.isin(d.target, (3, 8))
    X, y = d.data[m] / 16.0, d.target[m]
    idx = np.random.default_rng(0).permutation(len(y))
    tr, te = idx[: len(y) // 2], idx[len(y) // 2 :]
    clf = ManifoldGPC(n_centers=20, inference=inference, random_state=0).fit(X[tr], y[tr])
    assert clf.score(X[te], y[te]) >= 0.95
    proba = clf.predict_proba(X[te])
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_array_equal(clf.classes_[(proba[:, 1] > 0.5).astype(int)], clf.predict(X[te]))


# ---------------------------------------------------------------- input validation


def test_centres_capped_at_the_distinct_training_rows():
    """k-means places at most one centre per distinct row; there the centres are the
    training points themselves (each its own cluster), the representer theorem's
    expansion.  The default (20, None) thus fits 8 distinct rows (16 with repeats), and
    n_centers=(20, 30) searches the one capped map once."""
    X, y, Xt = _data(8)
    X, y = np.r_[X, X], np.r_[y, y]
    kw = dict(length_scale=1.0, amplitude=4.0, random_state=0)
    capped = ManifoldGPC(n_centers=20, **kw).fit(X, y)
    assert capped.n_centers_ == 8
    # each centre the mean of a row and its repeat, by k-means' sums: within an ulp or two
    np.testing.assert_allclose(
        np.sort(capped.centers_, axis=0),
        np.sort(np.unique(X, axis=0), axis=0),
        rtol=0,
        atol=4 * np.spacing(np.abs(X).max()),
    )
    exact = ManifoldGPC(n_centers=8, **kw).fit(X, y)
    np.testing.assert_array_equal(capped.predict_proba(Xt), exact.predict_proba(Xt))
    both = ManifoldGPC(n_centers=(20, 30), **kw).fit(X, y)
    assert both.hyperparameter_scores_.shape[0] == 1 and both.n_centers_ == 8
    default = ManifoldGPC(random_state=0).fit(X, y)
    assert default.n_centers_ in (8, None)
    assert np.isfinite(default.predict_proba(Xt)).all()


def test_bad_input():
    X, y, _ = _data(30)
    with pytest.raises(ValueError, match="at least two classes in y, got one class"):
        ManifoldGPC(n_centers=3).fit(X, np.zeros(30))
    with pytest.raises(ValueError, match="Unknown label type"):
        ManifoldGPC(n_centers=3).fit(X, np.linspace(0, 1, 30))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ManifoldGPC(n_centers=3).fit(Xn, y)
    with pytest.raises(ValueError, match="'n_centers' parameter"):
        ManifoldGPC(n_centers=0).fit(X, y)
    for maps in [(3, 0), (3, "a"), (3, 2.5)]:
        with pytest.raises(ValueError, match="n_centers entries must be ints >= 1 or None"):
            ManifoldGPC(n_centers=maps).fit(X, y)
    with pytest.raises(ValueError, match="repeated entries"):
        ManifoldGPC(n_centers=(3, None, 3)).fit(X, y)
    with pytest.raises(ValueError, match="empty sequence"):
        ManifoldGPC(n_centers=()).fit(X, y)
    with pytest.raises(ValueError, match="'inference' parameter"):
        ManifoldGPC(inference="vb").fit(X, y)
    with pytest.raises(ValueError, match="length_scale must be"):
        ManifoldGPC(n_centers=None, length_scale=[1.0, -1.0]).fit(X, y)
    with pytest.raises(ValueError, match="'sigma' parameter"):
        ManifoldGPC(n_centers=3, sigma=0.0).fit(X, y)


@parametrize_with_checks(
    [
        ManifoldGPC(n_centers=3, length_scale=1.0, amplitude=[1.0, 4.0], random_state=0),
        ManifoldGPC(n_centers=3, inference="ep", amplitude=4.0, max_iter=20, random_state=0),
        ManifoldGPC(n_centers=None, length_scale=[1.0, 3.0], amplitude=4.0),
        ManifoldGPC(n_centers=3, inference="ep", amplitude=4.0, n_inducing=5, random_state=0),
    ]
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        check(estimator)


def test_random_state_none_is_deterministic():
    """k-means once drew its initialisation from NumPy's global generator
    when random_state=None, so two fits of the same data differed."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 4))  # no cluster structure: k-means' optimum depends on its start
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    kw = dict(n_centers=10, length_scale=1.0, amplitude=4.0)
    P = [ManifoldGPC(**kw).fit(X, y).predict_proba(X) for _ in range(3)]
    for p in P[1:]:
        np.testing.assert_array_equal(p, P[0])
    np.testing.assert_array_equal(
        ManifoldGPC(**kw, random_state=0).fit(X, y).predict_proba(X), P[0]
    )


def test_identity_map_keeps_a_copy_of_the_training_inputs():
    X, y, Xt = _data(40)
    X_caller = X.copy()
    clf = ManifoldGPC(n_centers=None, length_scale=1.5, amplitude=4.0).fit(X_caller, y)
    before = clf.predict_proba(Xt)
    X_caller += 3.0
    np.testing.assert_array_equal(clf.predict_proba(Xt), before)


# ---------------------------------------------------------------- sample weights


def _repeat_problem(n=12, seed=0, amp=6.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.6 * rng.normal(size=n) > 0, 1.0, -1.0)
    w = rng.integers(1, 4, size=n)
    idx = np.repeat(np.arange(n), w)
    return amp * rbf_kernel(X, X, 1.3), y, w, idx, X


def _predict(K, Ks, kss, alpha, sqrt_w, L):
    """Eq. (5)-(6): the predictive mean and variance from a posterior's alpha, W^1/2, L."""
    v = solve_triangular(L, sqrt_w[:, None] * Ks, lower=True)
    return Ks.T @ alpha, kss - np.einsum("ij,ij->j", v, v)


@pytest.mark.parametrize("inference", ["laplace", "ep"])
def test_integer_weights_are_repeated_rows_in_the_inference(inference):
    """Copies of an input share one latent value: Laplace's weighted log-likelihood and EP's
    weighted sites (whose cavity removes one copy) give the posterior, the evidence and the
    predictions of the repeated rows (solved here on the singular covariance of the
    copies, no deduplication)."""
    from kclf.mgpc._solver import infer

    K, y, w, idx, X = _repeat_problem()
    Xt = np.random.default_rng(9).normal(size=(7, 2))
    Ks, kss = 6.0 * rbf_kernel(X, Xt, 1.3), np.full(7, 6.0)
    tol = 1e-12
    rep, a_rep, sw_rep = infer(inference, K[np.ix_(idx, idx)], y[idx], 500, tol)
    wtd, a_wtd, sw_wtd = infer(inference, K, y, 500, tol, sample_weight=w.astype(float))
    assert rep["converged"] and wtd["converged"]
    assert wtd["log_marginal_likelihood"] == pytest.approx(rep["log_marginal_likelihood"], abs=1e-9)
    mean_r, var_r = _predict(None, Ks[idx], kss, a_rep, sw_rep, rep["L"])
    mean_w, var_w = _predict(None, Ks, kss, a_wtd, sw_wtd, wtd["L"])
    np.testing.assert_allclose(mean_w, mean_r, atol=1e-9)
    np.testing.assert_allclose(var_w, var_r, atol=1e-9)
    if inference == "ep":  # every copy holds the weighted row's site
        np.testing.assert_allclose(rep["tau"], wtd["tau"][idx], atol=1e-9)
        np.testing.assert_allclose(rep["nu"], wtd["nu"][idx], atol=1e-9)
    else:
        np.testing.assert_allclose(rep["f"], wtd["f"][idx], atol=1e-9)


def test_weighted_laplace_mode_is_stationary():
    # the mode of sum_i s_i log sigma(y_i f_i) - f' K^-1 f / 2: f = K s (t - pi(f))
    K, y, _, _, _ = _repeat_problem(seed=1)
    s = np.random.default_rng(2).uniform(0.1, 3.0, size=len(y))
    r = laplace_mode(K, y, tol=1e-14, sample_weight=s)
    np.testing.assert_allclose(r["f"], K @ (s * ((y + 1) / 2 - expit(r["f"]))), atol=1e-9)


@pytest.mark.parametrize("amp", [1.0, 100.0, 4096.0])
def test_fractional_ep_weights_reach_a_fixed_point(amp):
    """Weights of at least one need not be integers: EP's fixed point with the cavity that
    removes one copy (power EP, power 1 / s_i) has proper cavities and matches every
    tilted distribution's moments."""
    from kclf.mgpc._solver import _ep_step

    K, y, _, _, _ = _repeat_problem(n=30, seed=3, amp=amp)
    s = np.random.default_rng(0).uniform(1.0, 5.0, size=len(y))
    r = ep_sites(K, y, tol=1e-10, max_iter=500, sample_weight=s)
    assert r["converged"] and np.isfinite(r["log_marginal_likelihood"])
    assert np.all(1 / r["sigma_diag"] - r["tau"] > 0)
    tau_t, nu_t, _ = _ep_step(K, y, r["tau"], r["nu"], s)
    scale = max(1.0, np.abs(r["tau"]).max(), np.abs(r["nu"]).max())
    np.testing.assert_allclose(tau_t, r["tau"], atol=1e-8 * scale)
    np.testing.assert_allclose(nu_t, r["nu"], atol=1e-8 * scale)


def test_ep_weights_below_one_are_refused():
    """Below one the cavity removes more of a site than the posterior holds: parallel EP
    then meets cavities of negative precision (here from the first sweep), so the
    estimator refuses such weights for EP in one line (Laplace takes any weight)."""
    X, y, _ = _data(30)
    w = np.full(30, 1 / 30)
    with pytest.raises(ValueError, match="inference='ep' needs every positive sample_weight >= 1"):
        ManifoldGPC(n_centers=None, inference="ep", amplitude=4.0).fit(X, y, sample_weight=w)
    clf = ManifoldGPC(n_centers=None, amplitude=4.0, length_scale=1.0).fit(X, y, sample_weight=w)
    assert np.isfinite(clf.log_marginal_likelihood_)
    K, ypm = 6.0 * rbf_kernel(X, X, 1.0), 2.0 * y - 1.0
    r = ep_sites(K, ypm, sample_weight=w)  # the solver itself says so: no evidence
    assert not r["converged"] and r["log_marginal_likelihood"] == -np.inf


@pytest.mark.parametrize(
    "kw",
    [
        dict(n_centers=None, length_scale=[0.7, 1.5], amplitude=[2.0, 8.0]),
        dict(n_centers=None, inference="ep", length_scale=1.2, amplitude=[2.0, 8.0]),
        dict(n_centers=4, random_state=0, amplitude=[1.0, 4.0]),
        dict(n_centers=(4, None), inference="ep", random_state=0, amplitude=4.0),
        # the sparse path: inducing inputs drawn from the distinct inputs, the same ones
        dict(n_centers=None, n_inducing=8, random_state=0, length_scale=[0.7, 1.5]),
        dict(n_centers=(4, None), inference="ep", n_inducing=8, random_state=1, amplitude=4.0),
    ],
)
def test_integer_weights_are_repeated_rows_and_zero_weights_dropped_rows(kw):
    X, y, Xt = _data(30, seed=4)
    w = np.random.default_rng(4).integers(0, 4, size=30)
    perm = np.random.default_rng(5).permutation(30)
    weighted = ManifoldGPC(**kw).fit(X[perm], y[perm], sample_weight=w[perm])
    repeated = ManifoldGPC(**kw).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_array_equal(weighted.predict_proba(Xt), repeated.predict_proba(Xt))
    assert weighted.log_marginal_likelihood_ == repeated.log_marginal_likelihood_


# ---------------------------------------------------------------- several classes


@pytest.mark.parametrize("n_inducing", [None, 30])
@pytest.mark.parametrize("inference", ["laplace", "ep"])
def test_three_classes_are_one_against_the_rest(inference, n_inducing):
    from sklearn.datasets import load_iris
    from sklearn.multiclass import OneVsRestClassifier

    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    idx = rng.permutation(150)
    tr, te = idx[:90], idx[90:]
    kw = dict(n_centers=6, inference=inference, amplitude=[1.0, 4.0, 16.0], random_state=0)
    kw["n_inducing"] = n_inducing
    ours = ManifoldGPC(**kw).fit(X[tr], y[tr])
    ref = OneVsRestClassifier(ManifoldGPC(**kw)).fit(X[tr], y[tr])
    P = ours.predict_proba(X[te])
    np.testing.assert_allclose(P, ref.predict_proba(X[te]), rtol=0, atol=1e-14)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(ours.classes_, [0, 1, 2])
    np.testing.assert_array_equal(ours.predict(X[te]), ref.predict(X[te]))
    assert np.mean(ours.predict(X[te]) == y[te]) > 0.9
    D = ours.decision_function(X[te])
    assert D.shape == (60, 3)
    np.testing.assert_array_equal(np.argmax(D, axis=1), np.argmax(P, axis=1))
    for c in range(3):
        _ranks_consistently(D[:, c], P[:, c])
    np.testing.assert_array_equal(
        ours.log_marginal_likelihood_, [e.log_marginal_likelihood_ for e in ref.estimators_]
    )


# ---------------------------------------------------------------- scores and probabilities


def _ranks_consistently(score, p):
    """Where p differs the score is strictly increasing in it."""
    order = np.lexsort((score, p))
    assert np.all(np.diff(score[order])[np.diff(p[order]) > 0] > 0)


@pytest.mark.parametrize("inference", ["laplace", "ep"])
def test_decision_function_ranks_as_predict_proba(inference):
    """The latent mean alone ranked rows otherwise (AUC 0.974 against 0.969 in the issue);
    the log-odds of the probability rank as it does, and the roc_auc scorer (which calls
    decision_function first) gives the probabilities' AUC."""
    from sklearn.metrics import get_scorer, roc_auc_score

    X, y = make_classification(300, 6, n_informative=3, flip_y=0.1, random_state=1)
    clf = ManifoldGPC(n_centers=8, inference=inference, random_state=0).fit(X[:150], y[:150])
    Xt = np.vstack([X[150:], 40.0 * X[150:160]])  # far rows: probabilities near 0 or 1
    p, d = clf.predict_proba(Xt)[:, 1], clf.decision_function(Xt)
    assert np.all(np.isfinite(d))
    _ranks_consistently(d, p)
    np.testing.assert_array_equal(clf.classes_[(d > 0).astype(int)], clf.predict(Xt))
    auc = roc_auc_score(y[150:], clf.predict_proba(X[150:])[:, 1])
    assert get_scorer("roc_auc")(clf, X[150:], y[150:]) == pytest.approx(auc, abs=1e-15)
    mean = clf.predict_latent(X[150:])
    assert roc_auc_score(y[150:], mean) != auc  # why decision_function is not the mean


# ---------------------------------------------------------------- sparse input, any scale


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize(
    "kw",
    [
        dict(n_centers=5, random_state=0, length_scale=1.0, amplitude=[1.0, 4.0]),
        dict(n_centers=None, inference="ep", amplitude=4.0),
        dict(n_centers=(5, None), inference="ep", amplitude=4.0, n_inducing=20, random_state=0),
    ],
)
def test_sparse_input_equals_dense(kw, fmt):
    from scipy import sparse

    rng = np.random.default_rng(3)
    X = rng.uniform(size=(50, 10)) * (rng.uniform(size=(50, 10)) < 0.4)
    y = (X[:, :3].sum(axis=1) > 0.4).astype(int)
    Xt = rng.uniform(size=(15, 10)) * (rng.uniform(size=(15, 10)) < 0.4)
    dense = ManifoldGPC(**kw).fit(X, y)
    sp = ManifoldGPC(**kw).fit(sparse.csr_array(X).asformat(fmt), y)
    for Xq in (sparse.csr_array(Xt).asformat(fmt), Xt):
        np.testing.assert_allclose(sp.predict_proba(Xq), dense.predict_proba(Xt), atol=1e-9)


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1e-8, 1e8, 1e150, 1e300])
@pytest.mark.parametrize("n_centers, n_inducing", [((20, None), None), (None, None), (None, 15)])
def test_any_scale_of_the_features_gives_the_same_probabilities(scale, n_centers, n_inducing):
    X, y, Xt = _data(40, seed=6)
    kw = dict(n_centers=n_centers, amplitude=[1.0, 4.0, 16.0], random_state=0)
    kw["n_inducing"] = n_inducing
    base = ManifoldGPC(**kw).fit(X, y)
    scaled = ManifoldGPC(**kw).fit(X * scale, y)
    P = scaled.predict_proba(Xt * scale)
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P, base.predict_proba(Xt), atol=1e-8)


# ---------------------------------------------------------------- the sparse path (FITC)


def _fitc_problem(n=40, m=9, seed=0, ls=1.2):
    """Rows, labels, inducing inputs and the FITC covariance of unit amplitude, with
    ``K~ = Q + diag(K - Q)`` formed densely from its definition (``K_mm^-1`` by numpy's
    inverse) as the reference."""
    from kclf.mgpc._fitc import FITCCovariance

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=n) > 0, 1.0, -1.0)
    Xu = X[rng.choice(n, m, replace=False)]
    Knm, Kmm = rbf_kernel(X, Xu, ls), rbf_kernel(Xu, Xu, ls)
    Q = Knm @ np.linalg.inv(Kmm) @ Knm.T
    K_fitc = Q + np.diag(1.0 - np.diag(Q))
    return X, y, Xu, FITCCovariance.from_kernels(Knm, Kmm), K_fitc


def test_fitc_covariance_is_nystrom_plus_the_missing_diagonal():
    from kclf.mgpc._fitc import FITCCovariance

    X, _, Xu, R, K_fitc = _fitc_problem()
    assert np.linalg.cond(rbf_kernel(Xu, Xu, 1.2)) < 1e6  # the reference's inverse is sound
    np.testing.assert_allclose(R.V @ R.V.T + np.diag(R.d), K_fitc, atol=1e-10)
    np.testing.assert_allclose(R.diagonal(), 1.0, atol=1e-12)  # the prior variances kept
    x = np.random.default_rng(1).normal(size=40)
    np.testing.assert_allclose((3.0 * R) @ x, 3.0 * K_fitc @ x, atol=1e-9)
    assert (3.0 * R).V is R.V  # an amplitude shares the arrays
    # a repeated inducing input is one direction: the pseudo-inverse drops the null one
    Xu2 = np.r_[Xu, Xu[:2]]
    R2 = FITCCovariance.from_kernels(rbf_kernel(X, Xu2, 1.2), rbf_kernel(Xu2, Xu2, 1.2))
    assert R2.V.shape[1] == 9
    np.testing.assert_allclose(R2.V @ R2.V.T, R.V @ R.V.T, atol=1e-9)
    # every row an inducing input: the full covariance (to m eps ||K||)
    K = rbf_kernel(X, X, 1.2)
    Rn = FITCCovariance.from_kernels(K, K)
    np.testing.assert_allclose(Rn.V @ Rn.V.T + np.diag(Rn.d), K, atol=40 * 1e-14)


@pytest.mark.parametrize("amp", [1.0, 30.0, 1000.0])
@pytest.mark.parametrize("weighted", [False, True])
def test_woodbury_inference_equals_the_dense_one_on_the_fitc_covariance(amp, weighted):
    """Laplace's mode and EP's fixed point, their evidence and the predictive alpha by the
    O(n m^2) Woodbury factor equal those of the dense solver on the same n x n covariance
    (round-off: a few ulps of the amplitude)."""
    from kclf.mgpc._solver import _ep_posterior, infer

    _, y, _, R, K_fitc = _fitc_problem(seed=2)
    w = np.random.default_rng(3).integers(1, 4, size=40).astype(float) if weighted else None
    for inference in ("laplace", "ep"):
        sparse_r, a_s, sw_s = infer(inference, amp * R, y, 200, 1e-12, sample_weight=w)
        dense_r, a_d, sw_d = infer(inference, amp * K_fitc, y, 200, 1e-12, sample_weight=w)
        assert sparse_r["converged"] and dense_r["converged"]
        lml = dense_r["log_marginal_likelihood"]
        assert sparse_r["log_marginal_likelihood"] == pytest.approx(lml, rel=1e-11, abs=1e-10)
        np.testing.assert_allclose(a_s, a_d, atol=1e-9 * max(1.0, np.abs(a_d).max()))
        np.testing.assert_allclose(sw_s, sw_d, atol=1e-9 * np.abs(sw_d).max())
    # the posterior marginals against (K~^-1 + S)^-1, sites from 0 to 1e4
    tau = np.r_[np.zeros(5), np.logspace(-3, 4, 35)]
    nu = np.random.default_rng(4).normal(size=40) * tau
    sigma_diag, mu, factor = _ep_posterior(amp * R, tau, nu)
    Sigma = np.linalg.inv(np.linalg.inv(amp * K_fitc) + np.diag(tau))
    np.testing.assert_allclose(sigma_diag, np.diag(Sigma), rtol=1e-8)
    np.testing.assert_allclose(mu, Sigma @ nu, atol=1e-8 * np.abs(Sigma @ nu).max())
    sS = np.sqrt(tau)
    B = np.eye(40) + sS[:, None] * amp * K_fitc * sS
    assert factor.half_logdet == pytest.approx(0.5 * np.linalg.slogdet(B)[1], rel=1e-12)
    x = np.random.default_rng(5).normal(size=40)
    np.testing.assert_allclose(factor.solve(x), np.linalg.solve(B, x), atol=1e-10)


@pytest.mark.parametrize("inference", ["laplace", "ep"])
def test_sparse_predictions_are_the_fitc_posterior(inference):
    """The predictive mean and variance through the m inducing inputs (alpha_ and the
    m x m factor) equal the FITC model's posterior at new inputs formed densely: the
    joint prior of the training and test latents is Q + diag(K - Q) over both, so a
    test latent's covariance with the training ones is q(x_*, x_i) and its variance
    k(x_*, x_*)."""
    X, y, _ = _data(40, seed=1)
    Xt = np.random.default_rng(2).normal(size=(9, 4))
    kw = dict(n_centers=None, length_scale=1.7, amplitude=6.0, tol=1e-12)
    clf = ManifoldGPC(inference=inference, n_inducing=12, random_state=3, **kw).fit(X, y)
    assert clf.n_inducing_ == 12 and clf.alpha_.shape == (12,)
    Xtr, Xu = X[clf.train_rows_], X[clf.inducing_rows_]
    kuu = 6.0 * rbf_kernel(Xu, Xu, 1.7)
    knu, ktu = 6.0 * rbf_kernel(Xtr, Xu, 1.7), 6.0 * rbf_kernel(Xt, Xu, 1.7)
    Qnn = knu @ np.linalg.solve(kuu, knu.T)
    K = Qnn + np.diag(6.0 - np.diag(Qnn))
    Kst = ktu @ np.linalg.solve(kuu, knu.T)  # q(x_*, x_i)
    from kclf.mgpc._solver import infer

    r, alpha, sqrt_w = infer(inference, K, 2.0 * (y[clf.train_rows_] == 1) - 1.0, 200, 1e-12)
    mean = Kst @ alpha
    var = 6.0 - np.einsum("ij,ji->i", Kst, np.linalg.solve(K + np.diag(1 / sqrt_w**2), Kst.T))
    got_mean, got_var = clf.predict_latent(Xt, return_var=True)
    np.testing.assert_allclose(got_mean, mean, atol=1e-8)
    np.testing.assert_allclose(got_var, var, atol=1e-8)
    assert clf.log_marginal_likelihood_ == pytest.approx(r["log_marginal_likelihood"], abs=1e-8)


@pytest.mark.parametrize("inference", ["laplace", "ep"])
@pytest.mark.parametrize("n_centers", [(20, None), None])
def test_sparse_path_with_every_row_inducing_equals_the_full_model(inference, n_centers):
    """FITC with the training rows as inducing inputs is the full model (Q = K, D = 0): the
    walk's evidence at every grid point, the chosen map, width, length scale and
    amplitude, the evidence and the probabilities agree to the solvers' tolerance (the
    FITC covariance differs from K by about m eps ||K||, the inference's stopping rules
    by tol = 1e-8; a Laplace grid point runs to an objective change of 1e-8)."""
    X, y, Xt = _data(50, seed=8)
    X[7], y[7] = X[3], 1 - y[3]  # one input with both labels: one inducing input
    kw = dict(n_centers=n_centers, inference=inference, random_state=0)
    full = ManifoldGPC(**kw).fit(X, y)
    sparse = ManifoldGPC(n_inducing=49, **kw).fit(X, y)
    more = ManifoldGPC(n_inducing=500, **kw).fit(X, y)
    assert sparse.n_inducing_ == more.n_inducing_ == 49
    np.testing.assert_array_equal(more.predict_proba(Xt), sparse.predict_proba(Xt))
    assert (sparse.n_centers_, sparse.sigma_, sparse.length_scale_, sparse.amplitude_) == (
        full.n_centers_,
        full.sigma_,
        full.length_scale_,
        full.amplitude_,
    )
    seen = np.isfinite(full.hyperparameter_scores_)
    np.testing.assert_array_equal(np.isfinite(sparse.hyperparameter_scores_), seen)
    np.testing.assert_allclose(
        sparse.hyperparameter_scores_[seen], full.hyperparameter_scores_[seen], atol=1e-6
    )
    assert sparse.log_marginal_likelihood_ == pytest.approx(full.log_marginal_likelihood_, abs=1e-8)
    np.testing.assert_allclose(sparse.predict_proba(Xt), full.predict_proba(Xt), atol=1e-8)
    np.testing.assert_allclose(sparse.predict_latent(Xt), full.predict_latent(Xt), atol=1e-7)


def test_sparse_path_is_deterministic_from_random_state():
    X, y, Xt = _data(60, seed=2)
    kw = dict(n_centers=(5, None), inference="ep", n_inducing=15)
    a = ManifoldGPC(random_state=4, **kw).fit(X, y)
    b = ManifoldGPC(random_state=4, **kw).fit(X, y)
    np.testing.assert_array_equal(a.inducing_rows_, b.inducing_rows_)
    np.testing.assert_array_equal(a.predict_proba(Xt), b.predict_proba(Xt))
    # None is the seed 0, fixed: two fits agree
    none = [ManifoldGPC(**kw).fit(X, y) for _ in range(2)]
    np.testing.assert_array_equal(none[0].predict_proba(Xt), none[1].predict_proba(Xt))
    np.testing.assert_array_equal(
        none[0].inducing_rows_, ManifoldGPC(random_state=0, **kw).fit(X, y).inducing_rows_
    )
    # another seed draws other inducing rows (15 distinct rows of the 60)
    c = ManifoldGPC(random_state=5, **kw).fit(X, y)
    assert len(set(c.inducing_rows_)) == 15 and set(c.inducing_rows_) != set(a.inducing_rows_)
    assert not np.array_equal(c.predict_proba(Xt), a.predict_proba(Xt))
    # the rows in another order: the same inducing inputs, the same model
    perm = np.random.default_rng(0).permutation(60)
    p = ManifoldGPC(random_state=4, **kw).fit(X[perm], y[perm])
    np.testing.assert_array_equal(perm[p.inducing_rows_], a.inducing_rows_)
    np.testing.assert_array_equal(p.predict_proba(Xt), a.predict_proba(Xt))


def test_fewer_inducing_inputs_approach_the_full_model():
    # a smooth two-class problem (the walk chooses a long length scale): 20 of 200 rows
    # carry the posterior to 3e-3 in probability (measured 2.6e-3), 40 to 1e-4 (3.4e-5);
    # the evidence likewise (measured 4e-3 and 2e-4 nats off)
    X, y = make_classification(260, 4, n_informative=2, n_redundant=0, random_state=3)
    X, y, Xt = X[:200], y[:200], X[200:]
    kw = dict(n_centers=None, inference="ep", random_state=0)
    full = ManifoldGPC(**kw).fit(X, y)
    for m, atol, nats in ((20, 3e-3, 1e-2), (40, 1e-4, 1e-3)):
        sparse = ManifoldGPC(n_inducing=m, **kw).fit(X, y)
        assert (sparse.length_scale_, sparse.amplitude_) == (full.length_scale_, full.amplitude_)
        np.testing.assert_allclose(sparse.predict_proba(Xt), full.predict_proba(Xt), atol=atol)
        assert sparse.log_marginal_likelihood_ == pytest.approx(
            full.log_marginal_likelihood_, abs=nats
        )
