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
The smooth part is minimised with the non-smooth l1 part by proximal gradient with soft
thresholding (Algorithm 1, Eq. (19)-(20)) accelerated by FISTA (Remark 2) in its monotone
form (Beck and Teboulle, 2009, "MFISTA"), so the objective never increases.

Prediction is the joint MAP (21) by loopy max-product belief propagation (Sec. III-B) or by
exact enumeration of the ``2^m`` label vectors; marginals by sum-product or enumeration.
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import KFold
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from kclf import belief_propagation as bp

#: Default CV grids (used when ``rho1`` / ``rho2`` are None), strongest first.
RHO1_GRID = (1e-2, 1e-3, 1e-4, 0.0)
RHO2_GRID = (1.0, 0.3, 0.1, 0.03, 0.01, 1e-3)
MAX_EXACT_LABELS = 12


# ---------------------------------------------------------------------------------------
# the pseudo-likelihood objective, Eq. (12)-(16)
# ---------------------------------------------------------------------------------------


class _Problem:
    """Smooth part f, l1 part g and prox of the objective for scaled data ``Z = [X, 1]``.

    Parameters are one flat vector ``theta = [B.ravel(), a]``: ``B`` is ``(d + 1, m)`` (last
    row the intercepts), ``a`` the ``m (m - 1) / 2`` couplings of the pairs ``i < j``.
    """

    def __init__(self, Z, S, rho1, rho2, coupling_scale, couplings):
        self.Z, self.S = Z, S  # S: labels in {-1, +1}
        self.n, self.p = Z.shape
        self.m = S.shape[1]
        self.iu = np.triu_indices(self.m, k=1)
        self.n_pairs = len(self.iu[0]) if couplings else 0
        self.couplings = couplings
        nb = self.p * self.m
        # penalty weights per coordinate: 0 on intercepts, 1 on weights, c on couplings
        w = np.ones((self.p, self.m))
        w[-1] = 0.0
        self.pen = np.concatenate([w.ravel(), np.full(self.n_pairs, float(coupling_scale))])
        self.nb = nb
        self.rho1, self.rho2 = float(rho1), float(rho2)

    def size(self):
        return self.nb + self.n_pairs

    def unpack(self, theta):
        B = theta[: self.nb].reshape(self.p, self.m)
        A = np.zeros((self.m, self.m))
        if self.n_pairs:
            A[self.iu] = theta[self.nb :]
            A = A + A.T
        return B, A

    def fields(self, theta):
        """Conditional fields ``beta_i^T x + sum_j alpha_ij y_j`` (n, m), Eq. (11)."""
        B, A = self.unpack(theta)
        return self.Z @ B + self.S @ A

    def f(self, theta, grad=True, F=None):
        """Smooth part (12) + squared-l2 penalty, and its gradient; ``F`` = fields(theta)."""
        if F is None:
            F = self.fields(theta)
        margin = 2.0 * self.S * F
        loss = np.logaddexp(0.0, -margin).sum() / self.n
        pen = self.pen * theta
        value = loss + self.rho2 * float(pen @ theta)
        if not grad:
            return value
        # d loss / d F_li = -2 y_li sigmoid(-margin_li) / n, Eq. (15)-(16)
        G = -2.0 * self.S * (0.5 * (1.0 - np.tanh(0.5 * margin))) / self.n
        gB = self.Z.T @ G
        parts = [gB.ravel()]
        if self.n_pairs:
            GA = self.S.T @ G  # GA[j, i] = sum_l y_lj G_li
            parts.append((GA + GA.T)[self.iu])
        g = np.concatenate(parts) + 2.0 * self.rho2 * pen
        return value, g

    def g(self, theta):
        return self.rho1 * float(np.abs(self.pen * theta).sum())

    def prox(self, v, step):
        """Soft thresholding, Eq. (19)-(20): ``sign(v) max(|v| - step rho1 pen, 0)``."""
        if self.rho1 == 0.0:
            return v
        thr = step * self.rho1 * self.pen
        return np.sign(v) * np.maximum(np.abs(v) - thr, 0.0)

    def lipschitz(self, n_power=30):
        """Upper bound on the Lipschitz constant of grad f.

        The loss has second derivative <= 1/4 in each margin ``2 y F``, so its Hessian is
        bounded by ``(1/n) Phi^T Phi`` with ``Phi: theta -> F`` linear; ``||Phi||^2`` is
        found by power iteration (then inflated by 1% against its slight underestimate).
        """
        rng = np.random.default_rng(0)
        v = rng.standard_normal(self.size())
        lam = 0.0
        for _ in range(n_power):
            v /= np.linalg.norm(v) or 1.0
            F = self.fields(v)
            B_adj = self.Z.T @ F
            parts = [B_adj.ravel()]
            if self.n_pairs:
                GA = self.S.T @ F
                parts.append((GA + GA.T)[self.iu])
            w = np.concatenate(parts)
            lam = float(np.linalg.norm(w))
            v = w
        return 1.01 * lam / self.n + 2.0 * self.rho2 * float(self.pen.max(initial=0.0))


def _mfista(problem, theta0, max_iter, tol, step, monotone=True, refresh=50):
    """Monotone FISTA (Beck & Teboulle 2009) on ``f + g``; returns theta, objective path.

    The fields (11) are linear in theta, so those of the extrapolated point ``y`` are the
    same combination of the fields of ``x``, ``x_old`` and ``z``: one product with the data
    per step (plus the gradient's), recomputed exactly every ``refresh`` steps.
    """
    L = problem.lipschitz()
    if step == "backtracking":
        L_min, L = L, L / 64.0
    x = theta0.copy()
    Fx_fields = problem.fields(x)
    fx = problem.f(x, grad=False, F=Fx_fields)
    Fx = fx + problem.g(x)
    y, Fy_fields, t = x.copy(), Fx_fields, 1.0
    path = [Fx]
    converged = False
    for k in range(max_iter):
        if k % refresh == 0:
            Fy_fields = problem.fields(y)
        fy, gy = problem.f(y, F=Fy_fields)
        while True:
            z = problem.prox(y - gy / L, 1.0 / L)
            Fz_fields = problem.fields(z)
            fz = problem.f(z, grad=False, F=Fz_fields)
            d = z - y
            if step != "backtracking" or fz <= fy + gy @ d + 0.5 * L * (d @ d) + 1e-12 * abs(fy):
                break
            L = min(2.0 * L, L_min)
            if L == L_min:
                z = problem.prox(y - gy / L, 1.0 / L)
                Fz_fields = problem.fields(z)
                fz = problem.f(z, grad=False, F=Fz_fields)
                break
        Fz = fz + problem.g(z)
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        if Fz <= Fx or not monotone:
            c = (t - 1.0) / t_new
            x_old, x, F_old, Fx = x, z, Fx, Fz
            y = x + c * (x - x_old)
            Fy_fields = Fz_fields + c * (Fz_fields - Fx_fields)
            Fx_fields = Fz_fields
            path.append(Fx)
            if abs(F_old - Fx) <= tol * max(abs(F_old), 1e-300):
                converged = True
                break
        else:
            # z rejected: keep x; momentum toward z only (MFISTA's y update)
            c = t / t_new
            y = x + c * (z - x)
            Fy_fields = Fx_fields + c * (Fz_fields - Fx_fields)
            path.append(Fx)
        t = t_new
    return x, np.asarray(path), converged


# ---------------------------------------------------------------------------------------
# preprocessing
# ---------------------------------------------------------------------------------------


def _fit_scaling(X, scaling, whiten_eps):
    """Affine map ``x -> (x - mean) @ T`` for "standardize", "whiten" (ZCA) or None."""
    d = X.shape[1]
    if scaling is None:
        return np.zeros(d), np.eye(d)
    mean = X.mean(axis=0)
    Xc = X - mean
    if scaling == "standardize":
        sd = Xc.std(axis=0)
        sd[sd <= 1e-12 * max(1.0, float(np.abs(X).max(initial=0.0)))] = 1.0
        return mean, np.diag(1.0 / sd)
    cov = Xc.T @ Xc / max(X.shape[0] - 1, 1)
    evals, evecs = np.linalg.eigh(cov)
    evals = np.maximum(evals, 0.0)
    reg = whiten_eps * max(float(evals.mean()), 1e-300)
    T = (evecs / np.sqrt(evals + reg)) @ evecs.T
    return mean, T


# ---------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------


class CorrLog(ClassifierMixin, BaseEstimator):
    """Correlated logistic model (CorrLog) for multilabel classification.

    Eq. (4) of Li et al. (2016): independent logistic regressions per label plus pairwise
    label couplings ``alpha_ij``, learned by elastic-net regularised maximum
    pseudo-likelihood (Eq. (10)-(13), Algorithm 1 with monotone FISTA, Remark 2) and
    predicting the joint MAP label vector, Eq. (21).

    Parameters
    ----------
    rho1 : float >= 0 or None, default=None
        Weight of the l1 part of the elastic net (``lambda * epsilon`` in Eq. (8)). None
        chooses it, jointly with ``rho2``, from ``rho1_grid`` by ``cv``-fold
        cross-validation on the training data (subset accuracy, ties to the stronger
        regularisation).
    rho2 : float >= 0 or None, default=None
        Weight of the squared-l2 part (``lambda_1`` in Eq. (8)); None: chosen by CV.
    coupling_scale : float >= 0, default=1.0
        Multiplies both penalties on the couplings (``lambda_2 / lambda_1`` of Eq. (8)).
    couplings : bool, default=True
        False fixes ``alpha = 0``: independent logistic regressions (ILR, Eq. (1)) with the
        same elastic net, the paper's baseline.
    inference : {"bp", "exact"}, default="bp"
        "bp": max-product loopy belief propagation for :meth:`predict` and sum-product for
        :meth:`predict_proba` (Sec. III-B); "exact": enumeration of all ``2^m`` label
        vectors (m <= 12).
    bp_max_iter : int, default=50
        Early stop of belief propagation (Sec. III-B).
    bp_damping : float in [0, 1), default=0.0
        Message damping of belief propagation.
    scaling : {"standardize", "whiten"} or None, default="standardize"
        Feature preprocessing fitted on the training data: z-scores, or ZCA whitening (the
        authors' choice for scene) regularised by ``whiten_eps`` times the mean eigenvalue.
        The fitted ``coef_`` / ``intercept_`` act on the raw features.
    whiten_eps : float > 0, default=1e-2
    step : {"lipschitz", "backtracking"}, default="backtracking"
        Step ``1/L``: ``L`` an upper bound on the Lipschitz constant of the gradient, or
        backtracking from ``L/64`` (never above the bound).
    monotone : bool, default=True
        Monotone FISTA (objective never increases); False gives plain FISTA.
    tol : float, default=1e-7
        Stop when an accepted step changes the objective by less than ``tol`` relatively.
    max_iter : int, default=3000
    cv : int, default=3
        Folds for choosing ``rho1`` / ``rho2`` when they are None.
    rho1_grid, rho2_grid : sequences of float, default=None
        Grids for the CV (None: :data:`RHO1_GRID`, :data:`RHO2_GRID`).
    random_state : int, default=0
        Seeds the CV fold assignment (the fit itself is deterministic).

    Attributes
    ----------
    classes_ : ndarray of shape (m,)
        Label indices ``0..m-1``; the columns of :meth:`predict` and :meth:`predict_proba`.
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
        ``{"rho1", "rho2", "mean_score"}`` arrays of the CV grid.
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
        "bp_max_iter": [Interval(Integral, 1, None, closed="left")],
        "bp_damping": [Interval(Real, 0, 1, closed="left")],
        "scaling": [StrOptions({"standardize", "whiten"}), None],
        "whiten_eps": [Interval(Real, 0, None, closed="neither")],
        "step": [StrOptions({"lipschitz", "backtracking"})],
        "monotone": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "cv": [Interval(Integral, 2, None, closed="left")],
        "rho1_grid": ["array-like", None],
        "rho2_grid": ["array-like", None],
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
        bp_max_iter=50,
        bp_damping=0.0,
        scaling="standardize",
        whiten_eps=1e-2,
        step="backtracking",
        monotone=True,
        tol=1e-7,
        max_iter=3000,
        cv=3,
        rho1_grid=None,
        rho2_grid=None,
        random_state=0,
    ):
        self.rho1 = rho1
        self.rho2 = rho2
        self.coupling_scale = coupling_scale
        self.couplings = couplings
        self.inference = inference
        self.bp_max_iter = bp_max_iter
        self.bp_damping = bp_damping
        self.scaling = scaling
        self.whiten_eps = whiten_eps
        self.step = step
        self.monotone = monotone
        self.tol = tol
        self.max_iter = max_iter
        self.cv = cv
        self.rho1_grid = rho1_grid
        self.rho2_grid = rho2_grid
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

    # -- fitting -----------------------------------------------------------------------

    def _solve(self, Z, S, rho1, rho2, theta0=None):
        problem = _Problem(Z, S, rho1, rho2, self.coupling_scale, self.couplings)
        if theta0 is None:
            theta0 = np.zeros(problem.size())
            # start the intercepts at the independent label log-odds
            p = np.clip((S > 0).mean(axis=0), 1e-3, 1 - 1e-3)
            theta0[(Z.shape[1] - 1) * S.shape[1] : Z.shape[1] * S.shape[1]] = 0.5 * np.log(
                p / (1 - p)
            )
        theta, path, conv = _mfista(
            problem, theta0, self.max_iter, self.tol, self.step, self.monotone
        )
        B, A = problem.unpack(theta)
        return theta, B, A, path, conv

    def _fit_model(self, X, Y, rho1, rho2, theta0=None):
        """Fit on raw X (n, d) and Y (n, m) 0/1 without constant labels; return a dict."""
        mean, T = _fit_scaling(X, self.scaling, self.whiten_eps)
        Z = np.hstack([(X - mean) @ T, np.ones((X.shape[0], 1))])
        S = 2.0 * Y - 1.0
        theta, B, A, path, conv = self._solve(Z, S, rho1, rho2, theta0)
        W = T @ B[:-1]  # (d, m) on raw features
        return {
            "coef": W.T,
            "intercept": B[-1] - mean @ W,
            "couplings": A,
            "theta": theta,
            "path": path,
            "converged": conv,
        }

    def _cv_select(self, X, Y):
        rho1s = [self.rho1] if self.rho1 is not None else list(self.rho1_grid or RHO1_GRID)
        rho2s = [self.rho2] if self.rho2 is not None else list(self.rho2_grid or RHO2_GRID)
        rho1s = sorted({float(r) for r in rho1s}, reverse=True)
        rho2s = sorted({float(r) for r in rho2s}, reverse=True)
        seed = self.random_state if isinstance(self.random_state, Integral) else None
        folds = KFold(self.cv, shuffle=True, random_state=seed).split(X)
        scores = np.zeros((len(rho2s), len(rho1s)))
        for train, test in folds:
            active = _non_constant(Y[train])
            Yt = Y[train][:, active]
            theta = None
            for a, r2 in enumerate(rho2s):
                for b, r1 in enumerate(rho1s):
                    model = self._fit_model(X[train], Yt, r1, r2, theta)
                    theta = model["theta"]  # warm start along the path
                    pred = Y[train][0].copy() * np.ones((len(test), 1), dtype=int)
                    pred[:, active] = self._map(X[test], model)
                    scores[a, b] += np.mean(np.all(pred == Y[test], axis=1))
        scores /= self.cv
        a, b = np.unravel_index(np.argmax(scores), scores.shape)  # first max: strongest
        grid2, grid1 = np.meshgrid(rho2s, rho1s, indexing="ij")
        results = {"rho1": grid1.ravel(), "rho2": grid2.ravel(), "mean_score": scores.ravel()}
        return rho1s[b], rho2s[a], results

    def fit(self, X, Y):
        """Fit CorrLog (or ILR with ``couplings=False``) to X (n, d) and Y (n, m) 0/1.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        Y : array-like of shape (n_samples, n_labels), values 0/1

        Returns
        -------
        self
        """
        self._validate_params()
        X, Y = validate_data(self, X, Y, multi_output=True, y_numeric=True, dtype=np.float64)
        Y = self._check_Y(Y, X.shape[0])
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
        self.classes_ = np.arange(m)
        self.n_labels_ = m
        self.active_labels_ = active
        self.cv_results_ = None
        start = time.perf_counter()
        if active.sum() == 0:
            rho1, rho2 = (self.rho1 or 0.0), (self.rho2 or 0.0)
            model = None
        elif self.rho1 is None or self.rho2 is None:
            rho1, rho2, self.cv_results_ = self._cv_select(X, Y)
        else:
            rho1, rho2 = float(self.rho1), float(self.rho2)
        self.rho1_, self.rho2_ = rho1, rho2
        self.coef_ = np.zeros((m, X.shape[1]))
        self.intercept_ = np.zeros(m)
        self.couplings_ = np.zeros((m, m))
        self.objective_path_, self.n_iter_, self.converged_ = np.zeros(0), 0, True
        if active.sum():
            model = self._fit_model(X, Y[:, active], rho1, rho2)
            idx = np.flatnonzero(active)
            self.coef_[idx] = model["coef"]
            self.intercept_[idx] = model["intercept"]
            self.couplings_[np.ix_(idx, idx)] = model["couplings"]
            self.objective_path_ = model["path"]
            self.n_iter_ = len(model["path"]) - 1
            self.converged_ = bool(model["converged"])
            if not self.converged_:
                warnings.warn(
                    f"FISTA did not reach tol={self.tol} in max_iter={self.max_iter} iterations",
                    UserWarning,
                    stacklevel=2,
                )
        self.fit_seconds_ = time.perf_counter() - start
        return self

    # -- prediction --------------------------------------------------------------------

    def _map(self, X, model):
        """Joint MAP in {0, 1} for a model dict over its own labels."""
        U = X @ model["coef"].T + model["intercept"]
        if self.inference == "exact":
            S = bp.exact_map(U, model["couplings"])
        else:
            S = bp.max_product(U, model["couplings"], self.bp_max_iter, self.bp_damping)
        return (S > 0).astype(int)

    def _active_model(self):
        idx = np.flatnonzero(self.active_labels_)
        return idx, {
            "coef": self.coef_[idx],
            "intercept": self.intercept_[idx],
            "couplings": self.couplings_[np.ix_(idx, idx)],
        }

    def _constant_fill(self, n, dtype):
        out = np.zeros((n, self.n_labels_), dtype=dtype)
        for j, v in self.constant_labels_.items():
            out[:, j] = v
        return out

    def predict(self, X):
        """Joint MAP label vectors, Eq. (21), as an (n, m) 0/1 matrix."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = self._constant_fill(X.shape[0], int)
        idx, model = self._active_model()
        if len(idx):
            out[:, idx] = self._map(X, model)
        return out

    def predict_proba(self, X):
        """Per-label marginals ``P(y_i = 1 | x)`` under Eq. (4), shape (n, m)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        out = self._constant_fill(X.shape[0], float)
        idx, model = self._active_model()
        if len(idx):
            U = X @ model["coef"].T + model["intercept"]
            if self.inference == "exact":
                out[:, idx] = bp.exact_marginals(U, model["couplings"])
            else:
                out[:, idx] = bp.sum_product(
                    U, model["couplings"], self.bp_max_iter, self.bp_damping
                )
        return out

    def score(self, X, y, sample_weight=None):
        """Subset (0/1) accuracy of :meth:`predict` against the 0/1 matrix ``y``."""
        pred = self.predict(X)
        Y = self._check_Y(y, pred.shape[0])
        hit = np.all(pred == Y, axis=1).astype(float)
        return float(np.average(hit, weights=sample_weight))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        tags.classifier_tags.multi_label = True
        tags.classifier_tags.multi_class = False
        return tags


def _non_constant(Y):
    return np.any(Y != Y[:1], axis=0)
