"""One parameter-validation style: every estimator declares scikit-learn's
``_parameter_constraints`` for exactly its parameters, rejects a bad value of each with
an error naming it, and takes all but its first one or two parameters by keyword."""

import inspect
import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC, LinearSVC

from kclf import (
    LSPC,
    LSPCCV,
    MAPLP,
    CorrLog,
    KernelLogisticRegression,
    KernelLogisticRegressionCV,
    ManifoldGPC,
    PairwiseCoupling,
    WeightedRidgeLogistic,
)
from kclf.platt import PlattScaled

# estimator -> (instance with valid parameters, its positional parameters, bad values)
BAD_INT = [0, 1.5, "3"]
BAD_POSITIVE = [0.0, -1.0, np.inf, np.nan, "1"]
BAD_GRID = [[1.0, -2.0], [0.0], [], "wide"]
BAD_BOOL = ["yes", None]
BAD_SEED = ["seed", 1.5]
CASES = {
    "LSPC": (
        LSPC(),
        ["sigma", "lam"],
        {
            "sigma": BAD_POSITIVE,
            "lam": BAD_POSITIVE,
            "rounding": ["both", None],
            "kernel": ["poly", 3],
            "basis": ["half"],
            "n_basis": BAD_INT,
            "centers": ["grid", None],
            "random_state": BAD_SEED,
            "class_weight": ["inverse", 2.0],
        },
    ),
    "LSPCCV": (
        LSPCCV(),
        ["sigmas", "lams"],
        {
            "sigmas": BAD_GRID,
            "lams": BAD_GRID,
            "sigma_factors": BAD_GRID,
            "cv": [1, 0, "three"],
            "rounding": ["both"],
            "scoring": ["accuracy", None],
            "random_state": BAD_SEED,
            "verbose": ["loud", -1],
            "kernel": ["poly"],
            "n_basis": BAD_INT,
            "centers": ["grid"],
            "basis": ["half", None],
            "class_weight": ["inverse", 2.0],
            "n_jobs": ["two", 1.5, 0],
        },
    ),
    "KernelLogisticRegression": (
        KernelLogisticRegression(),
        ["sigma", "lam"],
        {
            "sigma": BAD_POSITIVE,
            "lam": BAD_POSITIVE,
            "kernel": ["poly", None],
            "multi_class": ["ovo"],
            "tol": BAD_POSITIVE,
            "max_iter": BAD_INT,
            "cg_tol": BAD_POSITIVE,
            "n_components": BAD_INT,
            "fit_intercept": BAD_BOOL,
            "solver": ["lbfgs"],
            "random_state": BAD_SEED,
        },
    ),
    "KernelLogisticRegressionCV": (
        KernelLogisticRegressionCV(),
        ["sigmas", "lams"],
        {
            "sigmas": BAD_GRID,
            "lams": BAD_GRID,
            "sigma_factors": BAD_GRID,
            "cv": [1, "three"],
            "scoring": ["accuracy"],
            "multi_class": ["ovo"],
            "random_state": BAD_SEED,
            "verbose": ["loud", -1],
            "kernel": ["poly"],
            "tol": BAD_POSITIVE,
            "max_iter": BAD_INT,
            "cg_tol": BAD_POSITIVE,
            "fit_intercept": BAD_BOOL,
            "solver": ["lbfgs"],
            "n_components": BAD_INT,
            "n_jobs": ["two", 1.5, 0],
        },
    ),
    "PairwiseCoupling": (
        PairwiseCoupling(LogisticRegression()),
        ["estimator"],
        {
            "estimator": [LinearSVC(), "logistic", None],
            "tol": BAD_POSITIVE,
            "max_iter": BAD_INT,
        },
    ),
    "MAPLP": (
        MAPLP(),
        ["sigma"],
        {
            "sigma": BAD_POSITIVE,
            "kernel": ["poly"],
            "solver_options": [3, "highs"],
            "bias": BAD_BOOL,
            "n_basis": BAD_INT,
            "random_state": BAD_SEED,
        },
    ),
    "ManifoldGPC": (
        ManifoldGPC(n_centers=3),
        ["n_centers"],
        {
            "n_centers": BAD_INT,
            "sigma": BAD_POSITIVE + BAD_GRID,
            "inference": ["vb"],
            "length_scale": BAD_POSITIVE + BAD_GRID,
            "amplitude": BAD_POSITIVE + BAD_GRID,
            "length_scale_factors": BAD_GRID,
            "max_iter": BAD_INT,
            "tol": BAD_POSITIVE,
            "n_init": BAD_INT,
            "search_tol": BAD_POSITIVE,
            "random_state": BAD_SEED,
            "verbose": ["loud", -1],
            "n_inducing": BAD_INT,
        },
    ),
    "WeightedRidgeLogistic": (
        WeightedRidgeLogistic(),
        ["lam"],
        {
            "lam": [-0.1, 1.0, 2, np.nan, "0.1"],
            "solver": ["lbfgs"],
            "fit_intercept": BAD_BOOL,
            "max_iter": BAD_INT,
            "tol": BAD_POSITIVE,
        },
    ),
    "PlattScaled": (
        PlattScaled(SVC()),
        ["estimator"],
        {
            "estimator": ["svm", None],
            "cv": [1, 2.5],
            "random_state": BAD_SEED,
        },
    ),
    "CorrLog": (
        CorrLog(0.0, 1e-2),
        ["rho1", "rho2"],
        {
            "rho1": [-1.0, np.inf, "0"],
            "rho2": [-1.0, np.nan],
            "coupling_scale": [-1.0],
            "couplings": BAD_BOOL,
            "inference": ["gibbs"],
            "decode": ["mode"],
            "gibbs_sweeps": [0, 1.5],
            "penalty": ["per_feature"],
            "label_criterion": ["joint", None],
            "bp_max_iter": BAD_INT,
            "bp_damping": [1.0, -0.1],
            "scaling": ["minmax"],
            "whiten_eps": [0.0],
            "step": ["fixed"],
            "monotone": BAD_BOOL,
            "tol": [-1.0],
            "cv_tol": [-1.0],
            "max_iter": BAD_INT,
            "cv": [1],
            "rho1_grid": ["coarse", 0.1],
            "rho2_grid": ["coarse"],
            "n_jobs": ["all"],
            "random_state": BAD_SEED,
            "verbose": ["loud", -1],
        },
    ),
}
BAD = [
    pytest.param(name, param, value, id=f"{name}-{param}-{value!r}")
    for name, (_, _, bad) in CASES.items()
    for param, values in bad.items()
    for value in values
]


def data():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(-1, 1, (15, 2)), rng.normal(1, 1, (15, 2))]
    return X, np.repeat([0, 1], 15)


@pytest.mark.parametrize("name", CASES)
def test_constraints_cover_exactly_the_parameters(name):
    est, _, bad = CASES[name]
    params = set(est.get_params(deep=False))
    assert set(type(est)._parameter_constraints) == params
    assert set(bad) == params  # every parameter has bad values below


@pytest.mark.parametrize("name,param,value", BAD)
def test_a_bad_value_is_rejected_naming_the_parameter(name, param, value):
    est = clone(CASES[name][0]).set_params(**{param: value})
    with pytest.raises(ValueError) as err:
        est.fit(*data())
    assert re.search(rf"\b{param}\b", str(err.value)), str(err.value)


@pytest.mark.parametrize("name", CASES)
def test_only_the_first_parameters_are_positional(name):
    est, positional, _ = CASES[name]
    cls = type(est)
    params = inspect.signature(cls.__init__).parameters.values()
    kinds = {p.name: p.kind for p in params if p.name != "self"}
    assert [p for p, k in kinds.items() if k is inspect.Parameter.POSITIONAL_OR_KEYWORD] == (
        positional
    )
    assert all(k is inspect.Parameter.KEYWORD_ONLY for p, k in kinds.items() if p not in positional)
    args = [getattr(est, p) for p in positional]
    cls(*args)  # the positional ones still are
    with pytest.raises(TypeError, match="positional"):
        cls(*args, getattr(est, next(p for p in kinds if p not in positional)))


@pytest.mark.parametrize(
    "est,X_kind,match",
    [
        (LSPC(n_basis=5, kernel="precomputed"), "gram", "n_basis"),
        (LSPCCV(n_basis=5, kernel="precomputed"), "gram", "n_basis"),
        (LSPC(n_basis=5, centers="kmeans", basis="classwise"), "X", "classwise"),
        (KernelLogisticRegression(n_components=5, kernel="precomputed"), "gram", "n_components"),
        (KernelLogisticRegressionCV(n_components=5, kernel="precomputed"), "gram", "n_components"),
        (
            PairwiseCoupling(KernelLogisticRegression(n_components=5, kernel="precomputed")),
            "gram",
            "n_components",
        ),
        (LSPCCV(sigmas=[1.0], sigma_factors=[1.0]), "X", "sigma_factors"),
        (KernelLogisticRegressionCV(sigmas=[1.0], sigma_factors=[1.0]), "X", "sigma_factors"),
        (MAPLP(solver_options={"method": "glpk"}), "X", "solver_options"),
    ],
)
def test_rules_between_parameters_name_them(est, X_kind, match):
    X, y = data()
    with pytest.raises(ValueError, match=match):
        est.fit(X @ X.T if X_kind == "gram" else X, y)


@pytest.mark.parametrize(
    "make",
    [
        lambda m: PairwiseCoupling(KernelLogisticRegression(n_components=m)),
        lambda m: KernelLogisticRegression(n_components=m),
        lambda m: KernelLogisticRegressionCV(sigmas=[1.0], lams=[0.1], n_components=m),
    ],
    ids=["PairwiseCoupling", "KernelLogisticRegression", "KernelLogisticRegressionCV"],
)
@pytest.mark.parametrize("value", BAD_INT)
def test_the_shared_basis_pairs_reject_a_bad_size_in_one_line(make, value):
    """Pairwise coupling in one Nystroem basis (three classes): a bad ``n_components`` is
    one line naming it, from every estimator that reaches that path."""
    X, y = data()
    y = np.arange(y.size) % 3
    with pytest.raises(ValueError) as err:
        make(value).fit(X, y)
    assert re.search(r"\bn_components\b", str(err.value)), str(err.value)
    assert "\n" not in str(err.value).strip()
