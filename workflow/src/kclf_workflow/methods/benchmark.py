"""The benchmark family's methods: every kclf method beside the classifiers people use
(:mod:`kclf_workflow.experiments.benchmark`); the config names them by their table
names.

``build(grid, cfg, path, random_state)``: the method's estimator, its search included,
to be fitted on a preprocessed training fold: ``grid`` its own grid (``grids.<name>`` of
the block, its ``defaults`` where the block gives none), ``cfg`` the block as the fit's
params hold it (``inner_folds``, the scalable path's size), ``path`` how it meets the
fold's size (:func:`kclf_workflow.experiments.benchmark.training_rows`: ``"exact"``,
``"<scalable key>=<size>"`` or ``"subsample"``).  Widths are multiples of the median
pairwise distance of the preprocessed training fold.  ``chosen(fitted)`` reads the choice
of the fitted estimator (a median-width wrapper's inner one).

A peer's search is :func:`grid_search`: scikit-learn's ``GridSearchCV`` on the inner folds
over the grid's lists (its scalars are fixed settings), the estimator at the one point
itself where the grid has one point (no inner CV).

Adding a peer is one spec here (``register(FAMILY, MethodSpec(...))``) and its name in
the schema's ``benchmark.methods`` enum (with its ``grids`` entry when it has a grid);
``tests/repro/test_registry.py`` holds the two equal.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .kernel import KLR_PAIRWISE, LSPC_NEW, LSPC_PARAMETERS, gamma_of, kernel_search
from .spec import MethodSpec, SizePolicy, gpy_missing, register

FAMILY = "benchmark"
#: beyond ``subsample`` training rows: fitted on a seeded stratified subsample
SUBSAMPLED = SizePolicy(subsample=True)
#: the kernel searches' default grid: the library's (null: ``LSPCCV``'s own)
KERNEL_GRID = {"sigma_factors": None, "lams": None}
#: MAPLP's widths, times the median distance (null: MAPLP's own width, no search)
MAPLP_WIDTHS = (0.0625, 0.125, 0.25, 0.5, 1.0)


def _folds(cfg, random_state):
    from sklearn.model_selection import StratifiedKFold

    return StratifiedKFold(int(cfg["inner_folds"]), shuffle=True, random_state=random_state)


def grid_search(estimator, grid, cfg, random_state, criterion=None):
    """``estimator`` searched over ``grid`` on the ``inner_folds`` of the training fold,
    or by its own ``criterion`` (:class:`kclf_workflow.estimators.OwnCriterionSearch`:
    each point fitted once on the training rows, no inner CV) when one is given.

    ``grid``: ``{parameter: list}`` (a list is searched, a scalar fixed) or a list of
    such dicts (``GridSearchCV``'s ``param_grid``).  A grid of one point gives the
    estimator at that point, fitted once: a search of one candidate would spend its inner
    folds choosing nothing."""
    from sklearn.model_selection import GridSearchCV, ParameterGrid

    from .. import estimators

    grids = grid if isinstance(grid, list) else [grid]
    fixed = {k: v for g in grids for k, v in g.items() if not isinstance(v, list)}
    searched = [{k: v for k, v in g.items() if isinstance(v, list)} for g in grids]
    estimator.set_params(**fixed)
    points = list(ParameterGrid(searched))
    if len(points) == 1:
        return estimator.set_params(**points[0])
    param_grid = searched if isinstance(grid, list) else searched[0]
    if criterion is not None:
        return estimators.OwnCriterionSearch(estimator, param_grid, criterion)
    return GridSearchCV(estimator, param_grid, cv=_folds(cfg, random_state))


def _plain(value):
    """A parameter's value, JSON-ready (NumPy scalars as Python numbers)."""
    return value.item() if isinstance(value, np.generic) else value


def search_chosen(keys, est):
    """The values of ``keys`` the fitted ``est`` holds: its search's choice, or the one
    point of a one-point grid."""
    params = est.best_params_ if hasattr(est, "best_params_") else est.get_params()
    return {k: _plain(params[k]) for k in keys if k in params}


def _scalable(key, cfg, path):
    """The size of the scalable path ``key`` when the fold takes it, else None."""
    return cfg[key] if path.startswith(key) else None


def _kernel(options, key, grid, cfg, path, random_state):
    return kernel_search(
        options,
        None,
        grid.get("lams"),
        cv=int(cfg["inner_folds"]),
        random_state=random_state,
        sigma_factors=grid.get("sigma_factors"),
        **{key: _scalable(key, cfg, path)},
    )


def _kernel_chosen(est):
    return {"sigma": est.sigma_, "lam": est.lam_}


def _maplp(bias, grid, cfg, path, random_state):
    # beyond exact_max rows: the LP over maplp_n_basis centres of all rows
    from kclf import MAPLP

    from .. import estimators

    n_basis = _scalable("maplp_n_basis", cfg, path)

    def build(sigmas):
        model = MAPLP(bias=bias, n_basis=n_basis, random_state=random_state)
        if sigmas is None:
            return model
        return grid_search(model, {"sigma": list(sigmas)}, cfg, random_state)

    return estimators.MedianWidths(build, grid.get("sigma_factors"))


def _maplp_chosen(est):
    if hasattr(est, "best_params_"):
        return _search_chosen(est)
    return {"sigma": est.sigma_}


def _mgpc(grid, cfg, path, random_state):
    # beyond exact_max rows: the FITC model of n_inducing inducing inputs on all rows
    from kclf import ManifoldGPC

    n_inducing = _scalable("n_inducing", cfg, path)
    return ManifoldGPC(inference="ep", n_inducing=n_inducing, random_state=random_state)


def _mgpc_chosen(est):
    return {
        "n_centers": est.n_centers_,
        "length_scale": est.length_scale_,
        "amplitude": est.amplitude_,
    }


def _svc(grid, cfg, path, random_state):
    from .. import estimators

    def build(sigmas):
        gammas = list(gamma_of(sigmas))
        return estimators.PlattSVC(
            {"C": list(grid["C"]), "gamma": gammas}, int(cfg["inner_folds"]), random_state
        )

    return estimators.MedianWidths(build, grid["sigma_factors"])


def _search_chosen(est):
    return {k: float(v) for k, v in est.best_params_.items()}


#: LR's penalties as ``LogisticRegression`` takes them (scikit-learn 1.8 deprecated
#: ``penalty``): L2 by lbfgs, L1 by saga (the solver of L1 with several classes)
PENALTIES = {
    "l2": {"l1_ratio": [0.0], "solver": ["lbfgs"]},
    "l1": {"l1_ratio": [1.0], "solver": ["saga"]},
}


def _lr(grid, cfg, path, random_state):
    from sklearn.linear_model import LogisticRegression

    Cs = list(grid["C"])
    return grid_search(
        LogisticRegression(
            max_iter=int(grid["max_iter"]), tol=float(grid["tol"]), random_state=random_state
        ),
        [{"C": Cs, **PENALTIES[p]} for p in grid["penalty"]],
        cfg,
        random_state,
    )


def _lr_chosen(est):
    params = search_chosen(("C", "l1_ratio"), est)
    return {"C": params["C"], "penalty": "l1" if params["l1_ratio"] == 1.0 else "l2"}


def _gpc(grid, cfg, path, random_state):
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    from .. import estimators

    def build(sigmas):
        kernel = ConstantKernel(1.0) * RBF(float(sigmas[0]))
        return GaussianProcessClassifier(
            kernel,
            n_restarts_optimizer=int(grid["n_restarts_optimizer"]),
            random_state=random_state,
        )

    return estimators.MedianWidths(build, [1.0])


def _lists(grid, keys):
    """``grid``'s entries ``keys`` as lists (searched)."""
    return {k: list(grid[k]) for k in keys}


#: the hyper-parameters each peer's grid searches (its other keys are fixed settings)
HGB_SEARCHED = ("learning_rate", "max_leaf_nodes", "min_samples_leaf", "l2_regularization")
RF_SEARCHED = ("max_features", "min_samples_leaf")
KNN_SEARCHED = ("n_neighbors", "weights")


def _hgb(grid, cfg, path, random_state):
    # early stopping off: with it on ("auto"), sets over 10,000 rows would stop on a
    # held-out tenth in the refit but not in the inner folds' fits
    from sklearn.ensemble import HistGradientBoostingClassifier

    return grid_search(
        HistGradientBoostingClassifier(early_stopping=False, random_state=random_state),
        {**_lists(grid, HGB_SEARCHED), "max_iter": int(grid["max_iter"])},
        cfg,
        random_state,
    )


def _rf(grid, cfg, path, random_state):
    # chosen by the forest's own out-of-bag accuracy: one forest per setting on the
    # training rows, each row voted on by the trees that did not draw it
    from sklearn.ensemble import RandomForestClassifier

    from .. import estimators

    oob = grid["selection"] == "out_of_bag"
    return grid_search(
        RandomForestClassifier(oob_score=oob, random_state=random_state),
        {**_lists(grid, RF_SEARCHED), "n_estimators": int(grid["n_estimators"])},
        cfg,
        random_state,
        criterion=estimators.oob_accuracy if oob else None,
    )


def _knn(grid, cfg, path, random_state):
    from sklearn.neighbors import KNeighborsClassifier

    return grid_search(KNeighborsClassifier(), _lists(grid, KNN_SEARCHED), cfg, random_state)


def _gpy(grid, cfg, path, random_state):
    from ..estimators import GPyEPClassifier

    return GPyEPClassifier(random_state=random_state)


def _kernel_spec(name, options, key, size):
    return MethodSpec(
        name,
        name,
        build=partial(_kernel, options, key),
        grid=tuple(KERNEL_GRID),
        defaults=KERNEL_GRID,
        chosen=_kernel_chosen,
        size=size,
        options=options,
    )


def _maplp_spec(name, bias):
    return MethodSpec(
        name,
        name,
        build=partial(_maplp, bias),
        grid=("sigma_factors",),
        defaults={"sigma_factors": MAPLP_WIDTHS},
        chosen=_maplp_chosen,
        size=SizePolicy(scalable="maplp_n_basis"),
        options={"bias": bias},
    )


register(
    FAMILY,
    _kernel_spec("LSPC-new", LSPC_NEW, "n_basis", SizePolicy(scalable="n_basis")),
    _kernel_spec("LSPC", LSPC_PARAMETERS, "n_basis", SizePolicy(scalable="n_basis")),
    # more than two classes: the pairs share one Nystroem basis of n_components landmarks
    _kernel_spec("KLR", KLR_PAIRWISE, "n_components", SizePolicy(scalable="n_components")),
    _maplp_spec("MAPLP", False),
    _maplp_spec("MAPLP-bias", True),
    MethodSpec(
        "MGPC-EP",
        "MGPC-EP",
        build=_mgpc,
        chosen=_mgpc_chosen,
        size=SizePolicy(scalable="n_inducing"),
        binary_only=True,
    ),
    MethodSpec(
        "SVC",
        "SVC",
        build=_svc,
        grid=("C", "sigma_factors"),
        defaults={"C": (0.1, 1.0, 10.0, 100.0), "sigma_factors": (0.25, 0.5, 1.0, 2.0)},
        chosen=_search_chosen,
        size=SUBSAMPLED,
        probability="platt",
    ),
    MethodSpec(
        "LR",
        "LR",
        build=_lr,
        grid=("C", "penalty", "max_iter", "tol"),
        defaults={
            "C": (0.01, 0.1, 1.0, 10.0, 100.0),
            "penalty": ("l2", "l1"),
            "max_iter": 1000,
            "tol": 1e-4,
        },
        chosen=_lr_chosen,
    ),
    MethodSpec(
        "GPC",
        "GPC",
        build=_gpc,
        grid=("n_restarts_optimizer",),
        defaults={"n_restarts_optimizer": 2},
        chosen=lambda est: {"kernel": str(est.kernel_)},
        size=SUBSAMPLED,
    ),
    MethodSpec(
        "HGB",
        "HGB",
        build=_hgb,
        grid=(*HGB_SEARCHED, "max_iter"),
        defaults={
            "learning_rate": (0.05, 0.2),
            "max_leaf_nodes": (7, 31),
            "min_samples_leaf": (5, 20),
            "l2_regularization": (0.0, 1.0),
            "max_iter": 100,
        },
        chosen=partial(search_chosen, HGB_SEARCHED),
        size=SUBSAMPLED,
    ),
    MethodSpec(
        "GPy-EP",
        "GPy-EP",
        build=_gpy,
        chosen=lambda est: {},
        size=SUBSAMPLED,
        binary_only=True,
        requires=gpy_missing,
    ),
    MethodSpec(
        "RF",
        "RF",
        build=_rf,
        grid=(*RF_SEARCHED, "n_estimators", "selection"),
        defaults={
            "max_features": ("sqrt", 0.25, 0.5, 1.0),
            "min_samples_leaf": (1, 2, 5, 10),
            "n_estimators": 100,
            "selection": "out_of_bag",
        },
        chosen=partial(search_chosen, RF_SEARCHED),
        size=SUBSAMPLED,
    ),
    MethodSpec(
        "kNN",
        "kNN",
        build=_knn,
        grid=KNN_SEARCHED,
        defaults={"n_neighbors": (1, 3, 5, 7, 11, 15, 21, 31), "weights": ("uniform", "distance")},
        chosen=partial(search_chosen, KNN_SEARCHED),
    ),
)
