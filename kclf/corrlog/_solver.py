"""The solver of :class:`kclf.CorrLog` (private): elastic-net regularised maximum
pseudo-likelihood, Eq. (10)-(13), by FISTA, and its cross-validation path.

Li, Xie, You, Bian and Tao, "Correlated Logistic Model With Elastic Net Regularization for
Multilabel Image Classification", IEEE TIP 2016 (arXiv:1904.08098); equation numbers refer
to that paper.  The conditional of one label given the rest, Eq. (11), is
``sigmoid(2 y_i (beta_i^T x + sum_j alpha_ij y_j))``, so the negative log
pseudo-likelihood (12) is a sum of logistic losses, convex in ``(beta, alpha)``.  The
objective minimised here is::

    (1/n) sum_l sum_i log(1 + exp(-2 y_li (beta_i^T x_l + sum_{j != i} alpha_ij y_lj)))
      + rho2 * (||W||_2^2 + c ||alpha||_2^2) + rho1 * (||W||_1 + c ||alpha||_1)

with ``W`` the weights without the intercepts and ``c = coupling_scale``: the paper's
shared penalty.  Sample weights ``s_l`` make the pseudo-likelihood a weighted one: the
mean ``(1/n) sum_l`` becomes ``sum_l s_l / sum_l s_l``, and the scaling's and the
centring's means and variances are weighted alike, so an integer weight is that many
copies of the row.  With per-label penalties (``penalty="per_label"`` of the estimator) the
weights ``w_i`` of label ``i`` (column ``i`` of ``W``) carry their own elastic net
``rho2_i ||w_i||_2^2 + rho1_i ||w_i||_1`` and the couplings keep the shared
``c (rho2 ||alpha||_2^2 + rho1 ||alpha||_1)``; the loss of label ``i``'s conditional (11)
involves only ``w_i``, its intercept and its couplings, so a label's strength acts on
its own logistic regression, as in independent per-label fits.

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
solution. The path gets the decoding as functions (``decode``, ``score``); the choice from
the folds' scores is :mod:`kclf.corrlog._penalty_search`'s, the model, prediction and decoding the
estimator's (:mod:`kclf.corrlog`, :mod:`kclf.corrlog._decoding`).

References
----------
A. Beck, M. Teboulle. Fast gradient-based algorithms for constrained total variation
image denoising and deblurring problems. IEEE TIP 18(11), 2009 (monotone FISTA).
B. O'Donoghue, E. Candes. Adaptive restart for accelerated gradient schemes. Found.
Comput. Math. 15, 2015.
R. Tibshirani et al. Strong rules for discarding predictors in lasso-type problems.
JRSS B 74(2), 2012.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh
from scipy.special import expit

from ..kernels import unit_of

#: Backtracking: ``L`` is multiplied by this after every accepted step, down to
#: ``L_FLOOR`` times the Lipschitz bound (which keeps the stopping rule's residual bound).
STEP_SHRINK = 0.9
L_FLOOR = 1e-4


#: Features with at most this fraction of non-zeros are solved as a sparse matrix (CSR;
#: sparse input stays sparse): the products then cost nnz(X) instead of n d (with one
#: thread, scipy's sparse products beat dense BLAS below about 20 % density).
SPARSE_DENSITY = 0.15


def solver_features(X, scaling):
    """``X`` as the solver takes it: CSR when sparse or at most :data:`SPARSE_DENSITY`
    non-zero (dense for ``scaling="whiten"``, whose transform is dense anyway)."""
    if scaling == "whiten":
        return X.toarray() if sp.issparse(X) else X
    if sp.issparse(X):
        return sp.csr_array(X)
    if X.size and np.count_nonzero(X) <= SPARSE_DENSITY * X.size:
        return sp.csr_array(X)
    return X


def non_constant(Y):
    """The labels (columns of the 0/1 matrix ``Y``) that are not constant."""
    return np.any(Y != Y[:1], axis=0)


# ---------------------------------------------------------------------------------------
# the pseudo-likelihood objective, Eq. (12)-(16)
# ---------------------------------------------------------------------------------------


class CentredSparse:
    """The centred matrix ``X - 1 mean^T`` of a sparse ``X``, never formed: a product with a
    dense matrix subtracts the mean's share, ``X W - 1 (mean^T W)``, so the solver's
    products cost ``nnz(X)`` rather than ``n d``."""

    def __init__(self, X, mean):
        self.X = sp.csr_array(X)
        self.mean = np.asarray(mean, dtype=float)
        self.shape = self.X.shape

    def __matmul__(self, W):
        return self.X @ W - self.mean @ W

    def __getitem__(self, key):
        rows, cols = key
        if not (isinstance(rows, slice) and rows == slice(None)):
            raise IndexError("only column selections X[:, cols]")
        return CentredSparse(self.X[:, cols], self.mean[cols])

    @property
    def T(self):
        return _CentredSparseT(self)

    def toarray(self):
        return self.X.toarray() - self.mean


class _CentredSparseT:
    """``(X - 1 mean^T)^T G = X^T G - mean (1^T G)``."""

    def __init__(self, parent):
        self.parent = parent
        self.shape = parent.shape[::-1]

    def __matmul__(self, G):
        p = self.parent
        return p.X.T @ G - np.multiply.outer(p.mean, G.sum(axis=0))


class Scaling:
    """Affine map ``x -> (x - mean) T`` for "standardize", "whiten" (ZCA) or None.

    A sparse ``X`` (not for "whiten") stays sparse: "standardize" only rescales its columns
    (``mean`` is then zero here, and :class:`Data` centres without forming ``X - mean``)."""

    def __init__(self, X, scaling, whiten_eps, weight=None):
        d = X.shape[1]
        self.kind = scaling
        self.mean = np.zeros(d)
        self.sparse = sp.issparse(X)
        w = weight
        total = X.shape[0] if w is None else float(w.sum())
        if scaling is None:
            return
        # the moments of X / u, u a power of two (exact): X and c X give the same scaled
        # features at any c, where the squares of X itself would under- or overflow
        u = unit_of(X)
        X = X * (1.0 / u)
        if self.sparse:
            if scaling != "standardize":
                raise ValueError("sparse features need scaling='standardize' or None")
            if w is None:
                mean = np.asarray(X.mean(axis=0)).ravel()
                sq = np.asarray(X.multiply(X).mean(axis=0)).ravel()
            else:
                mean = np.asarray(X.T @ w).ravel() / total
                sq = np.asarray(X.multiply(X).T @ w).ravel() / total
            sd = np.sqrt(np.maximum(sq - mean * mean, 0.0))
            sd[sd <= 1e-12] = 1.0  # constant (to 1e-12 of the largest magnitude)
            self.scale = 1.0 / (sd * u)
            return
        mean = X.mean(axis=0) if w is None else (w @ X) / total
        self.mean = mean * u
        Xc = X - mean
        if scaling == "standardize":
            sd = Xc.std(axis=0) if w is None else np.sqrt((w @ (Xc * Xc)) / total)
            sd[sd <= 1e-12] = 1.0  # constant (to 1e-12 of the largest magnitude)
            self.scale = 1.0 / (sd * u)
            return
        wXc = Xc if w is None else Xc * w[:, None]
        cov = wXc.T @ Xc / max(total - 1, 1)
        evals, evecs = np.linalg.eigh(cov)
        evals = np.maximum(evals, 0.0)
        root = np.sqrt(evals + whiten_eps * max(float(evals.mean()), 1e-300))
        self.T = ((evecs / root) @ evecs.T) / u
        self.T_inv = ((evecs * root) @ evecs.T) * u

    def transform(self, X):
        if self.kind is None:
            return X
        if self.sparse:
            return sp.csr_array(X @ sp.diags_array(self.scale))
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


class Data:
    """A training set in the solver's coordinates.

    Fields ``F = Xc W + 1 b^T + Sc A(a)`` with centred features ``Xc`` and centred label
    columns ``Sc`` (module docstring); the margins use the +-1 labels ``S``.  ``weight``
    (n,) or None: the rows' sample weights (the loss a weighted mean, the centring by
    weighted means).
    """

    def __init__(self, Xs, S, couplings, weight=None):
        self.n, self.d = Xs.shape
        self.m = S.shape[1]
        self.w = None if weight is None else np.asarray(weight, dtype=float)
        self.total = float(self.n) if self.w is None else float(self.w.sum())
        w = self.w
        if sp.issparse(Xs):
            if w is None:
                self.x_mean = np.asarray(Xs.mean(axis=0)).ravel()
            else:
                self.x_mean = np.asarray(Xs.T @ w).ravel() / self.total
            self.Xc = CentredSparse(Xs, self.x_mean)
        else:
            self.x_mean = Xs.mean(axis=0) if w is None else (w @ Xs) / self.total
            self.Xc = Xs - self.x_mean
        self.S = S
        self.s_mean = S.mean(axis=0) if w is None else (w @ S) / self.total
        self.Sc = S - self.s_mean
        self.iu = np.triu_indices(self.m, k=1)
        self.n_pairs = len(self.iu[0]) if couplings else 0
        self._lip = None

    @property
    def lipschitz(self):
        """Upper bound on the Lipschitz constant of the loss gradient.

        The loss has second derivative ``4 s(1 - s) <= 1`` in each field, so its Hessian is
        at most ``Phi^T D Phi / n`` (``D`` the sample weights, ``n`` their sum). The
        intercept column is ``D``-orthogonal to the centred columns, and
        ``||S A(a)||_F <= ||Sc|| ||A||_F = sqrt(2) ||Sc|| ||a||``, hence
        ``||D^1/2 Phi||^2 <= max(n, ||D^1/2 [Xc, sqrt(2) Sc]||_2^2)``; the spectral norm
        comes from Lanczos (relative accuracy 1e-6, inflated by 1e-4).
        """
        w = np.ones(self.n) if self.w is None else self.w
        rw = np.sqrt(w)[:, None]
        if self._lip is None and isinstance(self.Xc, CentredSparse):
            Xc, Sc, d, r2 = self.Xc, self.Sc, self.d, np.sqrt(2.0)

            def normal(v):  # M^T D M v with M = [Xc, sqrt(2) Sc] (or Xc)
                r = Xc @ v[:d] + (r2 * (Sc @ v[d:]) if self.n_pairs else 0.0)
                r = r * w
                return np.concatenate([Xc.T @ r, r2 * (Sc.T @ r)] if self.n_pairs else [Xc.T @ r])

            k = d + (self.m if self.n_pairs else 0)
            if min(self.n, k) <= 32:
                M = Xc.toarray() if not self.n_pairs else np.hstack([Xc.toarray(), r2 * Sc])
                top = float(np.linalg.norm(rw * M, 2)) if M.size else 0.0
                top *= top
            else:
                op = LinearOperator((k, k), matvec=normal, dtype=float)
                v0 = np.linspace(1.0, 2.0, k)
                top = float(eigsh(op, k=1, which="LA", tol=1e-6, v0=v0)[0][0])
            self._lip = max(1.0, top * (1.0 + 1e-4) / self.total)
        if self._lip is None:
            M = self.Xc if not self.n_pairs else np.hstack([self.Xc, np.sqrt(2.0) * self.Sc])
            if self.w is not None:
                M = rw * M
            k = M.shape[1]
            if min(M.shape) <= 32:
                top = float(np.linalg.norm(M, 2)) if M.size else 0.0
                top *= top
            else:
                op = LinearOperator((k, k), matvec=lambda v: M.T @ (M @ v), dtype=float)
                v0 = np.linspace(1.0, 2.0, k)
                top = float(eigsh(op, k=1, which="LA", tol=1e-6, v0=v0)[0][0])
            self._lip = max(1.0, top * (1.0 + 1e-4) / self.total)
        if not np.isfinite(self._lip):
            raise ValueError(
                "the features are too large for the solver: the Lipschitz constant of the "
                "pseudo-likelihood's gradient overflows (use scaling='standardize' or "
                "'whiten', which work at any scale of X)"
            )
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
        p = np.clip(np.average(self.S > 0, axis=0, weights=self.w), 1e-3, 1 - 1e-3)
        theta[self.d * self.m : self.d * self.m + self.m] = 0.5 * np.log(p / (1 - p))
        return theta

    def loss(self, F):
        """Eq. (12) divided by n (weighted: the weighted sum over the weights' sum)."""
        L = np.logaddexp(0.0, -2.0 * self.S * F)
        if self.w is None:
            return float(L.sum()) / self.n
        return float((self.w @ L).sum()) / self.total

    def dloss(self, F):
        """``d loss / d F``, Eq. (15)-(16): ``-2 y sigmoid(-2 y F) / n`` (row ``l`` times
        its weight over the weights' sum)."""
        G = -2.0 * self.S * expit(-2.0 * self.S * F)
        if self.w is None:
            return G / self.n
        return G * (self.w / self.total)[:, None]

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


class Objective:
    """The objective on a working set of feature rows (the others held at zero).

    ``theta = [W_keep.ravel(), b, a]``; penalty weights 1 on weights, 0 on intercepts and
    ``coupling_scale`` on couplings.  ``label_rho = (rho1s, rho2s)``, two arrays of shape
    (m,), replaces ``rho1``, ``rho2`` on the weights of each label (column of ``W``); the
    couplings keep ``rho1``, ``rho2``.  None: the shared penalty.
    """

    def __init__(self, data, keep, rho1, rho2, coupling_scale, label_rho=None):
        self.data, self.keep = data, keep
        self.X = data.Xc if keep is None else data.Xc[:, keep]
        self.k = self.X.shape[1]
        m = data.m
        self.nw = self.k * m
        self.pen = np.concatenate(
            [np.ones(self.nw), np.zeros(m), np.full(data.n_pairs, float(coupling_scale))]
        )
        self.rho1, self.rho2 = float(rho1), float(rho2)
        self.l2w = None
        if label_rho is None:
            self.l1w = self.rho1 * self.pen
            self.lipschitz = data.lipschitz + 2.0 * self.rho2 * float(self.pen.max(initial=0.0))
            return
        r1, r2 = (np.asarray(r, dtype=float).reshape(m) for r in label_rho)
        self.l1w = np.concatenate([np.tile(r1, self.k), self.rho1 * self.pen[self.nw :]])
        self.l2w = np.concatenate([np.tile(r2, self.k), self.rho2 * self.pen[self.nw :]])
        self.rho1 = float(self.l1w.max(initial=0.0))  # > 0 iff any l1 part
        self.lipschitz = data.lipschitz + 2.0 * float(self.l2w.max(initial=0.0))

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
        if self.l2w is not None:
            return self.data.loss(F) + float((self.l2w * theta) @ theta)
        return self.data.loss(F) + self.rho2 * float((self.pen * theta) @ theta)

    def grad(self, theta, F):
        d = self.data
        G = d.dloss(F)
        parts = [(self.X.T @ G).ravel(), G.sum(axis=0)]
        if d.n_pairs:
            GA = d.Sc.T @ G  # GA[j, i] = sum_l sc_lj G_li
            parts.append((GA + GA.T)[d.iu])
        if self.l2w is not None:
            return np.concatenate(parts) + 2.0 * self.l2w * theta
        return np.concatenate(parts) + 2.0 * self.rho2 * self.pen * theta

    def l1(self, theta):
        return float(self.l1w @ np.abs(theta)) if self.rho1 else 0.0

    def prox(self, v, step):
        """Soft thresholding, Eq. (19)-(20): ``sign(v) max(|v| - step rho1 pen, 0)``."""
        if not self.rho1:
            return v
        return np.sign(v) * np.maximum(np.abs(v) - step * self.l1w, 0.0)


def fista(obj, x, tol, max_iter, monotone=True, step="backtracking", L=None, refresh=50):
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


def solve(
    data, rho1, rho2, coupling_scale, theta0, opts, grad0=None, rho1_prev=None, label_rho=None
):
    """Minimise at ``(rho1, rho2)`` from ``theta0`` with strong-rule screening and KKT check.

    ``grad0`` is the loss gradient in ``W`` (d, m) at ``theta0``, solved at ``rho1_prev``:
    feature ``j`` is set aside when it is zero in ``theta0`` and
    ``max_i |grad0_ji| < 2 rho1 - rho1_prev`` (the sequential strong rule). After the fit
    on the kept features, any set-aside feature with ``max_i |grad_ji| > rho1`` (a KKT
    violation: it would move off zero) is added and the fit repeated.  With per-label
    penalties ``label_rho = (rho1s, rho2s)`` (:class:`Objective`) both tests compare
    ``|grad_ji|`` with label ``i``'s ``rho1s[i]`` (``rho1_prev`` then the same per label).

    Returns ``theta`` (full), its fields, the loss gradient in ``W`` (d, m) and a dict with
    the objective path, ``n_iter``, ``converged``, the KKT rounds and the kept features.
    """
    d, m = data.d, data.m
    W0 = theta0[: d * m].reshape(d, m)
    t_start = time.perf_counter()
    keep = np.ones(d, dtype=bool)
    # the l1 weight of each (feature, label) entry of W, as a scalar or a row (m,)
    r1 = rho1 if label_rho is None else np.asarray(label_rho[0], dtype=float).reshape(m)
    any_l1 = bool(np.any(np.asarray(r1) > 0))
    if opts.get("screen", True) and any_l1 and grad0 is not None:
        prev = r1 if rho1_prev is None else np.maximum(rho1_prev, r1)
        thr = 2.0 * r1 - prev
        if label_rho is None:
            big = np.abs(grad0).max(axis=1, initial=0.0) >= thr
        else:
            big = np.any(np.abs(grad0) >= thr, axis=1)
        keep = np.any(W0 != 0, axis=1) | big
    theta, path, n_iter, rounds, L = theta0, [], 0, 0, opts.get("L")
    fista_seconds = 0.0
    while True:
        rounds += 1
        t0 = time.perf_counter()
        sub = None if keep.all() else keep
        obj = Objective(data, sub, rho1, rho2, coupling_scale, label_rho)
        tw, F, p, converged, L = fista(
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
        fista_seconds += time.perf_counter() - t0
        gW = data.Xc.T @ data.dloss(F)
        if keep.all() or not any_l1:
            break
        if label_rho is None:
            violated = ~keep & (np.abs(gW).max(axis=1, initial=0.0) > rho1)
        else:
            violated = ~keep & np.any(np.abs(gW) > r1, axis=1)
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
        # screening: the strong rule, the KKT checks and the working sets' set-up
        "screen_seconds": time.perf_counter() - t_start - fista_seconds,
    }
    return theta, F, gW, info


def warm_start(data, scaling, active, starts):
    """The mean of the folds' solutions at the chosen setting (those whose labels were all
    non-constant, like the full set's), in ``data``'s coordinates; None if there is none.
    ``starts`` holds ``((coef, intercept, A), active)`` per fold."""
    use = [s for s, act in starts if np.array_equal(act, active)]
    if not use:
        return None
    coef, intercept, A = (np.mean([s[i] for s in use], axis=0) for i in range(3))
    return data.from_raw(coef, intercept, A, scaling)


def fit_penalised(params, X, Y, active, rho1, rho2, starts=(), label_rho=None, sample_weight=None):
    """The final fit at ``(rho1, rho2)`` on all of ``X`` (to ``params["tol"]``), warm
    started from the folds' solutions (:func:`warm_start`).  ``label_rho = (rho1s, rho2s)``,
    arrays over all ``m`` labels, gives each label's weights its own elastic net (the
    couplings keep ``rho1``, ``rho2``); None, or every label at ``(rho1, rho2)``, is the
    shared penalty.

    Returns ``(coef (m, d), intercept (m,), couplings (m, m), info)`` on the raw features,
    zero for the constant labels (not ``active``), and ``info`` as :func:`solve` gives it
    (an empty objective path when every label is constant).  ``sample_weight`` (n,) or
    None: the rows' weights in the pseudo-likelihood.
    """
    m = Y.shape[1]
    coef, intercept, couplings = np.zeros((m, X.shape[1])), np.zeros(m), np.zeros((m, m))
    if not active.any():
        return coef, intercept, couplings, {"path": np.zeros(0), "n_iter": 0, "converged": True}
    scaling = Scaling(X, params["scaling"], params["whiten_eps"], sample_weight)
    data = Data(scaling.transform(X), 2.0 * Y[:, active] - 1.0, params["couplings"], sample_weight)
    rho1_prev = rho1
    if label_rho is not None:
        r1, r2 = (np.asarray(r, dtype=float)[active] for r in label_rho)
        if np.all(r1 == rho1) and np.all(r2 == rho2):
            label_rho = None  # the shared penalty, by the shared code
        else:
            label_rho, rho1_prev = (r1, r2), r1
    theta0 = warm_start(data, scaling, active, starts)
    grad0 = None
    if theta0 is None:
        theta0 = data.initial()
    else:
        obj = Objective(data, None, rho1, rho2, params["coupling_scale"], label_rho)
        grad0 = data.Xc.T @ data.dloss(obj.fields(theta0))
    opts = {
        "tol": params["tol"],
        "max_iter": params["max_iter"],
        "monotone": params["monotone"],
        "step": params["step"],
    }
    c = params["coupling_scale"]
    theta, _, _, info = solve(data, rho1, rho2, c, theta0, opts, grad0, rho1_prev, label_rho)
    idx = np.flatnonzero(active)
    coef[idx], intercept[idx], couplings[np.ix_(idx, idx)] = data.to_raw(theta, scaling)
    return coef, intercept, couplings, info


# ---------------------------------------------------------------------------------------
# cross-validation: the regularisation path of every fold
# ---------------------------------------------------------------------------------------


def _fold_data(params, X, Ytr, active, train, test, sample_weight=None):
    """``(scaling, data, Xte, opts)`` of one fold: the scaling fitted on the training rows,
    their :class:`Data` (non-constant labels ``active``; the rows weighted by
    ``sample_weight[train]``), the test rows' centred scaled features and the CV's FISTA
    settings (``cv_tol``)."""
    w = None if sample_weight is None else sample_weight[train]
    scaling = Scaling(X[train], params["scaling"], params["whiten_eps"], w)
    data = Data(scaling.transform(X[train]), 2.0 * Ytr[:, active] - 1.0, params["couplings"], w)
    Xte = scaling.transform(X[test])
    Xte = CentredSparse(Xte, data.x_mean) if sp.issparse(Xte) else Xte - data.x_mean
    opts = {
        "tol": params["cv_tol"],
        "max_iter": params["max_iter"],
        "monotone": params["monotone"],
        "step": params["step"],
    }
    return scaling, data, Xte, opts


def _path_point(
    data, scaling, Xte, opts, start, penalty, seconds, label_rho=None, weights_rho1=None
):
    """Solve one point of a fold's warm-started path from ``start`` (a node of a
    neighbouring point, or None: cold) at ``penalty = (rho1, rho2, coupling_scale)`` (and
    the labels' weights at ``label_rho``), adding the solve and screening seconds.

    Returns the point's node (``theta``, ``loss``, ``grad``, ``rho1``: the weights' l1
    weight, ``weights_rho1`` when the labels' weights have their own, for the strong rules
    of the next start; ``L``), the FISTA iterations, the raw solution ``(coef, intercept,
    A)`` and the test fold's fields.
    """
    r1, r2, c = penalty
    if start is not None:
        theta0, grad0, r1_prev = start["theta"], start["grad"], start["rho1"]
        opts["L"] = start.get("L")
    else:
        theta0, grad0, r1_prev = data.initial(), None, None
    t0 = time.perf_counter()
    theta, F, gW, info = solve(data, r1, r2, c, theta0, opts, grad0, r1_prev, label_rho)
    seconds["solve"] += time.perf_counter() - t0 - info["screen_seconds"]
    seconds["screen"] += info["screen_seconds"]
    node_rho1 = r1 if weights_rho1 is None else weights_rho1
    node = {"theta": theta, "loss": data.loss(F), "grad": gW, "rho1": node_rho1, "L": info["L"]}
    return node, info["n_iter"], data.to_raw(theta, scaling), data.unary(theta, Xte)


def fold_path(
    params,
    X,
    Y,
    train,
    test,
    rho1s,
    rho2s,
    decode,
    score,
    fast_score=None,
    label_score=None,
    sample_weight=None,
):
    """Scores and raw solutions of one fold over the grid ``rho2s x rho1s`` (strongest
    first), solved as a warm-started path (module docstring).

    ``decode(U, A)`` gives the 0/1 labels of the non-constant labels from their fields
    ``U`` and couplings ``A``, ``score(Y_true, Y_pred)`` the CV criterion (higher is
    better): the estimator's decoding.  ``fast_score(U, A, Y_true, rows_ok)``, when given,
    returns the same score without decoding every row (``Y_true`` the non-constant labels
    of the test fold, ``rows_ok`` the rows whose constant labels are right).
    ``label_score(U, A, Y_true)``, when given, scores each non-constant label on the test
    fold (higher is better; constant labels score 0), the criterion of per-label
    penalties (NaN without).  Returns the scores and FISTA iterations
    (n_rho2, n_rho1), the raw solutions ``{(a, b): (coef, intercept, A)}``, the training
    fold's non-constant labels, each label's ``label_score`` on the test fold (n_rho2, n_rho1,
    m), the criterion of per-label penalties, and the seconds spent solving and
    decoding.  ``sample_weight`` (n,) or None weighs the training rows' pseudo-likelihood
    and the test rows' scores (each score function then takes the test rows' weights
    last)."""
    w_te = None if sample_weight is None else sample_weight[test]
    Ytr = Y[train]
    active = non_constant(Ytr)
    n2, n1 = len(rho2s), len(rho1s)
    scores = np.zeros((n2, n1))
    label_scores = np.full((n2, n1, Y.shape[1]), np.nan)
    seconds = {"solve": 0.0, "screen": 0.0, "decode": 0.0}
    n_iter = np.zeros((n2, n1), dtype=int)
    solutions = {}
    base = np.repeat(Ytr[:1], len(test), axis=0)  # constant labels predicted constant
    if not active.any():
        scores[:] = score(Y[test], base, w_te)
        label_scores[:] = 0.0
        return scores, n_iter, solutions, active, label_scores, seconds
    scaling, data, Xte, opts = _fold_data(params, X, Ytr, active, train, test, sample_weight)
    c = params["coupling_scale"]
    previous_row = [None] * n1
    for a, r2 in enumerate(rho2s):
        row = []
        for b, r1 in enumerate(rho1s):
            starts = [s for s in (previous_row[b], row[b - 1] if b else None) if s is not None]

            def objective(s, r1=r1, r2=r2):
                W, _, al = data.split(s["theta"])
                sq = float(W.ravel() @ W.ravel()) + c * float(al @ al)
                ab = float(np.abs(W).sum()) + c * float(np.abs(al).sum())
                return s["loss"] + r2 * sq + r1 * ab

            start = min(starts, key=objective) if starts else None
            point, n_iter[a, b], solutions[(a, b)], U = _path_point(
                data, scaling, Xte, opts, start, (r1, r2, c), seconds
            )
            row.append(point)
            A = solutions[(a, b)][2]
            t1 = time.perf_counter()
            if fast_score is not None:
                rows_ok = np.all(Y[test][:, ~active] == base[:, ~active], axis=1)
                scores[a, b] = fast_score(U, A, Y[test][:, active], rows_ok, w_te)
            else:
                pred = base.copy()
                pred[:, active] = decode(U, A)
                scores[a, b] = score(Y[test], pred, w_te)
            if label_score is not None:
                label_scores[a, b] = 0.0
                label_scores[a, b, active] = label_score(U, A, Y[test][:, active], w_te)
            seconds["decode"] += time.perf_counter() - t1
        previous_row = row
    return scores, n_iter, solutions, active, label_scores, seconds


def fold_weight_path(
    params, X, Y, train, test, rho1s, rho2s, rho1, rho2, label_score, starts, sample_weight=None
):
    """Each label's held-out ``label_score`` (:func:`kclf.corrlog._penalty_search.label_scorer`)
    with the couplings' penalty held at ``(rho1, rho2)`` and the weights' elastic net of
    every label moving together over ``rho2s x rho1s`` (strongest first): the structure
    ``penalty="per_label"`` finally fits, solved as one warm-started path like
    :func:`fold_path`'s (per-label penalties of :class:`Objective`, all labels equal).

    ``starts`` holds ``((a, b), (coef, intercept, A))``, raw solutions of the fold's first
    path (:func:`fold_path`) at grid points ``(a, b)``; the strongest setting starts from the
    one with the smaller objective there.  Returns the label scores (n_rho2, n_rho1, m),
    the FISTA iterations (n_rho2, n_rho1), the raw solutions ``{(a, b): (coef, intercept,
    A)}`` and the seconds spent solving, screening and scoring.
    """
    Ytr = Y[train]
    active = non_constant(Ytr)
    n2, n1 = len(rho2s), len(rho1s)
    label_scores = np.zeros((n2, n1, Y.shape[1]))
    n_iter = np.zeros((n2, n1), dtype=int)
    seconds = {"solve": 0.0, "screen": 0.0, "decode": 0.0}
    solutions = {}
    if not active.any():
        return label_scores, n_iter, solutions, seconds
    scaling, data, Xte, opts = _fold_data(params, X, Ytr, active, train, test, sample_weight)
    w_te = None if sample_weight is None else sample_weight[test]
    c, m = params["coupling_scale"], data.m

    def node(theta, r1):
        F = Objective(data, None, rho1, rho2, c).fields(theta)
        return {"theta": theta, "loss": data.loss(F), "grad": data.Xc.T @ data.dloss(F), "rho1": r1}

    def objective(s, r1, r2):
        # the weights at (r1, r2), the couplings at the shared (rho1, rho2)
        W, _, al = data.split(s["theta"])
        wpen = r2 * float(W.ravel() @ W.ravel()) + r1 * float(np.abs(W).sum())
        return s["loss"] + wpen + c * (rho2 * float(al @ al) + rho1 * float(np.abs(al).sum()))

    first = [node(data.from_raw(*raw, scaling), rho1s[b]) for (_, b), raw in starts]
    previous_row = [None] * n1
    for a, r2 in enumerate(rho2s):
        row = []
        for b, r1 in enumerate(rho1s):
            cands = [s for s in (previous_row[b], row[b - 1] if b else None) if s is not None]
            cands = cands or first
            label_rho = (np.full(m, r1), np.full(m, r2))
            start = None
            if cands:
                start = min(cands, key=lambda s, r1=r1, r2=r2: objective(s, r1, r2))
            point, n_iter[a, b], solutions[(a, b)], U = _path_point(
                data, scaling, Xte, opts, start, (rho1, rho2, c), seconds, label_rho, r1
            )
            row.append(point)
            A = solutions[(a, b)][2]
            t1 = time.perf_counter()
            label_scores[a, b, active] = label_score(U, A, Y[test][:, active], w_te)
            seconds["decode"] += time.perf_counter() - t1
        previous_row = row
    return label_scores, n_iter, solutions, seconds
