"""Multinomial (softmax) kernel logistic regression on the Nystroem design (private).

One model over all ``c`` classes on one shared basis, as scikit-learn's
``LogisticRegression`` fits several classes: with the design ``Phi`` (n, m) of
:func:`kclf.klr._solver.nystroem_design` (its last column the intercept's ones) and weights
``W`` (m, c), ``F = Phi W`` and ``P(k | x_i) = softmax(F_i)_k``, ``W`` maximises

    Phi(W) = sum_i c_i [F_{i y_i} - log sum_k e^{F_ik}] - lam / 2 ||W||_F^2,

the binary model's objective (:class:`kclf.klr._solver.PrimalProblem`) with the softmax
likelihood: summed, not averaged, log-likelihood (``c_i`` the sample weights) and the
intercept penalised like the other weights.  The likelihood does not change when one
vector is added to every column of ``W``, so the penalty puts the maximiser where the
columns sum to zero; with two classes ``W = [-w/2, w/2]`` and ``F_2 - F_1 = Phi w``, the
penalty ``lam / 2 (||w||^2 / 4 + ||w||^2 / 4) = (lam / 2) / 2 ||w||^2``: the softmax model at
``lam`` is the binary model at ``lam / 2``.

:class:`MultinomialProblem` gives :func:`kclf._newton.newton` its steps.  The Hessian of
``-Phi`` is ``H = sum_i c_i (diag(p_i) - p_i p_i^T) (x) phi_i phi_i^T + lam I`` (``mc x mc``);
a product with it costs two passes over the design (``4 n m c`` flops).  Where ``m c`` is at
most :data:`EXACT_MAX` ``H`` is formed and factorised (exact Newton steps); else the step
solves ``H d = g`` by conjugate gradients on Hessian products, preconditioned by the
Hessian's diagonal blocks ``Phi^T diag(c p_k (1 - p_k)) Phi + lam I`` of an earlier iterate
(:class:`kclf.klr._solver.HessianCache`, one Gram matrix per class, kept along a lambda
path), to a relative residual of ``eta`` (inexact Newton, as the binary primal path); where
``cg_max_iter`` iterations do not reach it, the blocks are refreshed at the current iterate
and CG goes on for up to ``REFRESHED_CG_MAX_ITER`` more.  A CG iterate started from zero
always raises the quadratic model, so the step is an ascent direction and the loop's
halving makes it one of ``Phi``.

NumPy only: the array API path refuses ``multi_class="multinomial"`` in one line.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from scipy.special import logsumexp, softmax

from .._newton import NewtonProblem, conjugate_gradients, newton
from .._parallel import serial_blas
from ._solver import HessianCache

#: up to this many unknowns (``n_components + 1`` times the number of classes) the Hessian
#: is formed and each Newton step solved exactly
EXACT_MAX = 400
#: CG iterations after the preconditioner is refreshed at the current iterate
REFRESHED_CG_MAX_ITER = 200


def check_multinomial(estimator, is_array_api=False):
    """One-line ``ValueError`` where ``multi_class="multinomial"`` cannot be fitted: without
    ``n_components`` (the softmax model is fitted on the Nystroem design only), or for array
    API inputs (NumPy only)."""
    if estimator.multi_class != "multinomial":
        return
    name = type(estimator).__name__
    if estimator.n_components is None:
        raise ValueError(
            f"{name}: multi_class='multinomial' needs n_components (the softmax model is "
            "fitted on the Nystroem design only; the exact kernel is not supported)"
        )
    if is_array_api:
        raise ValueError(
            f"{name}: multi_class='multinomial' is not supported for array API inputs "
            "(array_api_dispatch=True); pass NumPy arrays for it"
        )


def softmax_objective(F, W, Y, lam, weights=None):
    """``Phi(W)`` per column of the last axis (``F``: (n, c, T), ``W``: (m, c, T), ``Y``:
    (n, c) one-hot, ``lam``: (T,))."""
    loglik = np.sum(Y[:, :, None] * F, axis=1) - logsumexp(F, axis=1)
    if weights is not None:
        loglik = weights[:, None] * loglik
    return np.sum(loglik, axis=0) - 0.5 * lam * np.sum(W * W, axis=(0, 1))


class MultinomialProblem(NewtonProblem):
    """The softmax model's Newton steps (module docstring) on a
    :class:`kclf.klr._solver.Design` ``design`` (n, m) for one-hot targets ``Y`` (n, c),
    formed (:meth:`~kclf.klr._solver.Design.formed`: ``N G N^T`` of the factored form, with
    ``N = K_mm^{-1/2}`` large where the landmarks are nearly collinear, loses the Gram
    matrices' definiteness to round-off far above a small ``lam``):
    ``x`` is ``W`` of shape (m, c, T), ``z`` is ``F = Phi W`` (n, c, T), one ``lam`` per
    column ``T``."""

    def __init__(self, design, Y, lam, *, weights=None, cache=None, eta=0.1, cg_max_iter=10):
        self.design, self.Y = design, Y
        n, c = Y.shape
        m = design.shape[1]
        self.lam = np.atleast_1d(np.asarray(lam, dtype=float))
        self.weights = None if weights is None else np.asarray(weights, dtype=float)
        self.cache = HessianCache() if cache is None else cache
        self.eta, self.cg_max_iter = eta, cg_max_iter
        self.exact = m * c <= EXACT_MAX
        self.Phi = design.formed().C if self.exact else None

    def objective(self, W, F, cols):
        return softmax_objective(F, W, self.Y, self.lam[cols], self.weights)

    def _weighted(self, A):
        if self.weights is None:
            return A
        return self.weights.reshape((-1,) + (1,) * (A.ndim - 1)) * A

    def _hess_mul(self, P, V, lam):
        """``(H V, Phi V)`` for ``V`` (m, c, T) at the probabilities ``P`` (n, c, T)."""
        m, c, T = V.shape
        U = self.design.forward(V.reshape(m, c * T)).reshape(-1, c, T)
        Q = self._weighted(P * (U - np.sum(P * U, axis=1, keepdims=True)))
        HV = self.design.backward(Q.reshape(-1, c * T)).reshape(m, c, T) + lam * V
        return HV, U

    def direction(self, W, F, cols):
        m, c, T = W.shape
        P = softmax(F, axis=1)
        lam = self.lam[cols]
        R = self._weighted(self.Y[:, :, None] - P)
        G = self.design.backward(R.reshape(-1, c * T)).reshape(m, c, T) - lam * W
        if self.exact:  # small products: one BLAS thread (threads of a busy machine spin)
            with serial_blas():
                dW = np.stack(
                    [self._exact_step(P[:, :, t], G[:, :, t], lam[t]) for t in range(T)], 2
                )
            return dW, self.design.forward(dW.reshape(m, c * T)).reshape(-1, c, T)
        dW = np.empty_like(W)
        dF = np.empty_like(F)
        for t in range(T):  # the columns are lambdas of one path: few, often one
            dW[:, :, t], dF[:, :, t] = self._cg_step(P[:, :, t], G[:, :, t], lam[t], cols[t])
        return dW, dF

    def _exact_step(self, P, G, lam):
        """``H^{-1} g`` with ``H`` formed (``m c`` at most :data:`EXACT_MAX`)."""
        m, c = G.shape
        w = np.ones(P.shape[0]) if self.weights is None else self.weights
        H = np.empty((c, m, c, m))
        for k in range(c):
            for j in range(k, c):
                d = w * P[:, k] * ((k == j) - P[:, j])
                H[k, :, j, :] = self.Phi.T @ (d[:, None] * self.Phi)
                H[j, :, k, :] = H[k, :, j, :].T
        H = H.reshape(c * m, c * m)
        H[np.diag_indices_from(H)] += lam
        d = scipy.linalg.solve(H, G.T.reshape(-1), assume_a="pos", check_finite=False)
        return d.reshape(c, m).T

    def _refresh(self, t, P):
        for k in range(P.shape[1]):
            d = P[:, k] * (1.0 - P[:, k])
            d = d if self.weights is None else self.weights * d
            self.cache.refresh(self.design, [(t, k)], d[:, None])

    def solve_block(self, key, lam, R):
        """``(G_key + lam I)^{-1} R`` for every column of ``R`` (one factorisation)."""
        r = R.shape[1]
        return self.cache.solve([key] * r, np.full(r, lam), R)

    def _cg_step(self, P, G, lam, t):
        """The preconditioned CG step of one column (module docstring)."""
        m, c = G.shape
        if not self.cache.has([(t, 0)])[0]:
            self._refresh(t, P)

        def precondition(Rs, sub):
            Rs = Rs.reshape(m, c, -1)
            return np.stack(
                [self.solve_block((t, k), lam, Rs[:, k]) for k in range(c)], axis=1
            ).reshape(m * c, -1)

        def matvec(V, sub):
            HV, U = self._hess_mul(P[:, :, None], V.reshape(m, c, -1), lam)
            return HV.reshape(m * c, -1), U.reshape(-1, V.shape[1])

        g = G.reshape(m * c, 1)
        x0 = precondition(g, None)
        x, u, _, ok = conjugate_gradients(
            matvec, g, x0, self.eta, self.cg_max_iter, precondition, track=True
        )
        if not ok[0]:  # the blocks have gone stale: refresh them, and go on from x
            self._refresh(t, P)
            x, u, _, _ = conjugate_gradients(
                matvec, g, x, self.eta, REFRESHED_CG_MAX_ITER, precondition, track=True
            )
        return x.reshape(m, c), u.reshape(-1, c)


def fit_multinomial(design, Y, lam, tol=1e-6, max_iter=100, W0=None, weights=None, cache=None):
    """The softmax model on ``design`` (a :class:`kclf.klr._solver.Design`) for one-hot
    ``Y`` (n, c) at one ``lam`` (from ``W0``, default 0).  Returns ``(W, F, n_iter,
    converged)``, ``W`` of shape (m, c), ``F = Phi W`` (n, c)."""
    m, c = design.shape[1], Y.shape[1]
    problem = MultinomialProblem(design, Y, lam, weights=weights, cache=cache)
    W = np.zeros((m, c, 1)) if W0 is None else np.array(W0, dtype=float).reshape(m, c, 1)
    F = design.forward(W[:, :, 0])[:, :, None]
    r = newton(problem, W, F, tol=tol, max_iter=max_iter)
    return r.x[:, :, 0], r.z[:, :, 0], int(r.n_iter[0]), bool(r.converged[0])


def multinomial_path(train, valid, Ytr, lams, tol, max_iter, conv, weights=None):
    """Softmax probabilities on the validation rows, shape (n_lams, n_va, c), of the fits on
    the training rows' design ``train`` at every lambda, from the largest to the smallest,
    each started from the previous solution, the preconditioner's Gram matrices kept along
    the path; appends the converged flags to ``conv``."""
    cache = HessianCache()
    W = None
    out = np.empty((lams.size, valid.shape[0], Ytr.shape[1]))
    for li in np.argsort(-lams, kind="stable"):
        W, _, _, ok = fit_multinomial(train, Ytr, lams[li], tol, max_iter, W, weights, cache)
        conv.append(np.array([ok]))
        out[li] = softmax(valid.forward(W), axis=1)
    return out
