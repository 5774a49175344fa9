"""Correlated logistic model (CorrLog) for multilabel classification.

Li, Xie, You, Bian and Tao, "Correlated Logistic Model With Elastic Net Regularization for
Multilabel Image Classification", IEEE TIP 2016 (arXiv:1904.08098).

Model, Eq. (4), labels ``y in {-1, +1}^m``::

    P(y | x) = exp( sum_i y_i beta_i^T x + sum_{i<j} alpha_ij y_i y_j ) / Z(x)

Learning, Eq. (10)-(13): elastic-net regularised maximum pseudo-likelihood. The conditional
of one label given the rest, Eq. (11), is ``sigmoid(2 y_i (beta_i^T x + sum_j alpha_ij y_j))``,
so the negative log pseudo-likelihood (12) is a sum of logistic losses, convex in
``(beta, alpha)``. The objective minimised here is::

    (1/n) sum_l sum_i log(1 + exp(-2 y_li (beta_i^T x_l + sum_{j != i} alpha_ij y_lj)))
      + rho2 * (||W||_2^2 + c ||alpha||_2^2) + rho1 * (||W||_1 + c ||alpha||_1)

with ``W`` the weights without the intercepts and ``c = coupling_scale``. In the paper's
notation (8), ``lambda_1 = rho2``, ``lambda_2 = c * rho2`` and ``epsilon = rho1 / rho2``.

Solver. The smooth part is minimised with the non-smooth l1 part by proximal gradient with
soft thresholding (Algorithm 1, Eq. (19)-(20)), accelerated by FISTA (Remark 2):

* the fields (11) of all labels are two dense products, ``F = X W + S A`` (one with the
  data, one with the label matrix), and the gradient (15)-(16) two more, ``X^T G`` and
  ``S^T G``: no loop over labels;
* features and label columns are centred inside the solver (the intercepts absorb the
  means, and the penalty does not involve the intercepts, so the minimiser is the same).
  The mostly-constant +-1 label columns are otherwise nearly parallel to the intercept,
  which inflates the Lipschitz constant of the gradient by about ``m``;
* the step is ``1/L`` with ``L`` from the bound ``||Phi||^2 / n`` on the Hessian
  (``Phi`` the linear map from parameters to fields, its norm by Lanczos), then
  backtracking: ``L`` shrinks by :data:`STEP_SHRINK` after each accepted step and
  doubles until the sufficient-decrease condition holds, so the step follows the local
  curvature of the logistic loss, which is far below the global bound once most
  margins are large (measured: 1/100 to 1/4 of it);
* ``monotone=True`` rejects any step that would raise the objective (Beck and Teboulle's
  monotone FISTA) and then restarts the momentum, as does the gradient test of
  O'Donoghue and Candes (2015) when the momentum points uphill; ``monotone=False`` is
  plain FISTA.

Cross-validation solves, in each fold, the whole ``rho2 x rho1`` grid as a regularisation
path from the strongest penalty to the weakest (glmnet's way): each setting starts from
the solution of its neighbour with the stronger ``rho2`` or the stronger ``rho1``,
whichever has the smaller objective at the new setting. Along the path, sequential strong
rules (Tibshirani et al., 2012) set aside the features whose gradient is far below the
new ``rho1``; the fit runs on the others, and a KKT check over all set-aside features adds
back any that violates ``|grad| <= rho1`` and solves again, so screening never changes the
solution. The folds run in parallel threads (``n_jobs``), each with single-threaded BLAS,
so the result does not depend on ``n_jobs``.

Prediction is the joint MAP (21) by loopy max-product belief propagation (Sec. III-B) or by
exact enumeration of the ``2^m`` label vectors; marginals by enumeration up to
:data:`MAX_EXACT_LABELS` labels, sum-product belief propagation beyond.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from scipy.sparse.linalg import LinearOperator, eigsh
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from . import belief_propagation as bp

#: Default CV grids (used when ``rho1`` / ``rho2`` are None), strongest first.
RHO1_GRID = (1e-2, 1e-3, 1e-4, 0.0)
RHO2_GRID = (1.0, 0.3, 0.1, 0.03, 0.01, 1e-3)
#: Up to this many labels, exact enumeration of the ``2^m`` label vectors.
MAX_EXACT_LABELS = 12
#: Backtracking: ``L`` is multiplied by this after every accepted step, down to
#: ``L_FLOOR`` times the Lipschitz bound (which keeps the stopping rule's residual bound).
STEP_SHRINK = 0.9
L_FLOOR = 1e-4
#: Belief propagation: rows that do not converge are run again with this damping.
BP_RETRY_DAMPING = 0.5
#: Warn when more than this fraction of the rows' belief propagation did not converge.
BP_WARN_FRACTION = 0.05


# ---------------------------------------------------------------------------------------
# the pseudo-likelihood objective, Eq. (12)-(16)
# ---------------------------------------------------------------------------------------


class _Scaling:
    """Affine map ``x -> (x - mean) T`` for "standardize", "whiten" (ZCA) or None."""

    def __init__(self, X, scaling, whiten_eps):
        d = X.shape[1]
        self.kind = scaling
        self.mean = np.zeros(d)
        if scaling is None:
            return
        self.mean = X.mean(axis=0)
        Xc = X - self.mean
        if scaling == "standardize":
            sd = Xc.std(axis=0)
            sd[sd <= 1e-12 * max(1.0, float(np.abs(X).max(initial=0.0)))] = 1.0
            self.scale = 1.0 / sd
            return
        cov = Xc.T @ Xc / max(X.shape[0] - 1, 1)
        evals, evecs = np.linalg.eigh(cov)
        evals = np.maximum(evals, 0.0)
        root = np.sqrt(evals + whiten_eps * max(float(evals.mean()), 1e-300))
        self.T = (evecs / root) @ evecs.T
        self.T_inv = (evecs * root) @ evecs.T

    def transform(self, X):
        if self.kind is None:
            return X
        if self.kind == "standardize":
            return (X - self.mean) * self.scale
        return (X - self.mean) @ self.T

    def to_raw(self, W):
        """Weights (d, m) on scaled features -> weights on raw features."""
        if self.kind is None:
            return W
        if self.kind == "standardize":
            return self.scale[:, None] * W
        return self.T @ W

    def from_raw(self, W):
        if self.kind is None:
            return W
        if self.kind == "standardize":
            return W / self.scale[:, None]
        return self.T_inv @ W


class _Data:
    """A training set in the solver's coordinates.

    Fields ``F = Xc W + 1 b^T + Sc A(a)`` with centred features ``Xc`` and centred label
    columns ``Sc`` (module docstring); the margins use the +-1 labels ``S``.
    """

    def __init__(self, Xs, S, couplings):
        self.n, self.d = Xs.shape
        self.m = S.shape[1]
        self.x_mean = Xs.mean(axis=0)
        self.Xc = Xs - self.x_mean
        self.S = S
        self.s_mean = S.mean(axis=0)
        self.Sc = S - self.s_mean
        self.iu = np.triu_indices(self.m, k=1)
        self.n_pairs = len(self.iu[0]) if couplings else 0
        self._lip = None

    @property
    def lipschitz(self):
        """Upper bound on the Lipschitz constant of the loss gradient.

        The loss has second derivative ``4 s(1 - s) <= 1`` in each field, so its Hessian is
        at most ``Phi^T Phi / n``. The intercept column is orthogonal to the centred
        columns, and ``||S A(a)||_F <= ||Sc|| ||A||_F = sqrt(2) ||Sc|| ||a||``, hence
        ``||Phi||^2 <= max(n, ||[Xc, sqrt(2) Sc]||_2^2)``; the spectral norm comes from
        Lanczos (relative accuracy 1e-6, inflated by 1e-4).
        """
        if self._lip is None:
            M = self.Xc if not self.n_pairs else np.hstack([self.Xc, np.sqrt(2.0) * self.Sc])
            k = M.shape[1]
            if min(M.shape) <= 32:
                top = float(np.linalg.norm(M, 2)) ** 2 if M.size else 0.0
            else:
                op = LinearOperator((k, k), matvec=lambda v: M.T @ (M @ v), dtype=float)
                v0 = np.linspace(1.0, 2.0, k)
                top = float(eigsh(op, k=1, which="LA", tol=1e-6, v0=v0)[0][0])
            self._lip = max(1.0, top * (1.0 + 1e-4) / self.n)
        return self._lip

    def split(self, theta):
        dm = self.d * self.m
        return theta[:dm].reshape(self.d, self.m), theta[dm : dm + self.m], theta[dm + self.m :]

    def coupling_matrix(self, a):
        A = np.zeros((self.m, self.m))
        if self.n_pairs:
            A[self.iu] = a
            A = A + A.T
        return A

    def initial(self):
        """W = 0, alpha = 0, intercepts at the independent label log-odds."""
        theta = np.zeros(self.d * self.m + self.m + self.n_pairs)
        p = np.clip((self.S > 0).mean(axis=0), 1e-3, 1 - 1e-3)
        theta[self.d * self.m : self.d * self.m + self.m] = 0.5 * np.log(p / (1 - p))
        return theta

    def loss(self, F):
        """Eq. (12) divided by n."""
        return float(np.logaddexp(0.0, -2.0 * self.S * F).sum()) / self.n

    def dloss(self, F):
        """``d loss / d F``, Eq. (15)-(16): ``-2 y sigmoid(-2 y F) / n``."""
        return -2.0 * self.S * expit(-2.0 * self.S * F) / self.n

    def unary(self, theta, Xc_new):
        """Fields ``beta_i^T x`` of centred new rows (the couplings' mean folded back)."""
        W, b, a = self.split(theta)
        A = self.coupling_matrix(a)
        rows = np.flatnonzero(np.any(W != 0, axis=1))
        return Xc_new[:, rows] @ W[rows] + (b - A @ self.s_mean)

    def to_raw(self, theta, scaling):
        """``(coef (m, d), intercept (m,), couplings (m, m))`` on the raw features."""
        W, b, a = self.split(theta)
        A = self.coupling_matrix(a)
        Wr = scaling.to_raw(W)
        b_s = b - self.x_mean @ W - A @ self.s_mean
        return Wr.T, b_s - scaling.mean @ Wr, A

    def from_raw(self, coef, intercept, A, scaling):
        Ws = scaling.from_raw(coef.T)
        b_s = intercept + scaling.mean @ coef.T
        theta = np.concatenate([Ws.ravel(), b_s + self.x_mean @ Ws + A @ self.s_mean])
        return np.concatenate([theta, A[self.iu] if self.n_pairs else []])


class _Objective:
    """The objective on a working set of feature rows (the others held at zero).

    ``theta = [W_keep.ravel(), b, a]``; penalty weights 1 on weights, 0 on intercepts and
    ``coupling_scale`` on couplings.
    """

    def __init__(self, data, keep, rho1, rho2, coupling_scale):
        self.data, self.keep = data, keep
        self.X = data.Xc if keep is None else data.Xc[:, keep]
        self.k = self.X.shape[1]
        m = data.m
        self.nw = self.k * m
        self.pen = np.concatenate(
            [np.ones(self.nw), np.zeros(m), np.full(data.n_pairs, float(coupling_scale))]
        )
        self.rho1, self.rho2 = float(rho1), float(rho2)
        self.l1w = self.rho1 * self.pen
        self.lipschitz = data.lipschitz + 2.0 * self.rho2 * float(self.pen.max(initial=0.0))

    def restrict(self, theta):
        if self.keep is None:
            return theta.copy()
        d = self.data
        W, b, a = d.split(theta)
        return np.concatenate([W[self.keep].ravel(), b, a])

    def expand(self, theta_w):
        if self.keep is None:
            return theta_w.copy()
        d = self.data
        W = np.zeros((d.d, d.m))
        W[self.keep] = theta_w[: self.nw].reshape(self.k, d.m)
        return np.concatenate([W.ravel(), theta_w[self.nw :]])

    def fields(self, theta):
        d = self.data
        W = theta[: self.nw].reshape(self.k, d.m)
        F = self.X @ W
        F += theta[self.nw : self.nw + d.m]
        if d.n_pairs:
            F += d.Sc @ d.coupling_matrix(theta[self.nw + d.m :])
        return F

    def smooth(self, theta, F):
        """Loss (12)/n + squared-l2 penalty at ``theta`` with fields ``F``."""
        return self.data.loss(F) + self.rho2 * float((self.pen * theta) @ theta)

    def grad(self, theta, F):
        d = self.data
        G = d.dloss(F)
        parts = [(self.X.T @ G).ravel(), G.sum(axis=0)]
        if d.n_pairs:
            GA = d.Sc.T @ G  # GA[j, i] = sum_l sc_lj G_li
            parts.append((GA + GA.T)[d.iu])
        return np.concatenate(parts) + 2.0 * self.rho2 * self.pen * theta

    def l1(self, theta):
        return float(self.l1w @ np.abs(theta)) if self.rho1 else 0.0

    def prox(self, v, step):
        """Soft thresholding, Eq. (19)-(20): ``sign(v) max(|v| - step rho1 pen, 0)``."""
        if not self.rho1:
            return v
        return np.sign(v) * np.maximum(np.abs(v) - step * self.l1w, 0.0)


def _fista(obj, x, tol, max_iter, monotone=True, step="backtracking", L=None, refresh=50):
    """FISTA on ``f + g`` from ``x``; returns x, its fields, objective path, converged, L.

    Stops when an accepted step changes the objective by at most ``tol`` relatively; with
    ``monotone=True`` that step must be a plain proximal step from the current point (a
    momentum step that qualifies is followed by one). Such a step ``x -> z`` decreases the
    objective by at least ``L/2 ||z - x||^2``, so at the stop ``||z - x|| <=
    sqrt(2 tol |F| / L)`` and the optimality residual at ``z`` is at most
    ``(L_f + L) ||z - x||`` (``L_f`` the gradient's Lipschitz constant): ``tol`` bounds how
    far from optimal the result is. The fields (11) are linear in theta, so those of the
    extrapolated point are the same combination of the fields of the last two iterates
    (refreshed every ``refresh`` steps): one product with the data for the gradient and one
    for the fields per step.
    """
    backtrack = step == "backtracking"
    L = obj.lipschitz if (L is None or not backtrack) else L
    Fx = obj.fields(x)
    fx = obj.smooth(x, Fx)
    Px = fx + obj.l1(x)
    y, Fy, fy, t = x, Fx, fx, 1.0
    path, converged = [Px], False
    for k in range(1, max_iter + 1):
        gy = obj.grad(y, Fy)
        for _ in range(64):
            z = obj.prox(y - gy / L, 1.0 / L)
            Fz = obj.fields(z)
            fz = obj.smooth(z, Fz)
            if not backtrack:
                break
            dz = z - y
            if fz <= fy + gy @ dz + 0.5 * L * (dz @ dz) + 1e-12 * abs(fy):
                break
            L *= 2.0
        Pz = fz + obj.l1(z)
        plain = y is x
        if monotone and Pz > Px:
            path.append(Px)
            if plain:
                # a proximal step from x itself cannot raise the objective but by rounding
                converged = True
                break
            # rejected: restart the momentum from x (a plain proximal step next)
            y, Fy, fy, t = x, Fx, fx, 1.0
            continue
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_new
        if monotone and (y - z) @ (z - x) > 0:
            beta, t_new = 0.0, 1.0  # gradient restart (O'Donoghue and Candes, 2015)
        x_old, Fx_old, P_old = x, Fx, Px
        x, Fx, fx, Px = z, Fz, fz, Pz
        path.append(Px)
        if abs(P_old - Px) <= tol * max(abs(P_old), 1e-300):
            if plain or not monotone:
                converged = True
                break
            beta, t_new = 0.0, 1.0  # confirm by a plain proximal step
        if beta:
            y = x + beta * (x - x_old)
            Fy = obj.fields(y) if k % refresh == 0 else Fx + beta * (Fx - Fx_old)
            fy = obj.smooth(y, Fy)
        else:
            y, Fy, fy = x, Fx, fx
        t = t_new
        if backtrack:
            L = max(L * STEP_SHRINK, L_FLOOR * obj.lipschitz)
    return x, Fx, path, converged, L


def _solve(data, rho1, rho2, coupling_scale, theta0, opts, grad0=None, rho1_prev=None):
    """Minimise at ``(rho1, rho2)`` from ``theta0`` with strong-rule screening and KKT check.

    ``grad0`` is the loss gradient in ``W`` (d, m) at ``theta0``, solved at ``rho1_prev``:
    feature ``j`` is set aside when it is zero in ``theta0`` and
    ``max_i |grad0_ji| < 2 rho1 - rho1_prev`` (the sequential strong rule). After the fit
    on the kept features, any set-aside feature with ``max_i |grad_ji| > rho1`` (a KKT
    violation: it would move off zero) is added and the fit repeated.

    Returns ``theta`` (full), its fields, the loss gradient in ``W`` (d, m) and a dict with
    the objective path, ``n_iter``, ``converged``, the KKT rounds and the kept features.
    """
    d, m = data.d, data.m
    W0 = theta0[: d * m].reshape(d, m)
    keep = np.ones(d, dtype=bool)
    if opts.get("screen", True) and rho1 > 0 and grad0 is not None:
        thr = 2.0 * rho1 - (rho1 if rho1_prev is None else max(rho1_prev, rho1))
        keep = np.any(W0 != 0, axis=1) | (np.abs(grad0).max(axis=1, initial=0.0) >= thr)
    theta, path, n_iter, rounds, L = theta0, [], 0, 0, opts.get("L")
    while True:
        rounds += 1
        obj = _Objective(data, None if keep.all() else keep, rho1, rho2, coupling_scale)
        tw, F, p, converged, L = _fista(
            obj,
            obj.restrict(theta),
            opts["tol"],
            max(opts["max_iter"] - n_iter, 1),
            opts["monotone"],
            opts["step"],
            L,
        )
        path += p if not path else p[1:]
        n_iter += len(p) - 1
        theta = obj.expand(tw)
        gW = data.Xc.T @ data.dloss(F)
        if keep.all() or rho1 == 0:
            break
        violated = ~keep & (np.abs(gW).max(axis=1, initial=0.0) > rho1)
        if not violated.any():
            break
        keep |= violated
    info = {
        "path": np.asarray(path),
        "n_iter": n_iter,
        "converged": converged,
        "kkt_rounds": rounds,
        "kept": keep,
        "L": L,
    }
    return theta, F, gW, info


# ---------------------------------------------------------------------------------------
# decoding
# ---------------------------------------------------------------------------------------


def _decode(U, A, decode, inference, bp_max_iter, bp_damping):
    """0/1 labels (n, m) and the number of rows whose belief propagation did not converge.

    ``decode="map"``: the joint MAP (21), max-product BP or enumeration (``inference``);
    ``"marginal"``: the marginals of :func:`_marginals` thresholded at 1/2.
    """
    if decode == "marginal":
        P, n_bad = _marginals(U, A, inference, bp_max_iter, bp_damping)
        return (P > 0.5).astype(int), n_bad
    if inference == "exact":
        return (bp.exact_map(U, A) > 0).astype(int), 0
    S, (_, _, conv) = bp.max_product(
        U,
        A,
        bp_max_iter,
        bp_damping,
        return_info=True,
        retry_damping=BP_RETRY_DAMPING,
        polish=True,
    )
    return (S > 0).astype(int), int(np.sum(~conv))


def _marginals(U, A, inference, bp_max_iter, bp_damping):
    """``P(y_i = 1 | x)``: enumeration up to :data:`MAX_EXACT_LABELS` labels (or with
    ``inference="exact"``), sum-product BP beyond; and the non-converged BP row count."""
    if inference == "exact" or U.shape[1] <= MAX_EXACT_LABELS:
        return bp.exact_marginals(U, A), 0
    P, (_, _, conv) = bp.sum_product(
        U, A, bp_max_iter, bp_damping, return_info=True, retry_damping=BP_RETRY_DAMPING
    )
    return P, int(np.sum(~conv))


def _score(Y_true, Y_pred, decode):
    """CV criterion: subset accuracy for the MAP, 1 - Hamming loss for the marginals."""
    if decode == "map":
        return float(np.mean(np.all(Y_pred == Y_true, axis=1)))
    return 1.0 - float(np.mean(Y_pred != Y_true))


# ---------------------------------------------------------------------------------------
# cross-validation: one fold's regularisation path
# ---------------------------------------------------------------------------------------


def _fold_path(params, X, Y, train, test, rho1s, rho2s):
    """Scores and raw solutions of one fold over the grid ``rho2s x rho1s`` (strongest
    first), solved as a warm-started path (module docstring)."""
    Ytr = Y[train]
    active = _non_constant(Ytr)
    n2, n1 = len(rho2s), len(rho1s)
    scores = np.zeros((n2, n1))
    n_iter = np.zeros((n2, n1), dtype=int)
    solutions = {}
    base = np.repeat(Ytr[:1], len(test), axis=0)  # constant labels predicted constant
    if not active.any():
        scores[:] = _score(Y[test], base, params["decode"])
        return scores, n_iter, solutions, active
    scaling = _Scaling(X[train], params["scaling"], params["whiten_eps"])
    data = _Data(scaling.transform(X[train]), 2.0 * Ytr[:, active] - 1.0, params["couplings"])
    Xte = scaling.transform(X[test]) - data.x_mean
    opts = {
        "tol": params["cv_tol"],
        "max_iter": params["max_iter"],
        "monotone": params["monotone"],
        "step": params["step"],
    }
    c = params["coupling_scale"]
    previous_row = [None] * n1
    for a, r2 in enumerate(rho2s):
        row = []
        for b, r1 in enumerate(rho1s):
            starts = [s for s in (previous_row[b], row[b - 1] if b else None) if s is not None]
            if starts:

                def objective(s, r1=r1, r2=r2):
                    W, _, al = data.split(s["theta"])
                    sq = float(W.ravel() @ W.ravel()) + c * float(al @ al)
                    ab = float(np.abs(W).sum()) + c * float(np.abs(al).sum())
                    return s["loss"] + r2 * sq + r1 * ab

                start = min(starts, key=objective)
                theta0, grad0, r1_prev = start["theta"], start["grad"], start["rho1"]
                opts["L"] = start["L"]
            else:
                theta0, grad0, r1_prev = data.initial(), None, None
            theta, F, gW, info = _solve(data, r1, r2, c, theta0, opts, grad0, r1_prev)
            row.append(
                {"theta": theta, "loss": data.loss(F), "grad": gW, "rho1": r1, "L": info["L"]}
            )
            n_iter[a, b] = info["n_iter"]
            coef, intercept, A = data.to_raw(theta, scaling)
            solutions[(a, b)] = (coef, intercept, A)
            pred = base.copy()
            pred[:, active], _ = _decode(
                data.unary(theta, Xte),
                A,
                params["decode"],
                params["inference"],
                params["bp_max_iter"],
                params["bp_damping"],
            )
            scores[a, b] = _score(Y[test], pred, params["decode"])
        previous_row = row
    return scores, n_iter, solutions, active


# ---------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------


class CorrLog(ClassifierMixin, BaseEstimator):
    """Correlated logistic model (CorrLog) for multilabel classification.

    Eq. (4) of Li et al. (2016): independent logistic regressions per label plus pairwise
    label couplings ``alpha_ij``, learned by elastic-net regularised maximum
    pseudo-likelihood (Eq. (10)-(13), Algorithm 1 with FISTA, Remark 2; solver and
    cross-validation path in the module docstring) and predicting the joint MAP label
    vector, Eq. (21), or the thresholded marginals.

    Parameters
    ----------
    rho1 : float >= 0 or None, default=None
        Weight of the l1 part of the elastic net (``lambda * epsilon`` in Eq. (8)). None
        chooses it, jointly with ``rho2``, from ``rho1_grid`` by ``cv``-fold
        cross-validation on the training data (the criterion follows ``decode``: subset
        accuracy for "map", Hamming loss for "marginal"). Ties go to the smoother model:
        the larger ``rho2``, then the larger ``rho1``.
    rho2 : float >= 0 or None, default=None
        Weight of the squared-l2 part (``lambda_1`` in Eq. (8)); None: chosen by CV.
    coupling_scale : float >= 0, default=1.0
        Multiplies both penalties on the couplings (``lambda_2 / lambda_1`` of Eq. (8)).
    couplings : bool, default=True
        False fixes ``alpha = 0``: independent logistic regressions (ILR, Eq. (1)) with the
        same elastic net, the paper's baseline.
    inference : {"bp", "exact"}, default="bp"
        Joint MAP of :meth:`predict`: max-product loopy belief propagation (Sec. III-B) or
        enumeration of all ``2^m`` label vectors (m <= 12). The marginals of
        :meth:`predict_proba` are enumerated up to :data:`MAX_EXACT_LABELS` labels with
        either setting (cheap and exact there) and come from sum-product belief
        propagation beyond.
    decode : {"map", "marginal"}, default="map"
        What :meth:`predict` returns: the joint MAP (21), the Bayes decision for subset
        accuracy, or each label's marginal thresholded at 1/2, the Bayes decision for
        Hamming loss.
    bp_max_iter : int, default=50
        Early stop of belief propagation (Sec. III-B). Rows that have not converged are
        run again with damping :data:`BP_RETRY_DAMPING`; a ``ConvergenceWarning`` names
        the count when more than :data:`BP_WARN_FRACTION` of the rows still have not. For
        the MAP, such rows get the best of a local search (single flips) started from the
        decisions of the last sweeps of both runs (``bp.max_product(polish=True)``): on
        scene's frustrated couplings this made max-product's MAP equal enumeration's on
        every test photo, against 91-95 % without.
    bp_damping : float in [0, 1), default=0.0
        Message damping of belief propagation (first run).
    scaling : {"standardize", "whiten"} or None, default="standardize"
        Feature preprocessing fitted on the training data: z-scores, or ZCA whitening (the
        authors' choice for scene) regularised by ``whiten_eps`` times the mean eigenvalue.
        The fitted ``coef_`` / ``intercept_`` act on the raw features.
    whiten_eps : float > 0, default=1e-2
    step : {"lipschitz", "backtracking"}, default="backtracking"
        Step ``1/L``: ``L`` the upper bound on the Lipschitz constant of the gradient
        (module docstring), or backtracking starting from that bound.
    monotone : bool, default=True
        Monotone FISTA with adaptive restarts (objective never increases); False gives
        plain FISTA.
    tol : float, default=1e-7
        The final fit stops when an accepted step changes the objective by less than
        ``tol`` relatively.
    cv_tol : float, default=1e-6
        The same criterion for the fits inside cross-validation, looser than ``tol``:
        they only rank the grid, and each starts from its neighbour's solution.
    max_iter : int, default=3000
        FISTA iterations per fit.
    cv : int, default=3
        Folds for choosing ``rho1`` / ``rho2`` when they are None.
    rho1_grid, rho2_grid : sequences of float, default=None
        Grids for the CV (None: :data:`RHO1_GRID`, :data:`RHO2_GRID`).
    n_jobs : int or None, default=None
        Folds solved in parallel threads; each fold's products run on one BLAS thread
        whatever ``n_jobs``, so the fit does not depend on it.
    random_state : int, default=0
        Seeds the CV fold assignment (the fit itself is deterministic).

    Attributes
    ----------
    classes_ : ndarray
        For an (n, m) 0/1 label matrix, the label indices ``0..m-1`` (the columns of
        :meth:`predict` and :meth:`predict_proba`); for a 1-D binary ``y``, its two class
        values (the one-label model, an elastic-net logistic regression).
    coef_ : ndarray of shape (m, n_features)
        ``beta_i`` on the raw features (zero rows for constant labels).
    intercept_ : ndarray of shape (m,)
    couplings_ : ndarray of shape (m, m)
        Symmetric ``alpha_ij`` with zero diagonal.
    constant_labels_ : dict
        ``{label index: value}`` of labels constant in the training data. Such a label has
        no finite maximum pseudo-likelihood estimate; it is left out of the model and
        always predicted as that value (marginal exactly 0 or 1), and, being constant, its
        couplings would only shift the other labels' intercepts. A warning is issued.
    rho1_, rho2_ : float
        The penalties used (chosen by CV when the parameters are None).
    cv_results_ : dict or None
        ``{"rho1", "rho2", "mean_score", "split<k>_score", "mean_n_iter"}`` arrays over the
        CV grid.
    n_iter_ : int
        FISTA iterations of the final fit.
    objective_path_ : ndarray
        Objective value after each iteration of the final fit.
    converged_ : bool

    References
    ----------
    Q. Li, B. Xie, J. You, W. Bian, D. Tao. Correlated Logistic Model With Elastic Net
    Regularization for Multilabel Image Classification. IEEE TIP 25(8), 2016.
    A. Beck, M. Teboulle. Fast gradient-based algorithms for constrained total variation
    image denoising and deblurring problems. IEEE TIP 18(11), 2009 (monotone FISTA).
    B. O'Donoghue, E. Candes. Adaptive restart for accelerated gradient schemes. Found.
    Comput. Math. 15, 2015.
    R. Tibshirani et al. Strong rules for discarding predictors in lasso-type problems.
    JRSS B 74(2), 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from kclf.corrlog import CorrLog
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> Y = np.column_stack([X[:, 0] > 0, (X[:, 0] > 0) & (X[:, 1] > 0)]).astype(int)
    >>> clf = CorrLog(rho1=0.0, rho2=1e-3).fit(X, Y)
    >>> clf.predict(X[:2]).shape
    (2, 2)
    """

    _parameter_constraints = {
        "rho1": [Interval(Real, 0, None, closed="left"), None],
        "rho2": [Interval(Real, 0, None, closed="left"), None],
        "coupling_scale": [Interval(Real, 0, None, closed="left")],
        "couplings": ["boolean"],
        "inference": [StrOptions({"bp", "exact"})],
        "decode": [StrOptions({"map", "marginal"})],
        "bp_max_iter": [Interval(Integral, 1, None, closed="left")],
        "bp_damping": [Interval(Real, 0, 1, closed="left")],
        "scaling": [StrOptions({"standardize", "whiten"}), None],
        "whiten_eps": [Interval(Real, 0, None, closed="neither")],
        "step": [StrOptions({"lipschitz", "backtracking"})],
        "monotone": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "cv_tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "rho1_grid": ["array-like", None],
        "rho2_grid": ["array-like", None],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        rho1=None,
        rho2=None,
        *,
        coupling_scale=1.0,
        couplings=True,
        inference="bp",
        decode="map",
        bp_max_iter=50,
        bp_damping=0.0,
        scaling="standardize",
        whiten_eps=1e-2,
        step="backtracking",
        monotone=True,
        tol=1e-7,
        cv_tol=1e-6,
        max_iter=3000,
        cv=3,
        rho1_grid=None,
        rho2_grid=None,
        n_jobs=None,
        random_state=0,
    ):
        self.rho1 = rho1
        self.rho2 = rho2
        self.coupling_scale = coupling_scale
        self.couplings = couplings
        self.inference = inference
        self.decode = decode
        self.bp_max_iter = bp_max_iter
        self.bp_damping = bp_damping
        self.scaling = scaling
        self.whiten_eps = whiten_eps
        self.step = step
        self.monotone = monotone
        self.tol = tol
        self.cv_tol = cv_tol
        self.max_iter = max_iter
        self.cv = cv
        self.rho1_grid = rho1_grid
        self.rho2_grid = rho2_grid
        self.n_jobs = n_jobs
        self.random_state = random_state

    # -- input checks ------------------------------------------------------------------

    def _check_Y(self, Y, n):
        Y = np.asarray(Y)
        if Y.ndim != 2:
            raise ValueError(
                f"Y must be a 2-D (n_samples, n_labels) 0/1 indicator matrix, got shape {Y.shape}"
            )
        if Y.shape[0] != n:
            raise ValueError(f"X and Y have different numbers of rows: {n} != {Y.shape[0]}")
        if Y.dtype.kind not in "biuf" or not np.all((Y == 0) | (Y == 1)):
            kind = type_of_target(Y, input_name="Y") if Y.dtype.kind in "biuf" else "unknown"
            if kind.startswith("continuous"):
                raise ValueError(
                    f"Unknown label type: {kind}. Y must contain only 0 and 1 "
                    "(a multilabel indicator matrix)"
                )
            raise ValueError(
                "Only binary labels are supported: Y must contain only 0 and 1 "
                f"(a multilabel indicator matrix); got target type {kind!r}"
            )
        return Y.astype(int)

    def _check_binary_y(self, y):
        """A 1-D target: two classes, encoded 0/1 as a one-label matrix."""
        kind = type_of_target(y, input_name="y")
        if kind.startswith("continuous") or kind == "unknown":
            raise ValueError(f"Unknown label type: {kind}. y must be binary")
        if kind != "binary":
            raise ValueError(
                "Only binary classification is supported. The type of the target is "
                f"{kind} (CorrLog takes a binary y or an (n, m) 0/1 label matrix)."
            )
        classes = np.unique(y)
        if len(classes) < 2:
            raise ValueError(f"y has one class ({classes[0]!r}); a binary y needs two")
        return classes, (y == classes[1]).astype(int)[:, None]

    # -- fitting -----------------------------------------------------------------------

    def _params(self):
        return {
            "couplings": self.couplings,
            "coupling_scale": self.coupling_scale,
            "scaling": self.scaling,
            "whiten_eps": self.whiten_eps,
            "cv_tol": self.cv_tol,
            "max_iter": self.max_iter,
            "monotone": self.monotone,
            "step": self.step,
            "decode": self.decode,
            "inference": self.inference,
            "bp_max_iter": self.bp_max_iter,
            "bp_damping": self.bp_damping,
        }

    def _cv_select(self, X, Y):
        rho1s = [self.rho1] if self.rho1 is not None else list(self.rho1_grid or RHO1_GRID)
        rho2s = [self.rho2] if self.rho2 is not None else list(self.rho2_grid or RHO2_GRID)
        rho1s = sorted({float(r) for r in rho1s}, reverse=True)
        rho2s = sorted({float(r) for r in rho2s}, reverse=True)
        seed = self.random_state if isinstance(self.random_state, Integral) else None
        folds = list(KFold(self.cv, shuffle=True, random_state=seed).split(X))
        params = self._params()
        with threadpool_limits(limits=1, user_api="blas"):
            out = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(_fold_path)(params, X, Y, train, test, rho1s, rho2s)
                for train, test in folds
            )
        scores = np.mean([o[0] for o in out], axis=0)
        # first max (to 12 digits, so summation order cannot break a tie): the strongest
        a, b = np.unravel_index(np.argmax(np.round(scores, 12)), scores.shape)
        grid2, grid1 = np.meshgrid(rho2s, rho1s, indexing="ij")
        results = {"rho1": grid1.ravel(), "rho2": grid2.ravel(), "mean_score": scores.ravel()}
        for k, o in enumerate(out):
            results[f"split{k}_score"] = o[0].ravel()
        results["mean_n_iter"] = np.mean([o[1] for o in out], axis=0).ravel()
        # the folds' solutions at the chosen setting (raw features), for the warm start
        starts = [(o[2][(a, b)], o[3]) for o in out if (a, b) in o[2]]
        return rho1s[b], rho2s[a], results, starts

    def _warm_start(self, data, scaling, active, starts):
        """The mean of the folds' solutions at the chosen setting (those whose labels
        were all non-constant, like the full set's), in the full data's coordinates."""
        use = [s for s, act in starts if np.array_equal(act, active)]
        if not use:
            return None
        coef, intercept, A = (np.mean([s[i] for s in use], axis=0) for i in range(3))
        return data.from_raw(coef, intercept, A, scaling)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, Y):
        """Fit CorrLog (or ILR with ``couplings=False``) to X (n, d) and Y (n, m) 0/1.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        Y : array-like of shape (n_samples, n_labels), values 0/1, or of shape (n_samples,)
            with two classes (the one-label model)

        Returns
        -------
        self : CorrLog
            The fitted estimator.
        """
        X, Y = validate_data(self, X, Y, multi_output=True, dtype=np.float64)
        if np.ndim(Y) == 1:
            self.classes_, Y = self._check_binary_y(Y)
            self._binary = True
        else:
            Y = self._check_Y(Y, X.shape[0])
            self.classes_ = np.arange(Y.shape[1])
            self._binary = False
        n, m = Y.shape
        if self.inference == "exact" and m > MAX_EXACT_LABELS:
            raise ValueError(
                f"inference='exact' enumerates 2^m label vectors and needs m <= "
                f"{MAX_EXACT_LABELS}; got m={m} labels (use inference='bp')"
            )
        active = _non_constant(Y)
        self.constant_labels_ = {int(j): int(Y[0, j]) for j in np.flatnonzero(~active)}
        if self.constant_labels_:
            warnings.warn(
                f"labels {sorted(self.constant_labels_)} are constant in the training data: "
                "they are left out of the model and always predicted as their constant value",
                UserWarning,
                stacklevel=2,
            )
        self.n_labels_ = m
        self.active_labels_ = active
        self.cv_results_ = None
        start = time.perf_counter()
        starts = []
        if active.sum() == 0:
            rho1, rho2 = (self.rho1 or 0.0), (self.rho2 or 0.0)
        elif self.rho1 is None or self.rho2 is None:
            rho1, rho2, self.cv_results_, starts = self._cv_select(X, Y)
        else:
            rho1, rho2 = float(self.rho1), float(self.rho2)
        self.rho1_, self.rho2_ = rho1, rho2
        self.coef_ = np.zeros((m, X.shape[1]))
        self.intercept_ = np.zeros(m)
        self.couplings_ = np.zeros((m, m))
        self.objective_path_, self.n_iter_, self.converged_ = np.zeros(0), 0, True
        if active.sum():
            scaling = _Scaling(X, self.scaling, self.whiten_eps)
            data = _Data(scaling.transform(X), 2.0 * Y[:, active] - 1.0, self.couplings)
            theta0 = self._warm_start(data, scaling, active, starts)
            grad0 = None
            if theta0 is None:
                theta0 = data.initial()
            else:
                obj = _Objective(data, None, rho1, rho2, self.coupling_scale)
                grad0 = data.Xc.T @ data.dloss(obj.fields(theta0))
            opts = {
                "tol": self.tol,
                "max_iter": self.max_iter,
                "monotone": self.monotone,
                "step": self.step,
            }
            theta, _, _, info = _solve(
                data, rho1, rho2, self.coupling_scale, theta0, opts, grad0, rho1
            )
            idx = np.flatnonzero(active)
            coef, intercept, A = data.to_raw(theta, scaling)
            self.coef_[idx] = coef
            self.intercept_[idx] = intercept
            self.couplings_[np.ix_(idx, idx)] = A
            self.objective_path_ = info["path"]
            self.n_iter_ = info["n_iter"]
            self.converged_ = bool(info["converged"])
            if not self.converged_:
                warnings.warn(
                    f"FISTA did not reach tol={self.tol} in max_iter={self.max_iter} iterations",
                    ConvergenceWarning,
                    stacklevel=2,
                )
        self.fit_seconds_ = time.perf_counter() - start
        return self

    # -- prediction --------------------------------------------------------------------

    def _active_unary(self, X):
        idx = np.flatnonzero(self.active_labels_)
        U = X @ self.coef_[idx].T + self.intercept_[idx]
        return idx, U, self.couplings_[np.ix_(idx, idx)]

    def _constant_fill(self, n, dtype):
        out = np.zeros((n, self.n_labels_), dtype=dtype)
        for j, v in self.constant_labels_.items():
            out[:, j] = v
        return out

    def _warn_bp(self, n_bad, n):
        if n and n_bad > BP_WARN_FRACTION * n:
            warnings.warn(
                f"belief propagation did not converge for {n_bad} of {n} rows "
                f"({100.0 * n_bad / n:.1f}%) in bp_max_iter={self.bp_max_iter} sweeps, "
                f"nor with damping {BP_RETRY_DAMPING}; their labels come from the last "
                "messages",
                ConvergenceWarning,
                stacklevel=3,
            )

    def decode_labels(self, X, decode=None, return_info=False):
        """0/1 label vectors (n, m) by the joint MAP or the thresholded marginals.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        decode : {"map", "marginal"} or None, default=None
            "map": the joint MAP, Eq. (21), the Bayes decision for subset accuracy;
            "marginal": each label's marginal ``P(y_i = 1 | x) > 1/2``, the Bayes decision
            for Hamming loss. None: the estimator's ``decode``.
        return_info : bool, default=False
            Also return ``{"decode", "bp_rows", "bp_nonconverged"}``: the rows decoded by
            belief propagation and how many of them did not converge (after the damped
            retry).

        Returns
        -------
        Y : int ndarray of shape (n_samples, n_labels)
        info : dict, only when ``return_info``
        """
        check_is_fitted(self)
        decode = self.decode if decode is None else decode
        if decode not in ("map", "marginal"):
            raise ValueError(f"decode must be 'map' or 'marginal', got {decode!r}")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = self._constant_fill(X.shape[0], int)
        idx, U, A = self._active_unary(X)
        n_bad = bp_rows = 0
        if len(idx):
            out[:, idx], n_bad = _decode(
                U, A, decode, self.inference, self.bp_max_iter, self.bp_damping
            )
            exact = self.inference == "exact" or (
                decode == "marginal" and len(idx) <= MAX_EXACT_LABELS
            )
            bp_rows = 0 if exact or not A.any() else X.shape[0]
        self._warn_bp(n_bad, bp_rows)
        info = {"decode": decode, "bp_rows": bp_rows, "bp_nonconverged": n_bad}
        return (out, info) if return_info else out

    def predict(self, X):
        """Label vectors by ``decode``: the joint MAP, Eq. (21), or the thresholded
        marginals.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Y : ndarray of shape (n_samples, n_labels) or (n_samples,)
            0/1 label vectors; for a 1-D binary ``y`` at fit, its class values.
        """
        out = self.decode_labels(X)
        return self.classes_[out[:, 0]] if self._binary else out

    def predict_proba(self, X):
        """Per-label marginals ``P(y_i = 1 | x)`` under Eq. (4): enumerated up to
        :data:`MAX_EXACT_LABELS` labels, sum-product belief propagation beyond.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, n_labels) or (n_samples, 2)
            The marginals; for a 1-D binary ``y`` at fit, the class probabilities in
            ``classes_`` order.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = self._constant_fill(X.shape[0], float)
        idx, U, A = self._active_unary(X)
        if len(idx):
            out[:, idx], n_bad = _marginals(U, A, self.inference, self.bp_max_iter, self.bp_damping)
            self._warn_bp(n_bad, X.shape[0])
        return np.column_stack([1.0 - out[:, 0], out[:, 0]]) if self._binary else out

    def score(self, X, y, sample_weight=None):
        """Subset (0/1) accuracy of :meth:`predict`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples, n_labels) or (n_samples,)
            The 0/1 label matrix (or, for a model fitted on a 1-D binary ``y``, classes).
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
            The (weighted) fraction of rows whose whole label vector is right (accuracy
            for a 1-D binary ``y``).
        """
        pred = self.predict(X)
        if self._binary:
            hit = (pred == np.asarray(y)).astype(float)
        else:
            Y = self._check_Y(y, pred.shape[0])
            hit = np.all(pred == Y, axis=1).astype(float)
        return float(np.average(hit, weights=sample_weight))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        tags.classifier_tags.multi_label = True
        tags.classifier_tags.multi_class = False
        return tags


def _non_constant(Y):
    return np.any(Y != Y[:1], axis=0)
