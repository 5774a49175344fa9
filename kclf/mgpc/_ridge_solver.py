"""The solver of the weighted ridge logistic regression (private): Newton-Raphson or
gradient ascent on ``l^lam`` (Fradi, Samir & Yao, Sec. 2.2; :class:`kclf.WeightedRidgeLogistic`),
as the model's steps in the library's one Newton loop (:func:`kclf._newton.newton`).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit

from .._newton import NewtonProblem, newton


def weighted_ridge_objective(beta, X, t, lam, n_unpenalized=0, sample_weight=None):
    """``l^lam(beta)`` for design ``X`` (intercept column last if any), ``t`` in {0, 1};
    the last ``n_unpenalized`` coefficients are not penalised; ``sample_weight`` (default
    1) multiplies each row's log-likelihood."""
    eta = X @ beta
    terms = t * eta - np.logaddexp(0.0, eta)
    loglik = terms.sum() if sample_weight is None else sample_weight @ terms
    b = beta[: beta.size - n_unpenalized]
    return 0.5 * (1.0 - lam) * loglik - 0.5 * lam * b @ b


class RidgeLogisticProblem(NewtonProblem):
    """``l^lam`` of one column ``beta`` (p, 1) with predictor ``eta = A beta`` for
    :func:`kclf._newton.newton`.  The step is Newton's, ``H^-1 g`` with ``H = (1 - lam)/2
    A' W A + lam diag(mask)`` (``W = c pi (1 - pi)``, ``c`` the sample weights), or the
    gradient's ``g / Lip`` with ``Lip = (1 - lam)/8 ||A||_2^2 max(c) + lam``, the
    Lipschitz constant of the gradient (monotone ascent).  Converged: the gradient's
    max-norm at most ``tol max(1, |l^lam|)``."""

    def __init__(self, A, t, lam, mask, solver, sample_weight=None):
        self.A, self.t, self.lam, self.mask, self.solver = A, t[:, None], lam, mask, solver
        self.c = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self.n_unpen = int(mask.size - np.count_nonzero(mask))
        if solver == "gradient":
            c_max = 1.0 if self.c is None else float(np.max(self.c))
            self.lip = 0.125 * (1.0 - lam) * c_max * np.linalg.norm(A, 2) ** 2 + lam

    def objective(self, beta, eta, cols):
        terms = self.t * eta - np.logaddexp(0.0, eta)
        loglik = terms.sum(axis=0) if self.c is None else self.c @ terms
        b = beta[: beta.shape[0] - self.n_unpen]
        return 0.5 * (1.0 - self.lam) * loglik - 0.5 * self.lam * np.sum(b * b, axis=0)

    def gradient(self, beta, eta):
        r = self.t - expit(eta)
        if self.c is not None:
            r = self.c[:, None] * r
        return 0.5 * (1.0 - self.lam) * self.A.T @ r - self.lam * self.mask[:, None] * beta

    def direction(self, beta, eta, cols):
        g = self.gradient(beta, eta)
        if self.solver == "gradient":
            step = g / self.lip
        else:
            pi = expit(eta[:, 0])
            w = pi * (1.0 - pi) if self.c is None else self.c * pi * (1.0 - pi)
            H = 0.5 * (1.0 - self.lam) * (self.A.T * w) @ self.A + np.diag(self.lam * self.mask)
            H[np.diag_indices_from(H)] += 1e-12 * max(1.0, np.trace(H) / H.shape[0])
            step = cho_solve(cho_factor(H), g)
        return step, self.A @ step

    def converged(self, old, new, beta, eta, cols, tol):
        g = self.gradient(beta, eta)
        return np.max(np.abs(g), axis=0) <= tol * np.maximum(1.0, np.abs(new))


def maximise(A, t, lam, mask, solver, max_iter, tol, sample_weight=None):
    """``(beta, objective, n_iter, converged)``: the maximiser of ``l^lam`` on the design
    ``A`` (intercept column last if any, not penalised where ``mask`` is 0) for ``t`` in
    {0, 1}, by Newton's method with step halving (``solver="newton"``) or gradient ascent
    (``"gradient"``) (:class:`RidgeLogisticProblem`); it stops when no gradient entry
    exceeds ``tol`` (relative to the objective)."""
    problem = RidgeLogisticProblem(A, t, lam, mask, solver, sample_weight)
    beta = np.zeros((A.shape[1], 1))
    r = newton(problem, beta, A @ beta, tol=tol, max_iter=max_iter)
    return r.x[:, 0], float(r.objective[0]), int(r.n_iter[0]), bool(r.converged[0])
