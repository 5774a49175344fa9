"""The registry of methods: every method of every experiment family, in one place.

For each family (``ida``, ``multiclass``, ``auc`` (the multi-task AUC experiments: PASCAL
VOC, MULAN scene, audio tagging), ``multilabel``, ``mgpc``, ``lspc_toy``, ``benchmark``) its
methods in table order, each a :class:`MethodSpec`: its config key (also its file and
wildcard name), its table name, how to build it from its grid and the family's config,
its grid keys and their defaults, how it meets a large training set
(:class:`SizePolicy`), whether it takes two classes only, what it needs installed, and
how to read what its search chose.  One module per family holds its specs
(:mod:`.ida`, :mod:`.multiclass`, :mod:`.auc`, :mod:`.multilabel`, :mod:`.mgpc`,
:mod:`.lspc_toy`, :mod:`.benchmark`); :mod:`.kernel` what the kernel methods share.

Model building (``kclf_workflow.experiments``), the plans (what a fit's params hold, which
jobs run), the rule files (wildcard constraints) and the reports (names, order) all read
these specs; the schemas' method enums are held equal to them by
``tests/repro/test_registry.py``.

The rule files import this registry at every start of Snakemake (a dry run, each cluster
job), so the builders import scikit-learn and kclf when a job calls them, not here:
``tests/repro/test_workflow_package.py`` holds the rule files' imports free of both.
"""

from . import auc, benchmark, ida, lspc_toy, mgpc, multiclass, multilabel
from .kernel import gamma_of, kernel_estimator, kernel_search, sigma_of, svc_grid
from .spec import (
    REGISTRY,
    MethodSpec,
    SizePolicy,
    check_method,
    family_methods,
    register,
    slugs_by_name,
    spec,
    specs,
    variant_params,
    wildcard,
)

#: the families, in the order their modules register them
FAMILIES = ("ida", "multiclass", "auc", "multilabel", "mgpc", "lspc_toy", "benchmark")

__all__ = [
    "FAMILIES",
    "REGISTRY",
    "MethodSpec",
    "SizePolicy",
    "auc",
    "benchmark",
    "check_method",
    "family_methods",
    "gamma_of",
    "ida",
    "kernel_estimator",
    "kernel_search",
    "lspc_toy",
    "mgpc",
    "multiclass",
    "multilabel",
    "register",
    "sigma_of",
    "slugs_by_name",
    "spec",
    "specs",
    "svc_grid",
    "variant_params",
    "wildcard",
]
