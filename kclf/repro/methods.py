"""The registry of methods: every method an experiment runs, in one place.

For each experiment family, the methods it runs in table order: the **slug** (config
key, file and wildcard name) and the **display name** (tables, figures; the ``method``
column of the records of the families that store names: ida, mgpc and the multi-task AUC
experiments).  For the kernel methods shared by the families (LSPC-new, LSPC, LSPC',
kernel logistic regression) how to build one with fixed hyper-parameters
(:func:`kernel_estimator`) and its cross-validated search over the family's grid
(:func:`kernel_search`); for every Gaussian-kernel method the width conversion
``gamma = 1 / (2 sigma^2)`` (:func:`gamma_of`, :func:`sigma_of`) between the papers'
sigma and scikit-learn's ``gamma``.

The experiments, the report builders and the workflow's rules (for slugs, display names
and wildcard constraints) all read these tables.
"""

from __future__ import annotations

import numpy as np

from .. import LSPC, LSPCCV, KernelLogisticRegression, KernelLogisticRegressionCV
from ..model_selection import DEFAULT_LAMS, DEFAULT_SIGMA_FACTORS

#: family -> {slug: display name}, in table order
FAMILIES = {
    "ida": {
        "maplp": "MAPLP",
        "maplp_bias": "MAPLP + constant (not in paper)",
        "svm": "SVM",
        "klr": "KLR",
        "lspc_new": "LSPC-new",
        "lspc": "LSPC",
    },
    "multiclass": {
        "klr_pairwise": "kLOGREG pairwise",
        "klr_ovr": "kLOGREG one-vs-rest",
        "lspc_new": "LSPC-new",
        "svc": "SVC (one-vs-one)",
    },
    # the multi-task AUC experiments: PASCAL VOC, MULAN scene, audio tagging
    "auc": {"lspc_new": "LSPC-new", "lspc": "LSPC", "klr": "KLR", "svc": "SVC"},
    "multilabel": {
        "corrlog": "CorrLog",
        "ilr": "ILR",
        "cc": "ClassifierChain (LR)",
        "mo_svc": "MultiOutput (SVC)",
    },
    "mgpc": {
        "mla": "MLA",
        "mep": "MEP",
        "ridge_newton": "Ridge Newton",
        "ridge_gradient": "Ridge gradient",
        "sklearn_gpc": "sklearn GPC",
        "gpy_ep": "GPy EP",
    },
    "lspc_toy": {"lspc_new": "LSPC-new", "lspc": "LSPC", "lspc_prime": "LSPC'"},
    # the benchmark's config lists the table names themselves
    "benchmark": {
        name: name
        for name in (
            "LSPC-new",
            "LSPC",
            "KLR",
            "MAPLP",
            "MAPLP-bias",
            "MGPC-EP",
            "SVC",
            "LR",
            "GPC",
            "HGB",
            "GPy-EP",
        )
    },
}

#: the widths (times the median distance) and lambdas the papers' families search when their
#: config gives none: the library's default grid (kclf.model_selection)
FAMILY_SIGMA_FACTORS = DEFAULT_SIGMA_FACTORS
FAMILY_LAMS = DEFAULT_LAMS
#: LSPC slug -> :class:`kclf.LSPC`'s ``rounding`` (LSPC-new, LSPC, LSPC')
ROUNDING = {"lspc_new": "outputs", "lspc": "parameters", "lspc_prime": "none"}
#: kernel logistic regression slug -> its ``multi_class``
MULTI_CLASS = {"klr": "pairwise", "klr_pairwise": "pairwise", "klr_ovr": "ovr"}


def family_methods(family):
    """``{slug: display name}`` of ``family``, in table order."""
    if family not in FAMILIES:
        raise ValueError(f"unknown experiment family {family!r}; expected one of {list(FAMILIES)}")
    return FAMILIES[family]


def check_method(family, slug):
    """``slug`` when ``family`` runs it; else a ValueError naming the choices."""
    table = family_methods(family)
    if slug not in table:
        raise ValueError(f"unknown method {slug!r} of {family}; expected one of {list(table)}")
    return slug


def slugs_by_name(family):
    """``{display name: slug}`` of ``family``."""
    return {name: slug for slug, name in family_methods(family).items()}


def wildcard(family, by="slug"):
    """Regex of a method wildcard: the family's slugs (or display names) joined by ``|``."""
    table = family_methods(family)
    return "|".join(table if by == "slug" else table.values())


def gamma_of(sigma):
    """scikit-learn's RBF ``gamma = 1 / (2 sigma^2)`` of the Gaussian width ``sigma``."""
    return 1.0 / (2.0 * np.asarray(sigma, dtype=float) ** 2)


def sigma_of(gamma):
    """The Gaussian width ``sigma = sqrt(1 / (2 gamma))`` of scikit-learn's ``gamma``."""
    return np.sqrt(1.0 / (2.0 * np.asarray(gamma, dtype=float)))


def _kernel_kind(slug):
    if slug in ROUNDING:
        return LSPC, LSPCCV, {"rounding": ROUNDING[slug]}
    if slug in MULTI_CLASS:
        klr, klr_cv = KernelLogisticRegression, KernelLogisticRegressionCV
        return klr, klr_cv, {"multi_class": MULTI_CLASS[slug]}
    raise ValueError(f"{slug!r} is no kernel method; expected one of {[*ROUNDING, *MULTI_CLASS]}")


def kernel_estimator(slug, sigma, lam, **kwargs):
    """The LSPC or KLR estimator of ``slug`` with fixed ``sigma`` and ``lam``."""
    cls, _, fixed = _kernel_kind(slug)
    return cls(sigma=sigma, lam=lam, **fixed, **kwargs)


def kernel_search(slug, sigmas, lams, *, cv, random_state, **kwargs):
    """The CV search of ``slug`` (:class:`kclf.LSPCCV` or
    :class:`kclf.KernelLogisticRegressionCV`) over ``sigmas`` x ``lams``."""
    _, cls, fixed = _kernel_kind(slug)
    return cls(sigmas=sigmas, lams=lams, cv=cv, random_state=random_state, **fixed, **kwargs)


def svc_grid(sigmas, Cs):
    """``GridSearchCV`` grid of an RBF SVC: ``C`` x the ``gamma`` of each width."""
    return {"C": list(Cs), "gamma": list(gamma_of(sigmas))}
