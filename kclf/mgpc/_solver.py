"""The inference of the manifold Gaussian process classifier (private): Laplace (MLA)
and expectation propagation (MEP).

Fradi, Samir & Yao, "A Bayesian inference for a manifold Gaussian process classifier",
Sec. 3.3-3.4.  The posterior of the latent values is approximated by Laplace's method with
the logistic likelihood (Eq. (3)-(6), :func:`laplace_mode`) or by expectation propagation
with the probit likelihood (Eq. (7)-(8), :func:`ep_sites`), in the numerically stable
forms of Rasmussen & Williams, *Gaussian Processes for Machine Learning* (2006),
Algorithms 3.1-3.2 and 3.5-3.6; :func:`infer` runs either for
:class:`kclf.ManifoldGPC`, :func:`logistic_gaussian_integral` gives MLA's predictive
probability.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import cho_solve, cholesky
from scipy.linalg.lapack import dpotrf as _potrf
from scipy.linalg.lapack import dtrtri as _trtri
from scipy.special import erf, expit, log_ndtr

from .._newton import NewtonProblem, newton
from ..kernels import rbf_kernel
from ._fitc import FITCCovariance

# Williams & Barber (1998), Appendix A: the logistic sigmoid as a combination of five
# error functions, sigma(f) ~ 0.5 * sum(COEFS) + sum_k COEFS_k * erf(LAMBDAS_k * f) / 2 ...;
# the same constants as sklearn.gaussian_process.GaussianProcessClassifier.
_LAMBDAS = np.array([0.41, 0.4, 0.37, 0.44, 0.39])[:, None]
_COEFS = np.array([-1854.8214151, 3516.89893646, 221.29346712, 128.12323805, -2010.49422654])[
    :, None
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
# below this value of tau_i Sigma_ii = 1 - (B^-1)_ii, _ep_posterior computes Sigma_ii as
# K_ii - ||V_i||^2: the difference keeps ~13 of 16 digits above it
_DIRECT_BELOW = 1e-3


def logistic_gaussian_integral(mean, var):
    """``int sigma(f) N(f | mean, var) df`` for the logistic sigmoid ``sigma``.

    The sigmoid is replaced by Williams & Barber's mixture of five error functions, whose
    Gaussian integrals are closed form (R&W Sec. 3.4.2 and Algorithm 3.2, line 7; the same
    approximation as scikit-learn's ``GaussianProcessClassifier.predict_proba``).  The
    error is at most the mixture's sup-norm distance to the sigmoid.
    """
    mean, var = np.broadcast_arrays(np.asarray(mean, dtype=float), np.asarray(var, dtype=float))
    shape = mean.shape
    mean = mean.ravel()
    var = np.maximum(var.ravel(), np.finfo(float).tiny)
    alpha = 1.0 / (2.0 * var)
    gamma = _LAMBDAS * mean
    integrals = (
        np.sqrt(np.pi / alpha)
        * erf(gamma * np.sqrt(alpha / (alpha + _LAMBDAS**2)))
        / (2.0 * np.sqrt(var * 2.0 * np.pi))
    )
    return ((_COEFS * integrals).sum(axis=0) + 0.5 * _COEFS.sum()).reshape(shape)


def covariance(Z1, Z2, length_scale, amplitude):
    """The GP covariance ``amplitude * exp(-||z - z'||^2 / (2 length_scale^2))``."""
    return amplitude * rbf_kernel(Z1, Z2, length_scale)


class CholeskyFactor:
    """``B = I + S^1/2 K S^1/2`` of a dense ``K`` by its lower Cholesky factor ``L``:
    ``half_logdet`` is ``log |B| / 2``, :meth:`solve` applies ``B^-1`` (the interface of
    the sparse path's :class:`kclf.mgpc._fitc.WoodburyFactor`)."""

    def __init__(self, L):
        self.L = L
        self.half_logdet = np.log(np.diag(L)).sum()

    def solve(self, x):
        return cho_solve((self.L, True), x)


def _factor(K, sqrt_p):
    """The factor of ``B = I + S^1/2 K S^1/2``, ``S^1/2 = diag(sqrt_p)``, for a dense ``K``
    or a :class:`kclf.mgpc._fitc.FITCCovariance`."""
    if isinstance(K, FITCCovariance):
        return K.factor(sqrt_p**2)
    n = K.shape[0]
    return CholeskyFactor(cholesky(np.eye(n) + sqrt_p[:, None] * K * sqrt_p[None, :], lower=True))


class LaplaceProblem(NewtonProblem):
    """MLA's objective ``psi(a) = -a'f/2 + log p(y|f)``, ``f = K a`` (R&W Eq. 3.12, the
    log-likelihood's terms weighted by ``s``), for :func:`kclf._newton.newton`: the step is
    Newton's ``M <- (C^-1 + W)^-1 (W M + grad log p(y|M))`` in the form of R&W Algorithm
    3.1 (Cholesky of ``B = I + W^1/2 C W^1/2``, ``W = diag(s pi (1 - pi))``); a column is
    done when a step gains less than ``tol`` (absolute)."""

    def __init__(self, K, y, s):
        self.K, self.y, self.s = K, y[:, None], s[:, None]

    def objective(self, a, f, cols):
        return -0.5 * np.sum(a * f, axis=0) - np.sum(
            self.s * np.logaddexp(0.0, -self.y * f), axis=0
        )

    def direction(self, a, f, cols):
        pi = expit(f)
        W = self.s * pi * (1.0 - pi)
        sW = np.sqrt(W[:, 0])
        B = _factor(self.K, sW)
        b = (W * f + self.s * ((self.y + 1.0) / 2.0 - pi))[:, 0]
        step = (b - sW * B.solve(sW * (self.K @ b)))[:, None] - a
        return step, (self.K @ step[:, 0])[:, None]

    def converged(self, old, new, a, f, cols, tol):
        return new - old < tol


def laplace_mode(K, y, max_iter=100, tol=1e-10, *, sample_weight=None):
    """Posterior mode of the latent values with the logistic likelihood (MLA, Sec. 3.3).

    Newton's iteration ``M <- (C^-1 + W)^-1 (W M + grad log p(y|M))`` in the form of
    R&W Algorithm 3.1 (Cholesky of ``B = I + W^1/2 C W^1/2``; the library's one Newton
    loop, the one its logistic models share), with step halving if the
    objective ``-a'f/2 + log p(y|f)`` would decrease; it stops when a step gains less than
    ``tol``.

    Sample weights ``s_i`` multiply the log-likelihood terms,
    ``log p(y|f) = sum_i s_i log sigma(y_i f_i)``: the gradient is ``s (t - pi)`` and
    ``W = diag(s pi (1 - pi))``.  ``r`` copies of an input share one latent value (their
    rows of ``C`` coincide), whose likelihood is then ``sigma(y f)^r``: the same
    posterior, and the same Laplace evidence (``log |I + W^1/2 C W^1/2|`` of the copies is
    that of the weighted ``W`` by Sylvester's determinant identity), as one row of weight
    ``r``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Prior covariance ``C`` of the latent values.  (:class:`kclf.ManifoldGPC`'s sparse
        path passes its FITC covariance of ``m`` inducing inputs instead, an internal
        type whose ``B`` is factored by Woodbury's identity in ``O(n m^2)``.)
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    sample_weight : ndarray of shape (n,) or None
        Positive weights of the rows (None: all one).

    Returns
    -------
    result : dict
        ``f`` (mode), ``grad`` (``s (t - pi)``, so that Eq. (5) is ``C_*' grad``),
        ``sqrt_w`` (``W^1/2`` at the mode), ``L`` (lower Cholesky factor of B; FITC: of
        the ``m x m`` matrix ``A``), ``factor`` (the factorisation of B the predictions
        use: by Cholesky, or by Woodbury's identity for FITC), ``log_marginal_likelihood``
        (R&W Eq. (3.32)), ``n_iter`` and ``converged``.
    """
    n = K.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    zero = np.zeros((n, 1))
    r = newton(LaplaceProblem(K, y, s), zero, zero, tol=tol, max_iter=max_iter, max_halvings=20)
    f = r.z[:, 0]
    t = (y + 1.0) / 2.0
    pi = expit(f)
    W = s * pi * (1.0 - pi)
    sW = np.sqrt(W)
    B = _factor(K, sW)
    grad = s * (t - pi)
    lml = -0.5 * grad @ f - s @ np.logaddexp(0.0, -y * f) - B.half_logdet
    return {
        "f": f,
        "grad": grad,
        "sqrt_w": sW,
        "L": B.L,
        "factor": B,
        "log_marginal_likelihood": float(lml),
        "n_iter": int(r.n_iter[0]),
        "converged": bool(r.converged[0]),
    }


def _ep_posterior(K, tau, nu):
    """Posterior marginal variances ``diag(Sigma)``, mean ``mu = Sigma nu`` and the factor
    (:class:`CholeskyFactor`) of ``B = I + S^1/2 K S^1/2`` for site precisions ``tau`` and
    ``tau * mean = nu`` (Eq. (7): ``Sigma = (C^-1 + S)^-1``, ``S = diag(tau)``; R&W
    Algorithm 3.5, lines 12-14).

    ``S^1/2 K S^1/2 = B - I`` turns ``Sigma = K - K S^1/2 B^-1 S^1/2 K`` into
    ``S^1/2 Sigma S^1/2 = I - B^-1``: ``tau_i Sigma_ii = 1 - (B^-1)_ii``, so one Cholesky
    factorisation and the inverse of its triangular factor (``n^3 / 3`` flops each) give
    every marginal, instead of R&W's ``V = L^-1 S^1/2 K`` (``n^3``).  Where
    ``tau_i Sigma_ii`` is below ``_DIRECT_BELOW`` the difference ``1 - (B^-1)_ii`` would
    lose digits (no precision at all for ``tau_i = 0``): those columns of ``V`` are formed
    and ``Sigma_ii = K_ii - ||V_i||^2`` as R&W.  The sparse path's FITC covariance has its
    own ``O(n m^2)`` form (:meth:`kclf.mgpc._fitc.FITCCovariance.ep_posterior`)."""
    if isinstance(K, FITCCovariance):
        return K.ep_posterior(tau, nu)
    n = K.shape[0]
    sS = np.sqrt(tau)
    B = sS[:, None] * K
    B *= sS[None, :]
    B.flat[:: n + 1] += 1.0
    # LAPACK directly: scipy.linalg's wrappers cost a quarter of a sweep at n = 400
    L, info = _potrf(B, lower=1, clean=1, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"I + S^1/2 K S^1/2 is not positive definite (potrf {info})")
    L_inv, info = _trtri(L, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"the Cholesky factor of B is singular (trtri {info})")
    tau_sigma = 1.0 - np.einsum("ij,ij->j", L_inv, L_inv)
    direct = tau_sigma < _DIRECT_BELOW
    sigma_diag = np.divide(tau_sigma, tau, out=np.zeros(n), where=~direct)
    if direct.any():
        V = L_inv @ (sS[:, None] * K[:, direct])
        sigma_diag[direct] = K.diagonal()[direct] - np.einsum("ij,ij->j", V, V)
    k_nu = K @ nu
    mu = k_nu - K @ (sS * (L_inv.T @ (L_inv @ (sS * k_nu))))
    return sigma_diag, mu, CholeskyFactor(L)


def _tilted_moments(mean_c, var_c, y):
    """Mean and variance of ``N(f | mean_c, var_c) Phi(y f)`` normalised (R&W Eq. 3.58),
    elementwise; ``N(z) / Phi(z)`` through ``log Phi`` so that it holds for very negative
    ``z`` too."""
    denom = np.sqrt(1.0 + var_c)
    z = y * mean_c / denom
    ratio = np.exp(-0.5 * z * z - _LOG_SQRT_2PI - log_ndtr(z))
    mean_hat = mean_c + y * var_c * ratio / denom
    var_hat = var_c - var_c * var_c * ratio * (z + ratio) / (1.0 + var_c)
    return mean_hat, var_hat


def _ep_step(K, y, tau, nu, s):
    """One parallel EP update: the posterior of the current sites (a row of weight ``s_i``
    holding ``s_i`` copies of its site), the cavities that remove one copy (R&W Eq. 3.56),
    and the site parameters that match the moments of every tilted distribution at once
    (Eq. 3.59); at EP's fixed point they equal the current ones.  A site whose cavity has
    no positive precision (possible only for a weight below one) keeps its value."""
    sigma_diag, mu, factor = _ep_posterior(K, s * tau, s * nu)
    # >= 0 for s_i >= 1: Sigma_ii <= 1 / (s_i tau_i) since Sigma <= (S s)^-1
    tau_c = 1.0 / sigma_diag - tau
    nu_c = mu / sigma_diag - nu
    proper = tau_c > 0
    var_c = np.divide(1.0, tau_c, out=np.full_like(tau_c, np.inf), where=proper)
    mean_c = np.where(proper, nu_c * var_c, 0.0)
    mean_hat, var_hat = _tilted_moments(mean_c, np.where(proper, var_c, 1.0), y)
    state = {
        "sigma_diag": sigma_diag,
        "mu": mu,
        "factor": factor,
        "cavity_mean": mean_c,
        "cavity_var": var_c,
        "proper": proper,
    }
    tau_new = np.where(proper, np.maximum(1.0 / var_hat - tau_c, 0.0), tau)
    return tau_new, np.where(proper, mean_hat / var_hat - nu_c, nu), state


def _anderson(xs, gs, beta=1.0, row_weight=None):
    """Anderson's extrapolation (type II) of the fixed-point iteration ``x <- x + g(x)``
    from the iterates ``xs`` and their residuals ``gs`` (the last ones current):
    ``x + beta g - (dX + beta dG) gamma`` with ``gamma`` the least-squares solution of
    ``dG gamma = g`` (Walker & Ni 2011), each coordinate's equation weighted by
    ``row_weight`` (the number of copies it stands for)."""
    dX = np.diff(np.asarray(xs), axis=0).T
    dG = np.diff(np.asarray(gs), axis=0).T
    r = np.ones(dG.shape[0]) if row_weight is None else np.sqrt(row_weight)
    gamma = np.linalg.lstsq(r[:, None] * dG, r * gs[-1], rcond=None)[0]
    return xs[-1] + beta * gs[-1] - (dX + beta * dG) @ gamma


def ep_sites(K, y, max_iter=100, tol=1e-8, sites=None, *, anderson_depth=5, sample_weight=None):
    """Expectation propagation with the probit likelihood (MEP, Sec. 3.4).

    Sites ``t_i(M_i) = Z_i N(M_i | mu_i, sigma_i^2)`` (Eq. (7)) with natural parameters
    ``tau_i = 1 / sigma_i^2`` and ``nu_i = mu_i / sigma_i^2``.  EP's fixed point is the set
    of sites whose posterior marginals match the moments of every tilted distribution
    ``N(M_i | cavity_i) Phi(y_i M_i)`` (R&W Eq. 3.56-3.59).  It is found by *parallel*
    updates: one Cholesky factorisation and the inverse of its triangular factor per sweep
    give every posterior marginal, every site then moves to its
    moment-matching value at once (instead of R&W Algorithm 3.5's one site at a time with a
    rank-one update of the posterior covariance each).  The sweeps are accelerated by
    Anderson's extrapolation over the last ``anderson_depth`` sweeps and damped where they
    overshoot: when the residual grows the extrapolation restarts and the step halves (down
    to 1/64), each sweep that reduces it lengthens the step by half again, up to the full
    step; when the residual has not reached a new low for ``2 * anderson_depth`` sweeps the
    extrapolation is dropped for plain (damped) steps; precisions are kept non-negative.
    (Undamped parallel updates oscillate for ever at large amplitudes: at the digits
    tasks' chosen amplitude, 4096, undamped plain updates did not converge in 5000 sweeps
    on either task, undamped Anderson not in 1000 on 1 vs 7; the damped, safeguarded form
    takes 20-30.)

    The iteration stops when no moment-matching site differs from the current one by
    more than ``tol`` (relative to the largest site parameter): the stopping rule is the
    fixed-point equation itself, so the sites are EP's whichever way they were reached
    (the sequential algorithm's, to that tolerance).  ``sites=(tau, nu)`` starts from
    given site parameters (e.g. those of a neighbouring hyper-parameter value) instead of
    ``tau = nu = 0``.

    ``sample_weight``: a row of weight ``s_i`` carries ``s_i`` identical sites
    ``t_i(M_i)^{s_i}`` (the posterior's site precision ``s_i tau_i``, natural mean
    ``s_i nu_i``), and its cavity removes one copy, ``q / t_i`` (power EP with power
    ``1 / s_i``, the one form whose moments are the probit's closed form).  ``r`` copies of
    an input share one latent value, and EP on them keeps their sites equal (every update
    treats them alike; Anderson's least squares weights each coordinate by its copies):
    the iterates, the fixed point and the evidence of ``r`` repeated rows are those of
    one row of weight ``r``.  The evidence's terms of each site are multiplied by
    ``s_i``; ``log |B|`` and ``nu' Sigma nu`` are those of the weighted sites.

    ``K`` is the dense ``(n, n)`` prior covariance (:class:`kclf.ManifoldGPC`'s sparse path
    passes its FITC covariance instead, an internal type: a sweep then costs ``O(n m^2)``).

    Returns
    -------
    result : dict
        ``tau``, ``nu`` (site natural parameters, one copy's), ``mu``, ``sigma_diag``
        (posterior mean and marginal variances), ``L`` (Cholesky factor of
        ``I + S^1/2 K S^1/2``, ``S = diag(s tau)``; FITC: of the ``m x m`` matrix ``A``),
        ``factor`` (the factorisation of that matrix), ``sqrt_tau`` (``S^1/2``),
        ``cavity_mean``, ``cavity_var``, ``log_marginal_likelihood`` (R&W
        Eq. (3.65) in a form free of ``1 / tau``), ``n_iter`` (sweeps, i.e.
        factorisations), ``converged``, ``residual`` (the largest relative site change
        the fixed-point equations still ask for).
    """
    n = K.shape[0]
    y = np.asarray(y, dtype=float)
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    row_weight = None if sample_weight is None else np.concatenate([s, s])
    x = np.zeros(2 * n)
    if sites is not None:
        x[:n] = np.maximum(np.asarray(sites[0], dtype=float), 0.0)
        x[n:] = sites[1]
    xs, gs = [], []
    converged = False
    prev, step = np.inf, 1.0
    best, since_best = np.inf, 0
    for sweep in range(1, max_iter + 1):
        n_iter = sweep
        tau, nu = x[:n], x[n:]
        tau_t, nu_t, state = _ep_step(K, y, tau, nu, s)
        g = np.concatenate([tau_t - tau, nu_t - nu])
        residual = max(
            np.abs(g[:n]).max() / max(1.0, np.abs(tau_t).max()),
            np.abs(g[n:]).max() / max(1.0, np.abs(nu_t).max()),
        )
        if residual <= tol:
            converged = True
            break
        if sweep == max_iter:  # return the sites the posterior above belongs to
            break
        if residual > prev:  # overshot: restart the extrapolation, halve the step
            xs, gs = [], []
            step = max(step / 2.0, 1.0 / 64.0)
        else:
            step = min(1.0, 1.5 * step)
        prev = residual
        best, since_best = (residual, 0) if residual < best else (best, since_best + 1)
        if since_best > 2 * anderson_depth:  # the extrapolation stalls: plain steps from here
            anderson_depth = 0
        xs.append(x)
        gs.append(g)
        del xs[: -(anderson_depth + 1)], gs[: -(anderson_depth + 1)]
        x = _anderson(xs, gs, step, row_weight) if len(xs) > 1 else x + step * g
        x[:n] = np.maximum(x[:n], 0.0)
    tau, nu = x[:n].copy(), x[n:].copy()
    mu, d, factor = state["mu"], state["sigma_diag"], state["factor"]
    mean_c, var_c = state["cavity_mean"], state["cavity_var"]
    if not state["proper"].all():  # no EP fixed point (a weight below one): no evidence
        converged = False
        lml = -np.inf
    else:
        z = y * mean_c / np.sqrt(1.0 + var_c)
        # log Z_EP = sum log Z_i - sum log L_ii + nu' Sigma nu / 2 + sum log(1 + tau_i var_c,i) / 2
        #          + sum (mean_c^2 tau - 2 mean_c nu - nu^2 var_c) / (2 (1 + tau var_c))
        # which is sum_i log Ztilde_i + log N(mu_tilde | 0, K + S^-1) with the 1/tau terms
        # cancelled; with weights every per-site term counts s_i times (s_i copies)
        one_p = 1.0 + tau * var_c
        lml = (
            s @ log_ndtr(z)
            - factor.half_logdet
            + 0.5 * (s * nu) @ mu
            + 0.5 * s @ np.log(one_p)
            + 0.5 * s @ ((mean_c**2 * tau - 2.0 * mean_c * nu - nu**2 * var_c) / one_p)
        )
    return {
        "tau": tau,
        "nu": nu,
        "mu": mu,
        "sigma_diag": d,
        "L": factor.L,
        "factor": factor,
        "sqrt_tau": np.sqrt(s * tau),
        "cavity_mean": mean_c,
        "cavity_var": var_c,
        "log_marginal_likelihood": float(lml),
        "n_iter": n_iter,
        "converged": converged,
        "residual": float(residual),
    }


def ep_log_marginal_likelihood_gradient(K, result, dK):
    """Derivatives of EP's log marginal likelihood with respect to covariance
    hyper-parameters, at EP's fixed point (R&W Eq. (5.27)).

    At the fixed point the evidence is stationary in the site parameters, so only the
    prior covariance moves: ``d log Z_EP / d theta = tr((b b' - R) dK / d theta) / 2``
    with ``R = S^1/2 B^-1 S^1/2`` and ``b = (I - R K) nu``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The prior covariance ``result`` was computed for.
    result : dict
        :func:`ep_sites`'s result without sample weights (converged: the formula holds at
        the fixed point only).
    dK : sequence of ndarray of shape (n, n)
        ``dK / d theta_k`` for each hyper-parameter.

    Returns
    -------
    grad : ndarray of shape (len(dK),)
    """
    sS, L = result["sqrt_tau"], result["L"]
    b = result["nu"] - sS * cho_solve((L, True), sS * (K @ result["nu"]))
    R = sS[:, None] * cho_solve((L, True), np.diag(sS))
    A = np.outer(b, b) - R
    return np.array([0.5 * np.einsum("ij,ij->", A, d) for d in dK])


def infer(inference, K, y, max_iter, tol, warm=None, search_tol=None, sample_weight=None):
    """``(result, alpha, sqrt_w)`` of the posterior for the prior covariance ``K`` and
    labels ``y`` in {-1, +1} (rows weighted by ``sample_weight``): ``inference`` "laplace"
    (:func:`laplace_mode`, to ``tol``) or "ep" (:func:`ep_sites`, to ``search_tol`` when
    given, else ``tol``, from the sites ``warm``); ``alpha`` gives the predictive mean
    ``k_*' alpha`` and ``sqrt_w`` the ``W^1/2`` (or ``S^1/2``) of the predictive
    variance."""
    tol_ep = tol if search_tol is None else search_tol
    if inference == "laplace":
        r = laplace_mode(K, y, max_iter, tol, sample_weight=sample_weight)
        return r, r["grad"], r["sqrt_w"]
    r = ep_sites(K, y, max_iter, tol_ep, sites=warm, sample_weight=sample_weight)
    # R&W Algorithm 3.6, line 5: mean = k_*' (nu - S^1/2 B^-1 S^1/2 K nu), S and nu the
    # weighted sites'
    sS = r["sqrt_tau"]
    nu = r["nu"] if sample_weight is None else sample_weight * r["nu"]
    alpha = nu - sS * r["factor"].solve(sS * (K @ nu))
    return r, alpha, sS
