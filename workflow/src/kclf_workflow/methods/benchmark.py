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

Adding a peer is one spec here (``register(FAMILY, MethodSpec(...))``) and its name in
the schema's ``benchmark.methods`` enum (with its ``grids`` entry when it has a grid);
``tests/repro/test_registry.py`` holds the two equal.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from kclf import MAPLP, ManifoldGPC

from .. import estimators
from .kernel import KLR_PAIRWISE, LSPC_NEW, LSPC_PARAMETERS, gamma_of, kernel_search
from .spec import MethodSpec, SizePolicy, register

FAMILY = "benchmark"
#: beyond ``subsample`` training rows: fitted on a seeded stratified subsample
SUBSAMPLED = SizePolicy(subsample=True)
#: the kernel searches' default grid: the library's (null: ``LSPCCV``'s own)
KERNEL_GRID = {"sigma_factors": None, "lams": None}
#: MAPLP's widths, times the median distance (null: MAPLP's own width, no search)
MAPLP_WIDTHS = (0.0625, 0.125, 0.25, 0.5, 1.0)


def _folds(cfg, random_state):
    return StratifiedKFold(int(cfg["inner_folds"]), shuffle=True, random_state=random_state)


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
    folds = _folds(cfg, random_state)
    # beyond exact_max rows: the LP over maplp_n_basis centres of all rows
    n_basis = _scalable("maplp_n_basis", cfg, path)
    model = MAPLP(bias=bias, n_basis=n_basis, random_state=random_state)

    def build(sigmas):
        if sigmas is None:
            return model
        return GridSearchCV(model, {"sigma": list(sigmas)}, cv=folds, error_score=np.nan)

    return estimators.MedianWidths(build, grid.get("sigma_factors"))


def _maplp_chosen(est):
    if isinstance(est, GridSearchCV):
        return _search_chosen(est)
    return {"sigma": est.sigma_}


def _mgpc(grid, cfg, path, random_state):
    # beyond exact_max rows: the FITC model of n_inducing inducing inputs on all rows
    n_inducing = _scalable("n_inducing", cfg, path)
    return ManifoldGPC(inference="ep", n_inducing=n_inducing, random_state=random_state)


def _mgpc_chosen(est):
    return {
        "n_centers": est.n_centers_,
        "length_scale": est.length_scale_,
        "amplitude": est.amplitude_,
    }


def _svc(grid, cfg, path, random_state):
    def build(sigmas):
        gammas = list(gamma_of(sigmas))
        return estimators.PlattSVC(
            {"C": list(grid["C"]), "gamma": gammas}, int(cfg["inner_folds"]), random_state
        )

    return estimators.MedianWidths(build, grid["sigma_factors"])


def _search_chosen(est):
    return {k: float(v) for k, v in est.best_params_.items()}


def _lr(grid, cfg, path, random_state):
    return GridSearchCV(
        LogisticRegression(max_iter=grid["max_iter"]),
        {"C": list(grid["C"])},
        cv=_folds(cfg, random_state),
    )


def _gpc(grid, cfg, path, random_state):
    def build(sigmas):
        kernel = ConstantKernel(1.0) * RBF(float(sigmas[0]))
        return GaussianProcessClassifier(kernel, random_state=random_state)

    return estimators.MedianWidths(build, [1.0])


def _hgb(grid, cfg, path, random_state):
    return GridSearchCV(
        HistGradientBoostingClassifier(random_state=random_state),
        {k: list(v) for k, v in grid.items()},
        cv=_folds(cfg, random_state),
    )


def _gpy(grid, cfg, path, random_state):
    return estimators.GPyEPClassifier(random_state=random_state)


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
        grid=("C", "max_iter"),
        defaults={"C": (0.01, 0.1, 1.0, 10.0, 100.0), "max_iter": 1000},
        chosen=_search_chosen,
    ),
    MethodSpec(
        "GPC",
        "GPC",
        build=_gpc,
        chosen=lambda est: {"kernel": str(est.kernel_)},
        size=SUBSAMPLED,
    ),
    MethodSpec(
        "HGB",
        "HGB",
        build=_hgb,
        grid=("learning_rate", "max_leaf_nodes"),
        defaults={"learning_rate": (0.1,), "max_leaf_nodes": (15, 31)},
        chosen=_search_chosen,
    ),
    MethodSpec(
        "GPy-EP",
        "GPy-EP",
        build=_gpy,
        chosen=lambda est: {},
        size=SUBSAMPLED,
        binary_only=True,
        requires=estimators.gpy_missing,
    ),
)
