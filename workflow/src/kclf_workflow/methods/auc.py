"""The methods of the multi-task AUC experiments: PASCAL VOC, MULAN scene and audio
tagging (the LSPC-new paper's Tables 1 and 2;
:mod:`kclf_workflow.experiments.multitask_auc`).

``build(Xtr, options, random_state, **extra)``: the method's unfitted search on a
trial's training inputs ``Xtr`` as the trial's
:class:`~kclf_workflow.experiments.multitask_auc.TrialOptions` say (``extra``: LSPC's
``n_basis``, the method's variant).  The kernel methods search sigma x lambda for every
task at once (``chosen(search)``: per task, ``(sigma, lambda)``); the SVC
(``options["per_task"]``) searches ``(C, gamma)`` per task on ROC AUC whatever the
experiment's ``scoring`` says (``options["scoring"]``), and is Platt-scaled.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .kernel import KLR_PAIRWISE, LSPC_NEW, LSPC_PARAMETERS, gamma_of, kernel_search
from .spec import MethodSpec, register

FAMILY = "auc"
#: the SVC's ``C`` grid where the experiment gives none
DEFAULT_SVC_CS = np.logspace(-2, 3, 6)


def _kernel_search(method_options, Xtr, options, random_state, **extra):
    return kernel_search(
        method_options,
        None,
        options.lams,
        cv=options.cv,
        random_state=random_state,
        scoring=options.scoring,
        kernel=options.kernel,
        sigma_factors=options.sigma_factors if options.kernel == "rbf" else None,
        **extra,
    )


def _kernel_chosen(search):
    sigmas, lams = search.sigma_, search.lam_
    if np.ndim(lams) == 0:  # one task
        return [(sigmas, lams)]
    return list(zip(sigmas, lams))


def _svc_search(Xtr, options, random_state, **extra):
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.svm import SVC

    from kclf.model_selection import sigma_grid

    folds = KFold(options.cv, shuffle=True, random_state=random_state)
    grid = {"C": list(DEFAULT_SVC_CS if options.svc_Cs is None else options.svc_Cs)}
    if options.kernel == "rbf":
        grid["gamma"] = list(gamma_of(sigma_grid(Xtr, options.sigma_factors)))
    return GridSearchCV(
        SVC(kernel=options.kernel), grid, scoring="roc_auc", cv=folds, error_score=np.nan
    )


def _svc_chosen(search):
    return {k: float(v) for k, v in search.best_params_.items()}


def _kernel_spec(key, name, options, variant=None):
    return MethodSpec(
        key,
        name,
        build=partial(_kernel_search, options),
        grid=("lams",),
        chosen=_kernel_chosen,
        variant=variant,
        low_rank="rounding" in options,
        options=options,
        reference=key,  # the paper's tables report every kernel method
    )


register(
    FAMILY,
    _kernel_spec("lspc_new", "LSPC-new", LSPC_NEW, variant="lspc_new"),
    _kernel_spec("lspc", "LSPC", LSPC_PARAMETERS),
    _kernel_spec("klr", "KLR", KLR_PAIRWISE),
    MethodSpec(
        "svc",
        "SVC",
        build=_svc_search,
        grid=("svc_Cs",),
        defaults={"svc_Cs": DEFAULT_SVC_CS},
        chosen=_svc_chosen,
        probability="platt",
        options={"per_task": True, "scoring": "auc"},
    ),
)
