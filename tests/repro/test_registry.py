"""The registry of methods (kclf_workflow.methods): the schemas' method enums are its
keys, the benchmark's grids and subsample sizes are its specs', and every reader (model
building, plans, rule files, reports) finds each method there."""

from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from kclf_workflow import methods
from kclf_workflow.methods import MethodSpec, SizePolicy, register, spec, specs
from kclf_workflow.schemas import load_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "workflow" / "schemas"

#: family -> (schema file, path to its methods' array, whether the config names them by
#: their table names rather than their keys)
ENUMS = {
    "ida": ("ida", ["methods"], False),
    "multiclass": ("multiclass", ["methods"], False),
    "multilabel": ("multilabel", ["methods"], False),
    "mgpc": ("mgpc", ["methods"], False),
    "lspc_toy": ("lspc_toy", ["methods"], False),
    "benchmark": ("benchmark", ["methods"], True),
    "auc": [
        ("voc", ["experiment", "methods"], True),
        ("scene", ["experiment", "methods"], True),
        ("audio", ["experiment", "methods"], True),
    ],
}


def _property(schema, path):
    node = schema
    for key in path:
        node = node["properties"][key]
    return node


def _enums():
    for family, where in ENUMS.items():
        for file, path, by_name in where if isinstance(where, list) else [where]:
            yield family, file, path, by_name


@pytest.mark.parametrize("family,file,path,by_name", list(_enums()))
def test_every_schema_method_enum_is_the_registry(family, file, path, by_name):
    """Same methods, same order: the config's allowed values are the registry's keys (its
    table names where the config uses those)."""
    items = _property(load_schema(SCHEMAS / f"{file}.schema.yaml"), path)["items"]
    table = specs(family)
    expected = [s.name for s in table.values()] if by_name else list(table)
    assert items["enum"] == expected


def test_every_family_is_in_the_enum_check():
    assert set(ENUMS) == set(methods.REGISTRY) == set(methods.FAMILIES)


def test_the_benchmark_grids_and_subsample_sizes_are_the_specs():
    """``benchmark.grids`` has an entry per method with a grid, its keys and defaults the
    spec's (the schema's default is the one a user reads, the spec's the one Python
    applies); ``benchmark.subsample`` one per method whose size policy reads it."""
    schema = load_schema(SCHEMAS / "benchmark.schema.yaml")
    grids = schema["properties"]["grids"]["properties"]
    table = specs("benchmark")
    assert set(grids) == {name for name, s in table.items() if s.grid}
    for name, entry in grids.items():
        props = entry["properties"]
        assert tuple(props) == table[name].grid, name
        defaults = {k: v.get("default") for k, v in props.items()}
        expected = {
            k: list(v) if isinstance(v, tuple) else v for k, v in table[name].defaults.items()
        }
        assert defaults == expected, name
    subsample = schema["properties"]["subsample"]["properties"]
    assert set(subsample) == {name for name, s in table.items() if s.size.reads_subsample}
    scalable = {s.size.scalable for s in table.values()} - {None}
    assert scalable <= set(schema["properties"])


def test_a_spec_is_found_by_its_key_and_a_wrong_one_names_the_choices():
    s = spec("benchmark", "KLR")
    assert s.size == SizePolicy(scalable="n_components")
    # no library method is subsampled: each has a scalable path on all rows
    for name, key in (("MAPLP", "maplp_n_basis"), ("MAPLP-bias", "maplp_n_basis"),
                      ("MGPC-EP", "n_inducing"), ("LSPC-new", "n_basis")):  # fmt: skip
        assert spec("benchmark", name).size == SizePolicy(scalable=key), name
    assert not s.binary_only and spec("benchmark", "MGPC-EP").binary_only
    with pytest.raises(ValueError, match=r"unknown method 'knn' of ida; expected one of \["):
        spec("ida", "knn")
    with pytest.raises(ValueError, match="unknown experiment family 'nope'"):
        specs("nope")
    assert methods.wildcard("auc") == "lspc_new|lspc|klr|svc"
    assert methods.slugs_by_name("auc")["LSPC-new"] == "lspc_new"


def test_a_key_or_a_name_is_registered_once():
    table = specs("lspc_toy")
    before = dict(table)
    with pytest.raises(ValueError, match="is registered"):
        register("lspc_toy", MethodSpec("lspc", "Another", build=None))
    with pytest.raises(ValueError, match="is registered"):
        register("lspc_toy", MethodSpec("another", "LSPC", build=None))
    assert table == before


def test_unavailable_says_why_a_method_does_not_run():
    binary = MethodSpec("m", "M", build=None, binary_only=True)
    assert binary.unavailable(2) is None
    assert binary.unavailable(3) == "M is binary only"
    missing = MethodSpec("m", "M", build=None, requires=lambda: "no package")
    assert missing.unavailable(2) == "no package"


def test_the_variant_is_read_from_the_block_for_the_method_that_has_one():
    block = {"lspc_new": {"basis": "classwise"}, "lams": [1.0]}
    assert spec("ida", "lspc_new").variant_of(block) == {"basis": "classwise"}
    assert spec("ida", "lspc").variant_of(block) == {}
    assert spec("ida", "lspc_new").variant_of({"lspc_new": None}) == {}


@pytest.mark.parametrize("name", list(specs("benchmark")))
def test_every_benchmark_spec_builds_a_clonable_estimator(name):
    """Each spec's ``build`` gives an estimator scikit-learn can clone with its defaults
    on both paths of the size policy, and the registry's grid defaults are enough."""
    from kclf_workflow.experiments.benchmark import make_model

    cfg = {
        "inner_folds": 2,
        "n_basis": 50,
        "n_components": 40,
        "maplp_n_basis": 30,
        "n_inducing": 20,
        "grids": {},
    }
    s = spec("benchmark", name)
    paths = ["exact"] + ([f"{s.size.scalable}=40"] if s.size.scalable else [])
    for path in paths:
        est = make_model(name, cfg, path, np.random.RandomState(0).randint(2**31))
        clone(est)
