"""The multi-class family's methods (the klogreg paper's Table 1;
:mod:`kclf_workflow.experiments.multiclass`).

``build(X, y, sigmas, grid, cv, random_state, variant)``: the method's CV search over the
widths ``sigmas`` and its own ``grid`` (the lambdas of KLR or LSPC-new, the SVC's C
values), fitted on the training part; ``chosen(search)`` its choice as ``sigma`` and
``lam`` or ``C``; ``refit(params, variant)`` the estimator at that choice.
"""

from __future__ import annotations

from functools import partial

from .kernel import (
    KLR_OVR,
    KLR_PAIRWISE,
    LSPC_NEW,
    gamma_of,
    kernel_estimator,
    kernel_search,
    sigma_of,
    svc_grid,
)
from .spec import MethodSpec, register

FAMILY = "multiclass"


def _kernel_search(options, X, y, sigmas, grid, cv, random_state, variant=None):
    search = kernel_search(options, sigmas, grid, cv=cv, random_state=random_state, **variant or {})
    return search.fit(X, y)


def _kernel_chosen(search):
    return {"sigma": search.sigma_, "lam": search.lam_}


def _kernel(options, params, variant=None):
    return kernel_estimator(options, params["sigma"], params["lam"], **variant or {})


def _svc_search(X, y, sigmas, grid, cv, random_state, variant=None):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.svm import SVC

    folds = StratifiedKFold(cv, shuffle=True, random_state=random_state)
    search = GridSearchCV(SVC(), svc_grid(sigmas, grid), cv=folds, scoring="accuracy")
    return search.fit(X, y)


def _svc_chosen(search):
    gamma = search.best_params_["gamma"]
    return {"sigma": float(sigma_of(gamma)), "C": float(search.best_params_["C"])}


def _svc(params, variant=None):
    from sklearn.svm import SVC

    return SVC(gamma=float(gamma_of(params["sigma"])), C=params["C"])


def _kernel_spec(key, name, options, grid, variant=None):
    return MethodSpec(
        key,
        name,
        build=partial(_kernel_search, options),
        grid=(grid,),
        chosen=_kernel_chosen,
        refit=partial(_kernel, options),
        variant=variant,
        low_rank="rounding" in options,
        options=options,
    )


register(
    FAMILY,
    _kernel_spec("klr_pairwise", "kLOGREG pairwise", KLR_PAIRWISE, "lams"),
    _kernel_spec("klr_ovr", "kLOGREG one-vs-rest", KLR_OVR, "lams"),
    _kernel_spec("lspc_new", "LSPC-new", LSPC_NEW, "lspc_lams", variant="lspc_new"),
    MethodSpec(
        "svc",
        "SVC (one-vs-one)",
        build=_svc_search,
        grid=("svc_Cs",),
        chosen=_svc_chosen,
        refit=_svc,
    ),
)
