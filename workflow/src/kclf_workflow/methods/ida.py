"""The IDA family's methods (the MAPLP paper's section 5;
:mod:`kclf_workflow.experiments.ida`).

``build(sigmas, grids, n_folds, random_state)``: the CV search of one selection
realisation over the widths ``sigmas`` (``grids``: the family's block as the fit's params
hold it), ``chosen(search)`` its choice, ``refit(params, grids)`` the estimator at the
selected (median) parameters.  MAPLP + constant is an ablation, not in the paper; the SVM
has no probabilities of its own and is Platt-scaled.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .kernel import (
    KLR_PAIRWISE,
    LSPC_NEW,
    LSPC_PARAMETERS,
    kernel_estimator,
    kernel_search,
    svc_grid,
)
from .spec import MethodSpec, register, variant_params

FAMILY = "ida"


def _folds(n_folds, random_state):
    from sklearn.model_selection import StratifiedKFold

    return StratifiedKFold(n_folds, shuffle=True, random_state=random_state)


def _best_params(search):
    return {k: float(v) for k, v in search.best_params_.items()}


def _maplp_search(bias, sigmas, grids, n_folds, random_state):
    from sklearn.model_selection import GridSearchCV

    from kclf import MAPLP

    return GridSearchCV(
        MAPLP(solver_options=grids.get("maplp_solver_options"), bias=bias),
        {"sigma": list(sigmas)},
        cv=_folds(n_folds, random_state),
        refit=False,
        error_score=np.nan,
    )


def _maplp(bias, params, grids=None):
    from kclf import MAPLP

    return MAPLP(
        sigma=params["sigma"],
        solver_options=(grids or {}).get("maplp_solver_options"),
        bias=bias,
    )


def _svm_search(sigmas, grids, n_folds, random_state):
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC

    return GridSearchCV(
        SVC(), svc_grid(sigmas, grids["svm_C"]), cv=_folds(n_folds, random_state), refit=False
    )


def _svm(params, grids=None):
    from sklearn.svm import SVC

    return SVC(C=params["C"], gamma=params["gamma"])


def _kernel_search(options, variant, sigmas, grids, n_folds, random_state):
    extra = variant_params(variant, grids)
    return kernel_search(
        options, sigmas, grids["lams"], cv=n_folds, random_state=random_state, **extra
    )


def _kernel_chosen(search):
    return {"sigma": float(search.sigma_), "lam": float(search.lam_)}


def _kernel(options, variant, params, grids=None):
    extra = variant_params(variant, grids)
    return kernel_estimator(options, params["sigma"], params["lam"], **extra)


def _kernel_spec(key, name, options, variant=None):
    return MethodSpec(
        key,
        name,
        build=partial(_kernel_search, options, variant),
        grid=("lams",),
        chosen=_kernel_chosen,
        refit=partial(_kernel, options, variant),
        variant=variant,
        low_rank="rounding" in options,
        options=options,
    )


register(
    FAMILY,
    *(
        MethodSpec(
            key,
            name,
            build=partial(_maplp_search, bias),
            grid=("maplp_solver_options",),
            chosen=_best_params,
            refit=partial(_maplp, bias),
            options={"bias": bias},
        )
        for key, name, bias in (
            ("maplp", "MAPLP", False),
            ("maplp_bias", "MAPLP + constant (not in paper)", True),
        )
    ),
    MethodSpec(
        "svm",
        "SVM",
        build=_svm_search,
        grid=("svm_C",),
        chosen=_best_params,
        refit=_svm,
        probability="platt",
    ),
    _kernel_spec("klr", "KLR", KLR_PAIRWISE),
    _kernel_spec("lspc_new", "LSPC-new", LSPC_NEW, variant="lspc_new"),
    _kernel_spec("lspc", "LSPC", LSPC_PARAMETERS),
)
