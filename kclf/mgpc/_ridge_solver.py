"""The solver of the weighted ridge logistic regression (private): Newton-Raphson or
gradient ascent on ``l^lam`` (Fradi, Samir & Yao, Sec. 2.2; :class:`kclf.WeightedRidgeLogistic`).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.special import expit


def weighted_ridge_objective(beta, X, t, lam, n_unpenalized=0):
    """``l^lam(beta)`` for design ``X`` (intercept column last if any), ``t`` in {0, 1};
    the last ``n_unpenalized`` coefficients are not penalised."""
    eta = X @ beta
    loglik = t @ eta - np.logaddexp(0.0, eta).sum()
    b = beta[: beta.size - n_unpenalized]
    return 0.5 * (1.0 - lam) * loglik - 0.5 * lam * b @ b


def _gradient(beta, X, t, lam, penalty_mask):
    return 0.5 * (1.0 - lam) * X.T @ (t - expit(X @ beta)) - lam * penalty_mask * beta


def maximise(A, t, lam, mask, solver, max_iter, tol):
    """``(beta, objective, n_iter, converged)``: the maximiser of ``l^lam`` on the design
    ``A`` (intercept column last if any, not penalised where ``mask`` is 0) for ``t`` in
    {0, 1}, by Newton's method with step halving (``solver="newton"``) or gradient ascent
    with the step ``1 / L`` of the gradient's Lipschitz bound; it stops when no gradient
    entry exceeds ``tol`` (relative to the objective)."""
    n_unpen = int(mask.size - np.count_nonzero(mask))
    beta = np.zeros(A.shape[1])
    obj = weighted_ridge_objective(beta, A, t, lam, n_unpen)
    converged = False
    lip = 0.125 * (1.0 - lam) * np.linalg.norm(A, 2) ** 2 + lam
    for it in range(1, max_iter + 1):
        g = _gradient(beta, A, t, lam, mask)
        if np.abs(g).max() <= tol * max(1.0, abs(obj)):
            converged = True
            it -= 1
            break
        if solver == "newton":
            pi = expit(A @ beta)
            w = pi * (1.0 - pi)
            H = 0.5 * (1.0 - lam) * (A.T * w) @ A + np.diag(lam * mask)
            H[np.diag_indices_from(H)] += 1e-12 * max(1.0, np.trace(H) / H.shape[0])
            step = cho_solve(cho_factor(H), g)
            s = 1.0
            while True:
                new = beta + s * step
                new_obj = weighted_ridge_objective(new, A, t, lam, n_unpen)
                if new_obj >= obj - 1e-12 * abs(obj) or s < 1e-10:
                    break
                s /= 2.0
            beta, obj = new, new_obj
        else:
            beta = beta + g / lip
            obj = weighted_ridge_objective(beta, A, t, lam, n_unpen)
    return beta, obj, it, converged
