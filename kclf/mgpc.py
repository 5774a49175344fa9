"""Manifold Gaussian process classifier (MGPC) with Laplace (MLA) and EP (MEP) inference.

Fradi, Samir & Yao, "A Bayesian inference for a manifold Gaussian process classifier".
The inputs are first mapped to ``psi(x) = (K(x, c_1), ..., K(x, c_m))`` with centres
``c_j`` from k-means (Sec. 3.2, Eq. (1)-(2)) or, where the marginal likelihood prefers
it (by default it chooses between the two), left as they are; a zero-mean GP with
covariance ``c(z, z') = amplitude * exp(-||z - z'||^2 / (2 length_scale^2))`` acts on
``z = psi(x)``.
The posterior of the latent values is approximated by Laplace's method with the logistic
likelihood (Sec. 3.3, Eq. (3)-(6)) or by expectation propagation with the probit
likelihood (Sec. 3.4, Eq. (7)-(8)), in the numerically stable forms of Rasmussen &
Williams, *Gaussian Processes for Machine Learning* (2006), Algorithms 3.1-3.2 and 3.5-3.6.
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular
from scipy.linalg.lapack import dpotrf as _potrf
from scipy.linalg.lapack import dtrtri as _trtri
from scipy.special import erf, expit, log_ndtr, ndtr
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._validation import POSITIVE, binary_labels, positive_grid
from .kernels import median_sigma, rbf_kernel, squared_distances

# Williams & Barber (1998), Appendix A: the logistic sigmoid as a combination of five
# error functions, sigma(f) ~ 0.5 * sum(COEFS) + sum_k COEFS_k * erf(LAMBDAS_k * f) / 2 ...;
# the same constants as sklearn.gaussian_process.GaussianProcessClassifier.
_LAMBDAS = np.array([0.41, 0.4, 0.37, 0.44, 0.39])[:, None]
_COEFS = np.array([-1854.8214151, 3516.89893646, 221.29346712, 128.12323805, -2010.49422654])[
    :, None
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: the feature maps searched by default: the paper's 20 k-means centres and the identity
DEFAULT_N_CENTERS = (20, None)
DEFAULT_LENGTH_SCALE_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
#: ``2 ** k``, k = 0 .. 12, walked at every other value and then refined (ManifoldGPC.fit)
DEFAULT_AMPLITUDES = tuple(2.0**k for k in range(13))
#: the feature map's default width: this multiple of the median pairwise distance of X
DEFAULT_SIGMA_FACTOR = 0.5
INFERENCES = ("laplace", "ep")
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


def logistic_erf_mixture(f):
    """Williams & Barber's erf-mixture approximation of the sigmoid itself (the limit
    ``var -> 0`` of :func:`logistic_gaussian_integral`)."""
    f = np.asarray(f, dtype=float)
    out = (_COEFS * 0.5 * erf(_LAMBDAS * f.ravel())).sum(axis=0) + 0.5 * _COEFS.sum()
    return out.reshape(f.shape)


def _covariance(Z1, Z2, length_scale, amplitude):
    return amplitude * rbf_kernel(Z1, Z2, length_scale)


def laplace_mode(K, y, max_iter=100, tol=1e-10):
    """Posterior mode of the latent values with the logistic likelihood (MLA, Sec. 3.3).

    Newton's iteration ``M <- (C^-1 + W)^-1 (W M + grad log p(y|M))`` in the form of
    R&W Algorithm 3.1 (Cholesky of ``B = I + W^1/2 C W^1/2``), with step halving if the
    objective ``-a'f/2 + log p(y|f)`` would decrease.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Prior covariance ``C`` of the latent values.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.

    Returns
    -------
    result : dict
        ``f`` (mode), ``grad`` (``t - pi``, so that Eq. (5) is ``C_*' grad``), ``sqrt_w``
        (``W^1/2`` at the mode), ``L`` (lower Cholesky factor of B), ``log_marginal_likelihood``
        (R&W Eq. (3.32)), ``n_iter`` and ``converged``.
    """
    n = K.shape[0]
    t = (y + 1.0) / 2.0
    f = np.zeros(n)
    a = np.zeros(n)
    psi_old = -np.inf
    converged = False
    for it in range(1, max_iter + 1):
        n_iter = it
        pi = expit(f)
        W = pi * (1.0 - pi)
        sW = np.sqrt(W)
        L = cholesky(np.eye(n) + sW[:, None] * K * sW[None, :], lower=True)
        b = W * f + (t - pi)
        a_new = b - sW * cho_solve((L, True), sW * (K @ b))
        step = 1.0
        while True:
            a_try = a + step * (a_new - a)
            f_try = K @ a_try
            psi = -0.5 * a_try @ f_try - np.logaddexp(0.0, -y * f_try).sum()
            if psi >= psi_old - 1e-12 * abs(psi) or step < 1e-6:
                break
            step /= 2.0
        a, f = a_try, f_try
        if psi - psi_old < tol:
            converged = True
            psi_old = max(psi, psi_old)
            break
        psi_old = psi
    pi = expit(f)
    W = pi * (1.0 - pi)
    sW = np.sqrt(W)
    L = cholesky(np.eye(n) + sW[:, None] * K * sW[None, :], lower=True)
    grad = t - pi
    lml = -0.5 * grad @ f - np.logaddexp(0.0, -y * f).sum() - np.log(np.diag(L)).sum()
    return {
        "f": f,
        "grad": grad,
        "sqrt_w": sW,
        "L": L,
        "log_marginal_likelihood": float(lml),
        "n_iter": n_iter,
        "converged": converged,
    }


def _ep_posterior(K, tau, nu):
    """Posterior marginal variances ``diag(Sigma)``, mean ``mu = Sigma nu`` and the lower
    Cholesky factor ``L`` of ``B = I + S^1/2 K S^1/2`` for site precisions ``tau`` and
    ``tau * mean = nu`` (Eq. (7): ``Sigma = (C^-1 + S)^-1``, ``S = diag(tau)``; R&W
    Algorithm 3.5, lines 12-14).

    ``S^1/2 K S^1/2 = B - I`` turns ``Sigma = K - K S^1/2 B^-1 S^1/2 K`` into
    ``S^1/2 Sigma S^1/2 = I - B^-1``: ``tau_i Sigma_ii = 1 - (B^-1)_ii``, so one Cholesky
    factorisation and the inverse of its triangular factor (``n^3 / 3`` flops each) give
    every marginal, instead of R&W's ``V = L^-1 S^1/2 K`` (``n^3``).  Where
    ``tau_i Sigma_ii`` is below ``_DIRECT_BELOW`` the difference ``1 - (B^-1)_ii`` would
    lose digits (no precision at all for ``tau_i = 0``): those columns of ``V`` are formed
    and ``Sigma_ii = K_ii - ||V_i||^2`` as R&W."""
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
    return sigma_diag, mu, L


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


def _ep_step(K, y, tau, nu):
    """One parallel EP update: the posterior of the current sites, the cavities (R&W
    Eq. 3.56), and the site parameters that match the moments of every tilted
    distribution at once (Eq. 3.59); at EP's fixed point they equal the current ones."""
    sigma_diag, mu, L = _ep_posterior(K, tau, nu)
    tau_c = 1.0 / sigma_diag - tau  # >= 0: Sigma_ii <= 1 / tau_i since Sigma <= S^-1
    nu_c = mu / sigma_diag - nu
    var_c = 1.0 / tau_c
    mean_c = nu_c * var_c
    mean_hat, var_hat = _tilted_moments(mean_c, var_c, y)
    state = {"sigma_diag": sigma_diag, "mu": mu, "L": L, "cavity_mean": mean_c, "cavity_var": var_c}
    return np.maximum(1.0 / var_hat - tau_c, 0.0), mean_hat / var_hat - nu_c, state


def _anderson(xs, gs, beta=1.0):
    """Anderson's extrapolation (type II) of the fixed-point iteration ``x <- x + g(x)``
    from the iterates ``xs`` and their residuals ``gs`` (the last ones current):
    ``x + beta g - (dX + beta dG) gamma`` with ``gamma`` the least-squares solution of
    ``dG gamma = g`` (Walker & Ni 2011)."""
    dX = np.diff(np.asarray(xs), axis=0).T
    dG = np.diff(np.asarray(gs), axis=0).T
    gamma = np.linalg.lstsq(dG, gs[-1], rcond=None)[0]
    return xs[-1] + beta * gs[-1] - (dX + beta * dG) @ gamma


def ep_sites(K, y, max_iter=100, tol=1e-8, sites=None, *, anderson_depth=5):
    """Expectation propagation with the probit likelihood (MEP, Sec. 3.4).

    Sites ``t_i(M_i) = Z_i N(M_i | mu_i, sigma_i^2)`` (Eq. (7)) with natural parameters
    ``tau_i = 1 / sigma_i^2`` and ``nu_i = mu_i / sigma_i^2``.  EP's fixed point is the set
    of sites whose posterior marginals match the moments of every tilted distribution
    ``N(M_i | cavity_i) Phi(y_i M_i)`` (R&W Eq. 3.56-3.59).  It is found by *parallel*
    updates: one Cholesky factorisation and the inverse of its triangular factor per sweep
    give every posterior marginal (:func:`_ep_posterior`), every site then moves to its
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

    Returns
    -------
    result : dict
        ``tau``, ``nu`` (site natural parameters), ``mu``, ``sigma_diag`` (posterior
        mean and marginal variances), ``L`` (Cholesky factor of ``I + S^1/2 K S^1/2``),
        ``sqrt_tau``, ``cavity_mean``, ``cavity_var``, ``log_marginal_likelihood`` (R&W
        Eq. (3.65) in a form free of ``1 / tau``), ``n_iter`` (sweeps, i.e.
        factorisations), ``converged``, ``residual`` (the largest relative site change
        the fixed-point equations still ask for).
    """
    n = K.shape[0]
    y = np.asarray(y, dtype=float)
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
        tau_t, nu_t, state = _ep_step(K, y, tau, nu)
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
        x = _anderson(xs, gs, step) if len(xs) > 1 else x + step * g
        x[:n] = np.maximum(x[:n], 0.0)
    tau, nu = x[:n].copy(), x[n:].copy()
    mu, d, L = state["mu"], state["sigma_diag"], state["L"]
    mean_c, var_c = state["cavity_mean"], state["cavity_var"]
    z = y * mean_c / np.sqrt(1.0 + var_c)
    # log Z_EP = sum log Z_i - sum log L_ii + nu' Sigma nu / 2 + sum log(1 + tau_i var_c,i) / 2
    #           + sum (mean_c^2 tau - 2 mean_c nu - nu^2 var_c) / (2 (1 + tau var_c))
    # which is sum_i log Ztilde_i + log N(mu_tilde | 0, K + S^-1) with the 1/tau terms cancelled.
    one_p = 1.0 + tau * var_c
    lml = (
        log_ndtr(z).sum()
        - np.log(np.diag(L)).sum()
        + 0.5 * nu @ mu
        + 0.5 * np.log(one_p).sum()
        + 0.5 * ((mean_c**2 * tau - 2.0 * mean_c * nu - nu**2 * var_c) / one_p).sum()
    )
    return {
        "tau": tau,
        "nu": nu,
        "mu": mu,
        "sigma_diag": d,
        "L": L,
        "sqrt_tau": np.sqrt(tau),
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
        :func:`ep_sites`'s result (converged: the formula holds at the fixed point only).
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


def _is_sequence(value):
    return value is not None and not isinstance(value, Integral | str) and np.ndim(value) > 0


def _grid(value, name):
    return None if value is None else positive_grid(value, name)


class ManifoldGPC(ClassifierMixin, BaseEstimator):
    """Manifold Gaussian process classifier (binary), MLA or MEP inference.

    Parameters
    ----------
    n_centers : int, None or sequence of int and None, default=(20, None)
        Number ``m`` of k-means centres ``c_j`` of the feature map
        ``psi(x) = (K(x, c_1), ..., K(x, c_m))`` (Sec. 3.2, Eq. (2)).  ``None`` uses the
        identity map ``psi(x) = x`` (a plain GP classifier).  A sequence is a set of
        feature maps searched, jointly with the covariance's hyper-parameters, by the
        approximate log marginal likelihood: the default lets the evidence decide between
        the paper's 20-centre map and the identity (see Notes); ``20`` is the paper's
        model alone.  ``m`` is capped at the number of distinct training rows, the most
        centres k-means can place: there the centres are the training points themselves,
        the representer theorem's own expansion that Eq. (1) restricts to ``m`` centres,
        so the default fits any training set of two or more rows (``n_centers_`` says
        which ``m`` was used).
    sigma : float, sequence of float or None, default=None
        Width of the Gaussian kernel ``K`` of the feature map; ``None`` is half the median
        pairwise distance of the training inputs (the evidence's choice among 0.5, 1, 2
        and 4 times the median on the digits and IDA german sets; the median itself left
        the features so smooth that 3 vs 8 lost 0.7 points); a sequence is a grid
        searched (jointly with the covariance's hyper-parameters) by the approximate log
        marginal likelihood.  Unused by the identity map (``n_centers=None``).
    inference : {"laplace", "ep"}, default="laplace"
        ``"laplace"``: MLA, logistic likelihood, Newton's method for the mode (Eq. (3)),
        predictive mean and variance Eq. (5)-(6), predictive probability
        ``int sigma(f) N(f|mu, s2) df`` by Williams & Barber's erf-mixture form of the
        sigmoid (closed form Gaussian integrals).  ``"ep"``: MEP, probit likelihood,
        sequential EP site updates (Eq. (7)), predictive probability Eq. (8) (exact for
        the probit).
    length_scale : float, sequence of float or None, default=None
        Length scale of the GP covariance on the feature space.  A sequence is a grid
        searched by the approximate log marginal likelihood; ``None`` is the grid
        ``median distance of psi(X) * length_scale_factors``.
    amplitude : float, sequence of float or None, default=None
        Signal variance of the GP covariance; a sequence is searched like
        ``length_scale``, every value a candidate and none added; ``None`` is the grid
        ``1, 2, 4, ..., 4096`` (powers of 2), walked at every other value and then
        bisected around the choice (see Notes).  Its top: with ``(1, 4, 16, 64)`` the
        largest value was chosen on every digits split, the evidence still rising; its
        step: walked by powers of 4 alone, MEP lost to GPy's EP in log loss on 11 of 12
        splits of IDA german, the optimum lying between two of them.
    length_scale_factors : sequence of float, default=(0.25, 0.5, 1, 2, 4)
        Multiples of the median pairwise distance of ``psi(X)`` searched when
        ``length_scale=None``.
    max_iter : int, default=200
        Newton iterations (Laplace) or EP sweeps (parallel updates, one factorisation each;
        see :func:`ep_sites`; at most 95 were needed from a cold start on 1000 random
        problems with amplitudes up to 1e5).
    tol : float, default=1e-8
        Convergence tolerance: objective change for Newton; for EP the largest change of a
        site parameter (relative to the largest site parameter) that the fixed-point
        equations of Eq. (7) still ask for.
    search_tol : float, default=1e-3
        EP only: the tolerance of the grid points' EP runs; the chosen point's sites are
        then refined to ``tol``.  EP's log marginal likelihood is stationary in the site
        parameters at the fixed point, so a grid point's score is off by about the square
        of the sites' error: up to 4e-3 nats at the default on the digits tasks (at
        amplitude 4096), 5e-5 on IDA banana and german (1e-4: 6e-5 and 1e-6), a Bayes
        factor of 1.004 at most.  A value at or below ``tol`` runs every grid point to
        ``tol``.
    n_init : int, default=4
        Number of k-means runs (different k-means++ seedings) for the centres; the best
        inertia wins.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means++ initialisation of the centres, the only random step.  ``None``
        uses the fixed seed 0, so that fitting the same data twice gives the same model
        (``KMeans(random_state=None)`` draws from NumPy's global generator: the centres,
        hence the probabilities, changed from one fit of the same data to the next).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class ``y = +1``.
    n_centers_ : int or None
        Number of centres of the feature map used (``None``: the identity), the evidence's
        choice when ``n_centers`` is a sequence.
    centers_ : ndarray of shape (m, n_features) or None
    sigma_ : float or None
        Feature-map kernel width used.
    length_scale_, amplitude_ : float
        Covariance hyper-parameters chosen by the approximate marginal likelihood.
    log_marginal_likelihood_ : float
        Laplace (R&W Eq. (3.32)) or EP (R&W Eq. (3.65)) approximation at the chosen values.
    hyperparameter_scores_ : ndarray of shape (n_maps, n_length_scales, n_amplitudes)
        Approximate log marginal likelihood over the searched grid; one entry of the first
        axis per feature map searched: per ``n_centers`` value, in its order, one per
        feature-map width (one for the identity); EP's with sites to ``search_tol``;
        ``-inf`` at the grid points the walk did not visit (see Notes; with the default
        amplitudes, 13 columns: the walk visits even ones, the bisection one or two odd
        ones beside the choice).
    n_iter_ : int
        Newton iterations or EP sweeps of the final fit.

    Notes
    -----
    Hyper-parameters are chosen by maximising the approximate log marginal likelihood of
    the chosen inference over a grid rather than by cross-validation: it is the Bayesian
    criterion the paper's model comes with, uses all training points, costs one fit per
    grid point instead of one per fold (3-fold CV of the log loss chose the same values
    on the digits tasks), and a grid needs no gradient and no step size: it steps by
    factors of 2 in length scale and in amplitude.

    Along the amplitudes of one length scale (and feature-map width) the evidence rises
    to one maximum or plateau and falls, and so does the best value of a row across the
    length scales, so the grid is walked rather than filled: from the middle length
    scale (for a later feature map, the best grid point so far) the rows are visited up
    and then down, each way until a row's best evidence first falls, and each row's
    amplitudes from the best amplitude of its neighbour towards the start, up and then
    down, each way until the evidence first falls (``-inf`` in ``hyperparameter_scores_``
    where the walk did not go); where the first step up rises, the maximum is above the
    start and the way down is skipped (rows and amplitudes alike); every EP run starts
    from the sites of its neighbour on the grid.  On the ten IDA sets of the data mirror
    (realisation 1, both inferences, both default maps alone) and the six digits splits
    of ``benchmarks/bench_mgpc.py`` the walk found each map's full-grid maximum
    (amplitudes by powers of 4; 64 of 64 cases, ``bench_mgpc.py --walk-check``),
    visiting 8-16 of the 35 points.

    The default amplitudes are walked at every other value (``1, 4, ..., 4096``) and the
    chosen one is then bisected: the evidence is unimodal along its row, so the best
    power of 2 there is the choice or a neighbour; the neighbour above is tried from the
    chosen point's sites, the one below only if that did not improve (one or two EP runs
    of a fit's 16-29 on the benchmark's tasks).  MEP's test log loss, walk by 4 alone ->
    bisected (``benchmarks/bench_mgpc.py --resplits 12 --ida-sets``; GPy's EP beside
    it): IDA german, the original split and 11 seeded resplits, mean 0.4840 -> 0.4810
    (GPy 0.4801; splits won against GPy 1 -> 6 of 12); banana's 12, 0.2404 -> 0.2419
    (GPy 0.2574, all 12 won either way); the ten IDA sets, mean 0.3219 -> 0.3224 (GPy
    0.3576).

    The evidence also compares feature maps (``n_centers`` a sequence).  By default it
    chooses between the paper's 20-centre map and the identity: it keeps the map on the
    digits tasks (by 5-7 nats; the same model as ``n_centers=20``) and on IDA thyroid,
    twonorm and waveform, and takes the identity on the other seven IDA sets of the data
    mirror (realisation 1: the original split where the mirror has it, else the
    workflow's seeded split; ``bench_mgpc.py --ida-sets``).  Over those ten sets MEP's
    mean test log loss is 0.322 (accuracy 84.6 %) against the map's 0.336 (83.8 %) and
    the identity's 0.319 (84.8 %): german 0.469 -> 0.442, splice 0.329 -> 0.292, image
    0.140 -> 0.087; worse than the map on titanic (0.510 -> 0.519), and than the
    identity on thyroid, where the evidence kept the map (0.158 against 0.089, 75 test
    rows).  Searching both maps cost 1.2-1.9 times the map's search alone on these tasks.

    References
    ----------
    A. Fradi, C. Samir, A.-F. Yao. A Bayesian inference for a manifold Gaussian process
    classifier: applications to images classification.
    C. E. Rasmussen, C. K. I. Williams. Gaussian Processes for Machine Learning, 2006.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kclf.mgpc import ManifoldGPC
    >>> X, y = make_moons(100, noise=0.1, random_state=0)
    >>> clf = ManifoldGPC(n_centers=10, inference="ep", random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """

    _parameter_constraints = {
        "n_centers": [Interval(Integral, 1, None, closed="left"), None, "array-like"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "sigma": [POSITIVE, "array-like", None],
        "inference": [StrOptions(set(INFERENCES))],
        "length_scale": [POSITIVE, "array-like", None],
        "amplitude": [POSITIVE, "array-like", None],
        "length_scale_factors": [POSITIVE, "array-like", None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [POSITIVE],
        "search_tol": [POSITIVE],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_centers=DEFAULT_N_CENTERS,
        *,
        sigma=None,
        inference="laplace",
        length_scale=None,
        amplitude=None,
        length_scale_factors=DEFAULT_LENGTH_SCALE_FACTORS,
        max_iter=200,
        tol=1e-8,
        search_tol=1e-3,
        n_init=4,
        random_state=None,
    ):
        self.n_centers = n_centers
        self.sigma = sigma
        self.inference = inference
        self.length_scale = length_scale
        self.amplitude = amplitude
        self.length_scale_factors = length_scale_factors
        self.max_iter = max_iter
        self.tol = tol
        self.search_tol = search_tol
        self.n_init = n_init
        self.random_state = random_state

    def _feature_maps(self, n_distinct):
        """The ``n_centers`` values searched (``_parameter_constraints`` checked the
        parameter's type; here the entries of a sequence), each capped at the
        ``n_distinct`` distinct training rows (repeats after the cap searched once)."""
        maps = list(self.n_centers) if _is_sequence(self.n_centers) else [self.n_centers]
        if not maps:
            raise ValueError("n_centers must not be an empty sequence")
        for m in maps:
            if m is None:
                continue
            if not isinstance(m, Integral) or isinstance(m, bool) or m < 1:
                raise ValueError(f"n_centers entries must be ints >= 1 or None, got {m!r}")
        if len(set(maps)) < len(maps):
            raise ValueError(f"n_centers has repeated entries: {list(maps)}")
        return list(dict.fromkeys(m if m is None else min(int(m), n_distinct) for m in maps))

    def _map(self, X):
        if self.centers_ is None:
            return X
        return rbf_kernel(X, self.centers_, self.sigma_)

    def _infer(self, K, y, warm=None, tol=None):
        tol = self.tol if tol is None else tol
        if self.inference == "laplace":
            r = laplace_mode(K, y, self.max_iter, self.tol)
            return r, r["grad"], r["sqrt_w"]
        r = ep_sites(K, y, self.max_iter, tol, sites=warm)
        # R&W Algorithm 3.6, line 5: mean = k_*' (nu - S^1/2 B^-1 S^1/2 K nu)
        sS = r["sqrt_tau"]
        alpha = r["nu"] - sS * cho_solve((r["L"], True), sS * (K @ r["nu"]))
        return r, alpha, sS

    def _search_row(self, R, y, amps, start, warm, tol):
        """The amplitudes of one length scale: from ``amps[start]`` (EP from the sites
        ``warm``) up until the evidence first falls, then, unless the first step up
        rose (the evidence is unimodal along the row: its maximum is then above
        ``start``), down from ``start`` until it first falls; every EP run starts from
        the sites of its neighbour.  Returns ``{j: (result, alpha, sqrt_w)}`` of the
        amplitudes visited."""

        def lml(j):
            return row[j][0]["log_marginal_likelihood"]

        row = {start: self._infer(amps[start] * R, y, warm, tol)}
        for direction in (1, -1):
            if direction == -1 and start + 1 in row and lml(start + 1) > lml(start):
                break
            j = start
            while 0 <= j + direction < amps.size:
                r = row[j][0]
                sites = (r["tau"], r["nu"]) if self.inference == "ep" else None
                row[j + direction] = self._infer(amps[j + direction] * R, y, sites, tol)
                j += direction
                if lml(j) < r["log_marginal_likelihood"]:
                    break
        return row

    def _search_map(self, half_d2, ls_grid, y, amps, first, start, warm, tol):
        """The length scales of one feature map: from ``ls_grid[first]`` up until the best
        evidence of a row (:meth:`_search_row`, from ``amps[start]`` and the sites
        ``warm``) first falls, then, unless the first row up rose, down from ``first``
        until it first falls; each further row starts at the best amplitude of its
        neighbour towards ``first``, from that point's sites.  Yields ``(i, row, R)`` for
        each length scale visited (``R`` the unit-amplitude covariance), one at a time: a
        row's factors are not kept once the caller has read them."""

        def visit(i, start, warm):
            R = np.exp(half_d2 / ls_grid[i] ** 2)
            row = self._search_row(R, y, amps, start, warm, tol)
            j = max(row, key=lambda j: row[j][0]["log_marginal_likelihood"])
            r = row[j][0]
            sites = (r["tau"], r["nu"]) if self.inference == "ep" else None
            return (i, row, R), (r["log_marginal_likelihood"], j, sites)

        visited, at_first = visit(first, start, warm)
        yield visited
        del visited
        rose = False
        for direction in (1, -1):
            if rose:  # the rows' best is unimodal too: its maximum is above first
                break
            i, (score, start, warm) = first, at_first
            while 0 <= i + direction < len(ls_grid):
                i += direction
                visited, new = visit(i, start, warm)
                yield visited
                del visited
                rose = rose or (i == first + 1 and new[0] > score)
                if new[0] < score:
                    break
                score, start, warm = new

    def _bisect_amplitude(self, best, scores, amp_grid, y, tol):
        """The default amplitudes' walk visits every other value (``1, 4, ..., 4096``);
        along the chosen row the evidence is unimodal, so the full grid's best amplitude
        there is the chosen one or a neighbour: the one above is tried (from the chosen
        point's sites), and the one below only if that did not improve.  Writes the
        scores of the amplitudes tried into ``scores``; returns ``best`` or the
        improvement."""
        score, h, Z, ls, amp, r, alpha, sw, R = best
        i, j = np.unravel_index(np.argmax(scores[h]), scores.shape[1:])
        sites = (r["tau"], r["nu"]) if self.inference == "ep" else None
        for k in (j + 1, j - 1):
            if not 0 <= k < amp_grid.size:
                continue
            r_k, alpha_k, sw_k = self._infer(amp_grid[k] * R, y, sites, tol)
            scores[h, i, k] = r_k["log_marginal_likelihood"]
            if scores[h, i, k] > score:
                return (scores[h, i, k], h, Z, ls, amp_grid[k], r_k, alpha_k, sw_k, R)
        return best

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the feature map (Eq. (1)-(2)), choose the covariance hyper-parameters by the
        approximate log marginal likelihood, infer the posterior (Laplace, Eq. (3), or
        EP, Eq. (7)).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Exactly two classes.

        Returns
        -------
        self : ManifoldGPC
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, dtype=float)
        self.classes_, y_idx = binary_labels(y, "ManifoldGPC")
        maps = self._feature_maps(np.unique(X, axis=0).shape[0])
        ls_fixed = _grid(self.length_scale, "length_scale")
        amp_grid = _grid(self.amplitude, "amplitude")
        if amp_grid is None:
            amp_grid = np.asarray(DEFAULT_AMPLITUDES)
        if ls_fixed is None:
            factors = _grid(self.length_scale_factors, "length_scale_factors")
            if factors is None:
                raise ValueError("length_scale_factors must not be None")
        y_pm = 2.0 * y_idx - 1.0

        sigmas = _grid(self.sigma, "sigma")
        if sigmas is None and any(m is not None for m in maps):
            sigmas = [DEFAULT_SIGMA_FACTOR * median_sigma(X)]
        candidates = []  # (n_centers, centres, sigma) of every feature map searched
        for m in maps:
            if m is None:
                candidates.append((None, None, None))
                continue
            km = KMeans(
                n_clusters=m,
                n_init=self.n_init,
                random_state=check_random_state(
                    0 if self.random_state is None else self.random_state
                ),
            ).fit(X)
            candidates += [(m, km.cluster_centers_, sig) for sig in sigmas]
        n_ls = ls_fixed.size if ls_fixed is not None else factors.size
        scores = np.full((len(candidates), n_ls, amp_grid.size), -np.inf)
        # the default amplitudes are walked at every other value, then refined
        # (_bisect_amplitude); a view, so the walk writes into scores
        stride = 2 if self.amplitude is None else 1
        walked, walk_amps = scores[:, :, ::stride], amp_grid[::stride]
        ep = self.inference == "ep"
        search_tol = max(self.tol, self.search_tol) if ep else None
        best, warm, first, start = None, None, n_ls // 2, walk_amps.size // 2
        for h, (m, centres, sig) in enumerate(candidates):
            Z = X if m is None else rbf_kernel(X, centres, sig)
            ls_grid = ls_fixed if ls_fixed is not None else median_sigma(Z) * factors
            half_d2 = -0.5 * squared_distances(Z)  # one distance matrix for every length scale
            for i, row, R in self._search_map(
                half_d2, ls_grid, y_pm, walk_amps, first, start, warm, search_tol
            ):
                for j, (r, alpha, sw) in row.items():
                    walked[h, i, j] = r["log_marginal_likelihood"]
                    if best is None or walked[h, i, j] > best[0]:
                        best = (walked[h, i, j], h, Z, ls_grid[i], walk_amps[j], r, alpha, sw, R)
            # the next map starts at the best grid point so far, from its sites
            first, start = np.unravel_index(np.argmax(walked[best[1]]), walked.shape[1:])
            warm = (best[5]["tau"], best[5]["nu"]) if ep else None
        if stride == 2:
            best = self._bisect_amplitude(best, scores, amp_grid, y_pm, search_tol)
        if ep and search_tol > self.tol:  # the chosen point's sites to the full tolerance
            _, h, Z, ls, amp, r, alpha, sw, R = best
            r, alpha, sw = self._infer(amp * R, y_pm, (r["tau"], r["nu"]))
            best = (r["log_marginal_likelihood"], h, Z, ls, amp, r, alpha, sw, R)
        _, h, Z, ls, amp, r, self.alpha_, self.sqrt_w_, _ = best
        self.n_centers_, self.centers_, sig = candidates[h]
        self.sigma_ = None if sig is None else float(sig)
        self.length_scale_ = float(ls)
        self.amplitude_ = float(amp)
        self.L_ = r["L"]
        self.log_marginal_likelihood_ = r["log_marginal_likelihood"]
        self.n_iter_ = r["n_iter"]
        self.hyperparameter_scores_ = scores
        self.Z_train_ = Z.copy() if Z is X else Z  # not the caller's array (identity map)
        if not r["converged"]:
            import warnings

            warnings.warn(
                f"{self.inference} inference did not converge in max_iter={self.max_iter} "
                "iterations",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def predict_latent(self, X, return_var=False):
        """Predictive mean (Eq. (5) or Sec. 3.4) and variance (Eq. (6)) of the latent ``M(psi(x))``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_var : bool, default=False

        Returns
        -------
        mean : ndarray of shape (n_samples,)
        var : ndarray of shape (n_samples,), only if ``return_var``
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=float, reset=False)
        Ks = _covariance(self.Z_train_, self._map(X), self.length_scale_, self.amplitude_)
        mean = Ks.T @ self.alpha_
        if not return_var:
            return mean
        v = solve_triangular(self.L_, self.sqrt_w_[:, None] * Ks, lower=True)
        var = np.maximum(self.amplitude_ - np.einsum("ij,ij->j", v, v), 0.0)
        return mean, var

    def decision_function(self, X):
        """The latent predictive mean (Eq. (5) for MLA, Sec. 3.4 for MEP).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        mean : ndarray of shape (n_samples,)
            Positive means ``classes_[1]``.
        """
        return self.predict_latent(X)

    def predict_proba(self, X):
        """Predictive class probabilities.

        MLA: ``int sigma(M) N(M | mu, s2) dM`` with the erf-mixture sigmoid (Sec. 3.3,
        mean and variance Eq. (5)-(6)); MEP: ``Phi(mu / sqrt(1 + s2))``, Eq. (8).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, 2)
            Columns in ``classes_`` order; rows sum to one.
        """
        mean, var = self.predict_latent(X, return_var=True)
        if self.inference == "laplace":
            p = logistic_gaussian_integral(mean, var)
        else:
            p = ndtr(mean / np.sqrt(1.0 + var))
        p = np.clip(p, 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """Class labels: ``classes_[1]`` where the latent mean is positive.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels from ``classes_`` (``classes_[1]`` where the probability exceeds 1/2).
        """
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
