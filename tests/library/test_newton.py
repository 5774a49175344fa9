"""The one Newton solver (kclf/_newton.py): its loop on problems solved another way, its
step halving, stopping rule and active set, and its conjugate gradients."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from kclf._newton import NewtonProblem, conjugate_gradients, newton


class Logistic(NewtonProblem):
    """L2-penalised logistic regression, one problem per column of ``Y`` (each its own
    ``lam``): ``Phi(w) = sum [y z - log(1 + e^z)] - lam/2 ||w||^2``, ``z = X w``;
    ``scale`` multiplies the Newton step (> 2 overshoots, so halving must act)."""

    def __init__(self, X, Y, lam, scale=1.0):
        self.X, self.Y, self.lam, self.scale = X, Y, np.asarray(lam, dtype=float), scale
        self.seen = []

    def objective(self, w, z, cols):
        Y = self.Y[:, cols]
        return np.sum(Y * z - np.logaddexp(0.0, z), 0) - 0.5 * self.lam[cols] * np.sum(w * w, 0)

    def direction(self, w, z, cols):
        self.seen.append(cols.copy())
        p = expit(z)
        g = self.X.T @ (self.Y[:, cols] - p) - self.lam[cols] * w
        dw = np.empty_like(w)
        for k, t in enumerate(cols):
            H = (self.X * (p[:, k] * (1 - p[:, k]))[:, None]).T @ self.X
            dw[:, k] = self.scale * np.linalg.solve(H + self.lam[t] * np.eye(w.shape[0]), g[:, k])
        return dw, self.X @ dw


def data(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = (X @ rng.normal(size=(d, 3)) + rng.logistic(size=(n, 3)) > 0).astype(float)
    return X, Y


def reference(X, y, lam):
    """The same maximiser by scipy's L-BFGS."""

    def neg(w):
        z = X @ w
        return -(y @ z - np.logaddexp(0.0, z).sum() - 0.5 * lam * w @ w), -(
            X.T @ (y - expit(z)) - lam * w
        )

    return minimize(
        neg,
        np.zeros(X.shape[1]),
        jac=True,
        method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 10000},
    ).x


@pytest.mark.parametrize("scale", [1.0, 3.0])
def test_each_column_reaches_its_maximiser(scale):
    """Three problems with their own lambda at once; with steps three times too long
    every step far from the optimum must be halved back into an ascent, and the loop
    still converges.  Bound: the gap to the maximum is at most (tol + 1e-12) |Phi| (the
    stopping rule and the round-off a step may lose), so the distance to the maximiser
    at most sqrt(2 gap / mu), mu half the smallest eigenvalue of -Hessian there."""
    X, Y = data()
    lam = np.array([0.01, 1.0, 30.0])
    tol = 1e-12 if scale == 1.0 else 1e-10
    problem = Logistic(X, Y, lam, scale)
    w0 = np.zeros((4, 3))
    r = newton(problem, w0, X @ w0, tol=tol, max_iter=200)
    assert r.converged.all()
    for t in range(3):
        ref = reference(X, Y[:, t], lam[t])
        p = expit(X @ ref)
        mu = 0.5 * np.linalg.eigvalsh((X.T * (p * (1 - p))) @ X + lam[t] * np.eye(4))[0]
        gap = (tol + 1e-12) * abs(r.objective[t])
        g_ref = X.T @ (Y[:, t] - p) - lam[t] * ref  # the reference's own distance: |g| / mu
        bound = np.sqrt(2 * gap / mu) + np.linalg.norm(g_ref) / mu
        assert np.linalg.norm(r.x[:, t] - ref) <= bound
    np.testing.assert_allclose(r.z, X @ r.x, atol=1e-10)
    np.testing.assert_allclose(r.objective, problem.objective(r.x, r.z, np.arange(3)))


def test_active_set_and_iteration_counts():
    """A column leaves the active set when it converges: the directions are asked for the
    remaining columns only, and ``n_iter`` counts each column's own steps."""
    X, Y = data()
    problem = Logistic(X, Y, [0.01, 1.0, 30.0])
    w0 = np.zeros((4, 3))
    r = newton(problem, w0, X @ w0, tol=1e-8, max_iter=50)
    asked = np.zeros(3, dtype=int)
    for cols in problem.seen:
        asked[cols] += 1
        assert np.all(np.diff(cols) > 0)
    np.testing.assert_array_equal(asked, r.n_iter)
    assert len(set(r.n_iter.tolist())) > 1  # the columns did stop at different steps


def test_stopping_rule_and_max_iter():
    """Converged means the last step changed the objective by at most tol relatively; a
    column stopped by max_iter is not converged."""
    X, Y = data()
    problem = Logistic(X, Y, [0.01, 1.0, 30.0])
    w0 = np.zeros((4, 3))
    r = newton(problem, w0, X @ w0, tol=1e-10, max_iter=2)
    assert not r.converged.any() and np.all(r.n_iter == 2)
    one = newton(Logistic(X, Y, [0.01, 1.0, 30.0]), w0, X @ w0, tol=1e-10, max_iter=50)
    # one more step from the converged point changes the objective by at most tol
    again = newton(Logistic(X, Y, [0.01, 1.0, 30.0]), one.x, one.z, tol=0.0, max_iter=1)
    change = np.abs(again.objective - one.objective) / np.abs(again.objective)
    assert np.all(change <= 1e-10)


class NoAscent(Logistic):
    """Steps pointing downhill: halving cannot make them an ascent; the first column may
    be retried once (``refine``), then every column stops unconverged, unchanged."""

    def __init__(self, *args):
        super().__init__(*args)
        self.retried = 0

    def direction(self, w, z, cols):
        dw, dz = super().direction(w, z, cols)
        return -dw, -dz

    def refine(self, failed, cols):
        retry = failed & (cols == 0) & (self.retried == 0)
        self.retried += int(retry.any())
        return retry


def test_a_step_that_cannot_ascend_stops_the_column_unchanged():
    X, Y = data()
    problem = NoAscent(X, Y, [0.01, 1.0, 30.0])
    w0 = np.zeros((4, 3))
    r = newton(problem, w0, X @ w0, tol=1e-8, max_iter=50, max_halvings=5)
    assert not r.converged.any()
    np.testing.assert_array_equal(r.x, w0)
    np.testing.assert_array_equal(r.n_iter, [2, 1, 1])  # column 0 retried once


def test_conjugate_gradients_solves_each_column():
    rng = np.random.default_rng(3)
    M = rng.normal(size=(30, 30))
    K = M @ M.T
    lams = np.array([0.1, 1.0, 10.0])
    B = rng.normal(size=(30, 3))
    X, _, converged = conjugate_gradients(
        lambda V, cols: K @ V + lams[cols] * V, B, np.zeros_like(B), 1e-12, 500
    )
    assert converged.all()
    for t in range(3):
        np.testing.assert_allclose(
            X[:, t], np.linalg.solve(K + lams[t] * np.eye(30), B[:, t]), rtol=1e-8, atol=1e-10
        )


def test_preconditioned_conjugate_gradients():
    """With the exact inverse as preconditioner CG converges in one iteration; with a
    Jacobi preconditioner it reaches the same solutions."""
    rng = np.random.default_rng(4)
    M = rng.normal(size=(40, 40)) * np.logspace(0, 2, 40)
    A = M @ M.T + np.eye(40)
    B = rng.normal(size=(40, 2))
    inv = np.linalg.inv(A)
    X, it, ok = conjugate_gradients(
        lambda V, cols: A @ V, B, np.zeros_like(B), 1e-10, 100, lambda R, cols: inv @ R
    )
    assert ok.all() and it == 1
    np.testing.assert_allclose(X, np.linalg.solve(A, B), rtol=1e-8)
    d = np.diag(A)[:, None]
    X, it, ok = conjugate_gradients(
        lambda V, cols: A @ V, B, np.zeros_like(B), 1e-12, 400, lambda R, cols: R / d
    )
    assert ok.all()
    np.testing.assert_allclose(X, np.linalg.solve(A, B), rtol=1e-7)


def test_the_loop_and_cg_run_on_array_api_strict_arrays():
    """The loop and conjugate gradients use only the array API standard: on
    array-api-strict arrays (which refuse anything else) they return that namespace's
    arrays and the NumPy solutions."""
    xp = pytest.importorskip("array_api_strict", reason="array-api-strict not installed")
    Xn, Yn = data()
    X, Y = xp.asarray(Xn), xp.asarray(Yn)
    lam = xp.asarray([0.01, 1.0, 30.0])

    class Strict(NewtonProblem):
        def objective(self, w, z, cols):
            Yc, lc = xp.take(Y, cols, axis=1), xp.take(lam, cols)
            loglik = xp.sum(Yc * z - xp.logaddexp(xp.zeros_like(z), z), axis=0)
            return loglik - 0.5 * lc * xp.sum(w * w, axis=0)

        def direction(self, w, z, cols):
            p = 1.0 / (1.0 + xp.exp(-z))
            lc = xp.take(lam, cols)
            g = X.T @ (xp.take(Y, cols, axis=1) - p) - lc * w
            steps = []
            for k in range(cols.shape[0]):
                H = (X * (p[:, k] * (1.0 - p[:, k]))[:, None]).T @ X
                steps.append(xp.linalg.solve(H + lc[k] * xp.eye(4, dtype=X.dtype), g[:, k]))
            dw = xp.stack(steps, axis=1)
            return dw, X @ dw

    w0 = xp.zeros((4, 3), dtype=xp.float64)
    r = newton(Strict(), w0, X @ w0, tol=1e-12, max_iter=50)
    ref = newton(
        Logistic(Xn, Yn, [0.01, 1.0, 30.0]),
        np.zeros((4, 3)),
        np.zeros((200, 3)),
        tol=1e-12,
        max_iter=50,
    )
    assert isinstance(r.x, type(X)) and bool(xp.all(r.converged))
    np.testing.assert_allclose(np.asarray(r.x), ref.x, rtol=1e-10, atol=1e-12)
    A = X.T @ X
    B = xp.asarray(np.random.default_rng(1).normal(size=(4, 3)))
    S, LS, _, ok = conjugate_gradients(
        lambda V, cols: (A @ V + xp.take(lam, cols) * V, X @ V),
        B,
        xp.zeros_like(B),
        1e-12,
        50,
        lambda R, cols: R / xp.linalg.diagonal(A)[:, None],
        track=True,
    )
    assert isinstance(S, type(X)) and bool(xp.all(ok))
    np.testing.assert_allclose(np.asarray(LS), np.asarray(X @ S), atol=1e-12)
    for t in range(3):
        exact = np.linalg.solve(Xn.T @ Xn + float(lam[t]) * np.eye(4), np.asarray(B)[:, t])
        np.testing.assert_allclose(np.asarray(S)[:, t], exact, rtol=1e-9)
