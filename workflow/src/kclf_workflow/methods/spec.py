"""The registry's entries: one :class:`MethodSpec` per method of an experiment family, and
the lookups every reader uses (model building, the plans, the rule files, the reports)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

#: family -> {key: spec}, in table order (filled by the family modules of this package)
REGISTRY: dict[str, dict[str, MethodSpec]] = {}


@dataclass(frozen=True)
class SizePolicy:
    """How a method meets a large training set (the benchmark's ``exact_max`` and
    ``subsample`` keys).

    ``scalable``: the benchmark key of its scalable path, taken on all rows beyond
    ``exact_max`` training rows (``n_basis``, ``n_components``, ``maplp_n_basis``,
    ``n_inducing``; None: none); ``subsample``: fitted on a seeded stratified subsample of
    ``subsample[<name>]`` rows beyond that many.
    """

    scalable: str | None = None
    subsample: bool = False

    @property
    def reads_subsample(self):
        """Whether a fit reads the method's entry of ``subsample``."""
        return self.subsample


EXACT = SizePolicy()


@dataclass(frozen=True)
class MethodSpec:
    """One method of one experiment family.

    Attributes
    ----------
    key : str
        The config's name of the method (``<family>.methods``), also its file and wildcard
        name.
    name : str
        Its name in tables and figures (the records' ``method`` column of the families
        that store names).
    build : callable
        How to build its estimator (its search included) from its grid and the family's
        config; the family's module documents the arguments, the same for every method
        of the family.
    grid : tuple of str
        The config keys of its own grid in the family's block: what a fit of it reads
        beyond the keys every method of the family reads (a job's params hold these only).
    defaults : mapping
        The grid's values where the config gives none.
    chosen : callable or None
        ``chosen(fitted) -> dict``: what its search chose, JSON-ready, for the records.
    size : SizePolicy
        How it meets a large training set.
    binary_only : bool
        Two classes only: not planned on a set of more classes.
    requires : callable or None
        ``requires() -> str | None``: why it cannot run here (a missing optional package),
        None when it can.
    probability : str
        ``"own"``: its ``predict_proba`` is scored; ``"platt"``: Platt scaling of its
        decision values gives the scored probabilities.
    refit : callable or None
        ``refit(params, ...) -> estimator``: the estimator at the chosen hyper-parameters,
        for the families that search once and refit (IDA, multi-class).
    variant : str or None
        The family's config key of the method's variant block (LSPC-new's ``lspc_new``:
        basis, class weights), read by its fits only.
    low_rank : bool
        Whether the family's ``n_basis`` (LSPC's low-rank path) applies to it.
    options : mapping
        Further fixed settings its family reads (e.g. LSPC's ``rounding``).
    reference : str or None
        Its column in the family's reference table of the paper's numbers, which the
        reports show beside ours; None where the paper has none.
    """

    key: str
    name: str
    build: Callable
    grid: tuple = ()
    defaults: Mapping = field(default_factory=dict)
    chosen: Callable | None = None
    size: SizePolicy = EXACT
    binary_only: bool = False
    requires: Callable | None = None
    probability: str = "own"
    refit: Callable | None = None
    variant: str | None = None
    low_rank: bool = False
    options: Mapping = field(default_factory=dict)
    reference: str | None = None

    def variant_of(self, block):
        """Its variant's parameters in the family's config ``block`` (``{}`` for a method
        without one, or when the block sets none)."""
        return variant_params(self.variant, block)

    def unavailable(self, n_classes=2):
        """Why it does not run on a set of ``n_classes`` classes here, or None."""
        if self.binary_only and n_classes != 2:
            return f"{self.name} is binary only"
        return self.requires() if self.requires is not None else None


def gpy_missing():
    """Why the GPy peers cannot run here, or None (``requires`` of the GPy methods;
    :func:`kclf_workflow.estimators.gpy_missing`, imported only when a job asks)."""
    from ..estimators import gpy_missing as why

    return why()


def variant_params(variant, block):
    """The parameters of the variant block ``variant`` in a family's config ``block``
    (``{}`` when ``variant`` is None or the block sets none)."""
    if variant is None:
        return {}
    return dict((block or {}).get(variant) or {})


def register(family, *specs):
    """Add ``specs`` to ``family``, after its methods so far (table order); a key or a
    name already taken in the family is an error."""
    table = REGISTRY.setdefault(family, {})
    for spec in specs:
        names = {s.name for s in table.values()}
        if spec.key in table or spec.name in names:
            raise ValueError(f"{family}: a method {spec.key!r} / {spec.name!r} is registered")
        table[spec.key] = spec
    return specs[-1] if specs else None


def specs(family):
    """``{key: spec}`` of ``family``, in table order."""
    if family not in REGISTRY:
        raise ValueError(f"unknown experiment family {family!r}; expected one of {list(REGISTRY)}")
    return REGISTRY[family]


def spec(family, key):
    """The spec of method ``key`` of ``family``; a ValueError naming the choices."""
    table = specs(family)
    if key not in table:
        raise ValueError(f"unknown method {key!r} of {family}; expected one of {list(table)}")
    return table[key]


def family_methods(family):
    """``{key: name}`` of ``family``, in table order."""
    return {key: s.name for key, s in specs(family).items()}


def check_method(family, key):
    """``key`` when ``family`` runs it; else a ValueError naming the choices."""
    return spec(family, key).key


def slugs_by_name(family):
    """``{name: key}`` of ``family``."""
    return {s.name: key for key, s in specs(family).items()}


def wildcard(family, by="slug"):
    """Regex of a method wildcard: the family's keys (or names) joined by ``|``."""
    table = family_methods(family)
    return "|".join(table if by == "slug" else table.values())
