"""KLR's Nystroem path on the array API takes Falkon's preconditioned Newton-CG steps
(issue "On the hardware users have", item 2), as the NumPy path does, and finds the
landmarks' rows without copying the inputs to the host.

Tolerance of the probabilities.  Each fit stops when the relative change of ``Phi`` is at
most ``tol``.  Near the optimum an inexact Newton step of relative residual ``eta = 0.1``
leaves at most a fraction ``rho <= 1/2`` of the objective's gap, so the gap after the last
step is at most ``rho / (1 - rho)`` times that step's change: ``gap <= tol |Phi|``, and
``|Phi| <= n log 2`` (every fit of a path, started at 0 or at the previous larger
lambda's solution, is above ``Phi(0) = -n log 2`` and below 0).  With ``H = Phi^T W Phi +
lam I`` and ``gap = d^T H d / 2`` for the error ``d`` of the weights, the latent value of
row ``i`` is off by ``|phi_i^T d| <= sqrt(phi_i^T H^-1 phi_i) sqrt(2 gap) <= sqrt(2 gap /
W_ii)`` (``H >= W_ii phi_i phi_i^T + lam I``), its probability by ``W_ii`` times that,
``sqrt(2 gap W_ii) <= sqrt(gap / 2)`` (``W_ii = p (1 - p) <= 1/4``).  Two fits, each
that close to the optimum: ``|p_xp - p_numpy| <= sqrt(2 tol n log 2)``.  Both paths take
the same steps in another order of operations, so they agree far closer (5e-14 to 1.3e-10
measured on these tests' data); the bound is what a correct solver must meet whatever its steps.
"""

import math

import numpy as np
import pytest
import sklearn
from sklearn.datasets import make_classification

from kclf import KernelLogisticRegression, KernelLogisticRegressionCV
from kclf._array_api import to_numpy
from kclf.klr import _array_api_paths as xpaths
from kclf.klr._solver import landmark_rows

array_api_strict = pytest.importorskip("array_api_strict")
array_api_compat = pytest.importorskip("array_api_compat")

TOL = 1e-10


@pytest.fixture(params=["array_api_strict", "torch"])
def xp_to(request):
    """``(xp, to)``: a namespace and a converter from NumPy (float64)."""
    if request.param == "array_api_strict":
        return array_api_strict, array_api_strict.asarray
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed here: its CPU tensors are not tested"
    )
    return array_api_compat.array_namespace(torch.zeros(1)), torch.asarray


@pytest.fixture
def steps(monkeypatch):
    """Counts of the Nystroem path's Newton steps, of its Hessians formed from all rows and
    of its preconditioned CG solves (the real functions, wrapped)."""
    seen = {"steps": 0, "hessians": 0, "pcg": 0}
    direction, refresh = xpaths.PrimalProblem.direction, xpaths.HessianCache.refresh
    cg = xpaths.conjugate_gradients

    def count_direction(self, *args):
        seen["steps"] += 1
        return direction(self, *args)

    def count_refresh(self, *args):
        seen["hessians"] += 1
        return refresh(self, *args)

    def count_cg(*args, **kwargs):
        if len(args) > 5 and args[5] is not None and kwargs.get("track"):
            seen["pcg"] += 1
        return cg(*args, **kwargs)

    monkeypatch.setattr(xpaths.PrimalProblem, "direction", count_direction)
    monkeypatch.setattr(xpaths.HessianCache, "refresh", count_refresh)
    monkeypatch.setattr(xpaths, "conjugate_gradients", count_cg)
    return seen


CASES = {
    "binary": (2, None),
    "ovr-weighted": (3, "weights"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_klr_cv_nystroem_takes_preconditioned_cg_steps_equal_to_numpy(xp_to, case, steps):
    xp, to = xp_to
    n_classes, weighted = CASES[case]
    n = 150
    X, y = make_classification(
        n, 6, n_informative=4, n_classes=n_classes, n_clusters_per_class=1, random_state=0
    )
    w = np.random.default_rng(1).integers(0, 3, n).astype(float) if weighted else None
    est = KernelLogisticRegressionCV(
        lams=[1e-4, 1e-2, 1.0],
        sigma_factors=[1.0],
        n_components=30,
        random_state=0,
        tol=TOL,
        multi_class="ovr",
    )
    ref = sklearn.clone(est).fit(X, y, sample_weight=w)
    with sklearn.config_context(array_api_dispatch=True):
        fitted = sklearn.clone(est).fit(to(X), to(y), sample_weight=None if w is None else to(w))
        P = fitted.predict_proba(to(X))
    assert array_api_compat.array_namespace(P).__name__ == xp.__name__
    # the steps were Newton-CG: CG preconditioned by cached Hessians, and fewer Hessians
    # formed than steps taken
    assert steps["pcg"] > 0
    assert 0 < steps["hessians"] < steps["steps"]
    c_sum = n if w is None else float(w.sum())
    bound = math.sqrt(2.0 * TOL * c_sum * math.log(2.0))
    np.testing.assert_allclose(to_numpy(P), ref.predict_proba(X), rtol=0, atol=bound)
    assert (float(fitted.sigma_), float(fitted.lam_)) == (float(ref.sigma_), float(ref.lam_))
    # the same steps: as many per fit as NumPy's
    np.testing.assert_array_equal(to_numpy(fitted.n_iter_), np.asarray(ref.n_iter_))
    np.testing.assert_allclose(
        np.asarray(fitted.cv_results_["mean_test_score"]),
        ref.cv_results_["mean_test_score"],
        rtol=1e-6,
    )


def test_klr_nystroem_fit_equals_numpy_within_the_solver_bound(xp_to, steps):
    xp, to = xp_to
    X, y = make_classification(300, 5, random_state=2)
    est = KernelLogisticRegression(n_components=50, lam=1e-3, random_state=0, tol=TOL)
    ref = sklearn.clone(est).fit(X, y)
    with sklearn.config_context(array_api_dispatch=True):
        fitted = sklearn.clone(est).fit(to(X), to(y))
        P = fitted.predict_proba(to(X))
    assert steps["pcg"] > 0 and steps["hessians"] < steps["steps"]
    bound = math.sqrt(2.0 * TOL * X.shape[0] * math.log(2.0))
    np.testing.assert_allclose(to_numpy(P), ref.predict_proba(X), rtol=0, atol=bound)
    np.testing.assert_array_equal(to_numpy(fitted.n_iter_), ref.n_iter_)
    np.testing.assert_array_equal(to_numpy(fitted.nystroem_.components_), ref.nystroem_.components_)


def test_hessian_cache_solves_the_shifted_gram_system():
    rng = np.random.default_rng(0)
    Phi, d, r = rng.normal(size=(60, 12)), rng.random(60), rng.normal(size=(12, 3))
    cache = xpaths.HessianCache(array_api_strict, array_api_strict.asarray(Phi))
    cache.refresh(0, array_api_strict.asarray(d))
    for lam in (1e-6, 1e-2, 10.0):
        H = Phi.T @ (d[:, None] * Phi) + lam * np.eye(12)
        got = to_numpy(cache.solve(0, lam, array_api_strict.asarray(r)))
        # a backward stable solve: residual within round-off of ||H|| ||x||
        res = np.linalg.norm(H @ got - r, axis=0)
        assert np.all(res <= 1e-12 * np.linalg.norm(H, 2) * np.linalg.norm(got, axis=0))


def rows_with_ties(n=300, seed=0):
    """Rows with many repeats, rows equal up to the sign of zero, and huge entries."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, 3)).astype(float)
    X[rng.random(n) < 0.2] *= -1.0
    X[5], X[7] = [0.0, -0.0, 1e300], [-0.0, 0.0, 1e300]
    X[9] = [-1.7e308, -1.7e308, -1.7e308]
    return X, rng.integers(0, 3, n).astype(float)


@pytest.mark.parametrize("weighted", [False, True])
def test_landmark_rows_of_device_arrays_are_the_host_ones(xp_to, weighted):
    xp, to = xp_to
    X, w = rows_with_ties()
    sw = w if weighted else None
    got = xpaths.landmark_rows_of(xp, to(X), sw)
    np.testing.assert_array_equal(got, landmark_rows(X, sw))
    # every hash shared (as if all collided): the host comparison alone decides
    forced = xpaths.rows_by_hash(np.zeros(X.shape[0]), lambda idx: X[idx], sw)
    np.testing.assert_array_equal(forced, landmark_rows(X, sw))
    nan = xpaths.rows_by_hash(np.full(X.shape[0], np.nan), lambda idx: X[idx], sw)
    np.testing.assert_array_equal(nan, landmark_rows(X, sw))


def test_landmark_rows_of_distinct_rows_copy_no_row_to_the_host(monkeypatch):
    X = np.random.default_rng(0).normal(size=(500, 8))
    copied = []
    to_host = xpaths.to_numpy

    def record(a, *args):
        copied.append(tuple(a.shape))
        return to_host(a, *args)

    monkeypatch.setattr(xpaths, "to_numpy", record)
    got = xpaths.landmark_rows_of(array_api_strict, array_api_strict.asarray(X))
    np.testing.assert_array_equal(got, np.arange(500))
    # only the hashes (n,) and the (empty) shared rows came back
    assert all(len(s) == 1 or s[0] == 0 for s in copied), copied
