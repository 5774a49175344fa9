"""The fitted arrays of every logistic model on fixed data, recorded before the IRLS and
Newton loops were merged into one solver (kclf/_newton.py), and compared with today's by
tests/library/test_newton_fingerprints.py within the solvers' tolerances.

``python tests/library/newton_fingerprints.py`` rewrites tests/data/newton_fingerprints.npz
from the code as it is: run it only to record a deliberate change of the models.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import make_blobs, make_classification

from kclf import (
    KernelLogisticRegression,
    KernelLogisticRegressionCV,
    PairwiseCoupling,
    WeightedRidgeLogistic,
)
from kclf.kernels import rbf_kernel

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "newton_fingerprints.npz"
#: a tight tolerance beside the defaults: both fits then sit at the optimum's round-off
TIGHT = {"tol": 1e-12, "cg_tol": 1e-12, "max_iter": 300}


def data(name):
    """``(X, y, X_test)`` of each fixture's fixed data."""
    if name == "binary_small":  # n < 128: direct IRLS steps
        X, y = make_classification(90, 4, n_informative=3, n_redundant=0, random_state=0)
    elif name == "binary_large":  # n >= 128: conjugate gradients
        X, y = make_classification(200, 5, n_informative=3, n_redundant=0, random_state=1)
    elif name == "three":
        X, y = make_blobs(150, 3, centers=3, cluster_std=2.5, random_state=2)
    elif name == "four":  # pairs of about 80 rows: stacked IRLS
        X, y = make_blobs(160, 3, centers=4, cluster_std=2.5, random_state=3)
    elif name == "three_large":  # pairs of about 270 rows: each pair by its own CG fit
        X, y = make_blobs(400, 3, centers=3, cluster_std=3.0, random_state=4)
    elif name == "tasks":
        X, y = make_classification(120, 4, n_informative=3, n_redundant=0, random_state=5)
        y = np.column_stack([y, (X[:, 0] + X[:, 1] > 0)]).astype(int)
    else:
        raise KeyError(name)
    rng = np.random.default_rng(len(name))
    X_test = X[rng.permutation(X.shape[0])[:40]] + 0.3 * rng.normal(size=(40, X.shape[1]))
    return X, y, X_test


def folds(n, k=2):
    """Fixed unshuffled folds (independent of the searches' default fold rule)."""
    idx = np.arange(n)
    return [(idx[idx % k != f], idx[idx % k == f]) for f in range(k)]


CV_GRID = {"sigmas": [0.7, 1.5, 3.0], "lams": [0.01, 0.1, 1.0], "scoring": "log_loss"}

#: name -> (data, estimator factory); ``tight`` variants use TIGHT
CASES = {
    "klr_direct": ("binary_small", lambda kw: KernelLogisticRegression(lam=0.1, **kw)),
    "klr_direct_sigma": (
        "binary_small",
        lambda kw: KernelLogisticRegression(sigma=1.3, lam=0.02, solver="direct", **kw),
    ),
    "klr_cg": ("binary_large", lambda kw: KernelLogisticRegression(sigma=2.0, lam=0.05, **kw)),
    "klr_ovr_cg": (
        "three",
        lambda kw: KernelLogisticRegression(sigma=2.0, lam=0.05, multi_class="ovr", **kw),
    ),
    "klr_ovr_direct": (
        "three",
        lambda kw: KernelLogisticRegression(
            sigma=2.0, lam=0.05, multi_class="ovr", solver="direct", **kw
        ),
    ),
    "klr_pairwise_stacked": (
        "four",
        lambda kw: KernelLogisticRegression(sigma=2.0, lam=0.03, **kw),
    ),
    "klr_pairwise_cg": (
        "three_large",
        lambda kw: KernelLogisticRegression(sigma=2.5, lam=0.03, **kw),
    ),
    "coupling_default_width": (
        "four",
        lambda kw: PairwiseCoupling(KernelLogisticRegression(lam=0.1, **kw)),
    ),
    "klr_nystroem": (
        "binary_large",
        lambda kw: KernelLogisticRegression(
            sigma=2.0, lam=0.05, n_components=40, random_state=0, **kw
        ),
    ),
    "klr_nystroem_ovr": (
        "three",
        lambda kw: KernelLogisticRegression(
            sigma=2.0, lam=0.05, n_components=30, multi_class="ovr", random_state=0, **kw
        ),
    ),
    "cv_binary": (
        "binary_small",
        lambda kw: KernelLogisticRegressionCV(**CV_GRID, cv=folds(90), **kw),
    ),
    "cv_tasks": ("tasks", lambda kw: KernelLogisticRegressionCV(**CV_GRID, cv=folds(120), **kw)),
    "cv_ovr": (
        "three",
        lambda kw: KernelLogisticRegressionCV(**CV_GRID, cv=folds(150), multi_class="ovr", **kw),
    ),
    "cv_pairwise": (
        "three",
        lambda kw: KernelLogisticRegressionCV(**CV_GRID, cv=folds(150), **kw),
    ),
    "cv_nystroem": (
        "binary_large",
        lambda kw: KernelLogisticRegressionCV(
            **CV_GRID, cv=folds(200), n_components=40, random_state=0, **kw
        ),
    ),
}

#: WeightedRidgeLogistic: name -> (data, estimator); its tol is the gradient's
RIDGE_CASES = {
    "ridge_intercept": ("binary_large", {"lam": 0.1}),
    "ridge_no_intercept": ("binary_small", {"lam": 0.3, "fit_intercept": False}),
    "ridge_tight": ("binary_large", {"lam": 0.02, "tol": 1e-13}),
}


def fitted_arrays(name, tight):
    """The arrays that fix one fitted model: its coefficients, the pairs' decisions or the
    search's scores, and ``predict_proba`` on the test rows."""
    data_name, make = CASES[name]
    X, y, X_test = data(data_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = make(TIGHT if tight else {}).fit(X, y)
    out = {"proba": est.predict_proba(X_test)}
    model = getattr(est, "best_estimator_", est)
    if isinstance(est, KernelLogisticRegressionCV):
        out["cv_scores"] = np.asarray(est.cv_results_["mean_test_score"], dtype=float)
        out["sigma"] = np.atleast_1d(np.asarray(est.sigma_, dtype=float))
        out["lam"] = np.atleast_1d(np.asarray(est.lam_, dtype=float))
        if est.n_tasks_ is not None:
            model = None
    coupling = getattr(model, "coupling_", model if isinstance(model, PairwiseCoupling) else None)
    if coupling is not None:
        out["pair_proba"] = coupling.pairwise_proba(X_test)
        for p, e in enumerate(coupling.estimators_):
            out[f"pair{p}_dual_coef"] = e.dual_coef_
    elif model is not None and hasattr(model, "dual_coef_"):
        out["dual_coef"] = model.dual_coef_
    elif model is not None and hasattr(model, "coef_"):
        out["coef"] = model.coef_
    return out


def ridge_arrays(name):
    data_name, params = RIDGE_CASES[name]
    X, y, X_test = data(data_name)
    est = WeightedRidgeLogistic(**params).fit(X, y)
    return {
        "coef": np.r_[est.coef_[0], est.intercept_],
        "objective": np.array([est.objective_]),
        "proba": est.predict_proba(X_test),
    }


#: MGPC's Laplace mode (kclf.mgpc._solver.laplace_mode): name -> (data, tol)
LAPLACE_CASES = {"laplace": ("binary_large", 1e-10), "laplace_tight": ("binary_large", 1e-14)}


def laplace_prior(X):
    """The Laplace fingerprint's prior covariance: Gaussian kernel, width 2, amplitude 3."""
    return 3.0 * rbf_kernel(X, None, 2.0)


def laplace_arrays(name):
    from kclf.mgpc._solver import laplace_mode

    data_name, tol = LAPLACE_CASES[name]
    X, y, _ = data(data_name)
    r = laplace_mode(laplace_prior(X), 2.0 * y - 1.0, 100, tol)
    return {"f": r["f"], "log_marginal_likelihood": np.array([r["log_marginal_likelihood"]])}


def record():
    arrays = {}
    for name in CASES:
        for tight in (False, True):
            for key, value in fitted_arrays(name, tight).items():
                arrays[f"{name}{'_tight' if tight else ''}/{key}"] = value
    for name in RIDGE_CASES:
        for key, value in ridge_arrays(name).items():
            arrays[f"{name}/{key}"] = value
    for name in LAPLACE_CASES:
        for key, value in laplace_arrays(name).items():
            arrays[f"{name}/{key}"] = value
    np.savez_compressed(FIXTURE, **arrays)
    return arrays


if __name__ == "__main__":
    out = record()
    print(f"{len(out)} arrays -> {FIXTURE}")
