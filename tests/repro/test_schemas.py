"""Config schemas read with their shared definitions inlined (kclf_workflow.schemas)."""

from pathlib import Path

import jsonschema
import pytest
import yaml

from kclf_workflow.schemas import load_schema, read_yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "workflow" / "schemas"


def _write(path, doc):
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_reference_is_replaced_by_its_definition_and_keys_beside_it_win(tmp_path):
    _write(
        tmp_path / "defs.yaml",
        {
            "$defs": {
                "v": {
                    "type": "object",
                    "description": "shared",
                    "properties": {"k": {"$ref": "#/$defs/k"}},
                },
                "k": {"enum": [1, 2]},
            }
        },
    )
    schema = _write(
        tmp_path / "a.schema.yaml",
        {"properties": {"v": {"$ref": "defs.yaml#/$defs/v", "default": {}, "description": "own"}}},
    )
    got = load_schema(schema)["properties"]["v"]
    assert got == {
        "type": "object",
        "description": "own",
        "default": {},
        "properties": {"k": {"enum": [1, 2]}},  # a local reference of the definitions file
    }


@pytest.mark.parametrize(
    "ref, words", [("nope.yaml#/$defs/v", "no file"), ("defs.yaml#/$defs/w", "'w' not found")]
)
def test_a_broken_reference_names_the_schema_and_the_reference(tmp_path, ref, words):
    _write(tmp_path / "defs.yaml", {"$defs": {"v": {"type": "integer"}}})
    schema = _write(tmp_path / "a.schema.yaml", {"properties": {"v": {"$ref": ref}}})
    with pytest.raises((FileNotFoundError, KeyError), match=words) as err:
        load_schema(schema)
    assert "a.schema.yaml" in str(err.value) and ref in str(err.value)


@pytest.mark.parametrize("family", ["audio", "ida", "lspc_toy", "multiclass", "scene", "voc"])
def test_every_lspc_new_block_checks_the_shared_definition(family):
    # the six families' lspc_new blocks are one definition: each rejects a key or value
    # the definition does not allow, and takes the definition's keys
    schema = load_schema(SCHEMAS / f"{family}.schema.yaml")
    props = schema["properties"]
    block = (props["experiment"]["properties"] if "experiment" in props else props)["lspc_new"]
    assert set(block["properties"]) == {"basis", "class_weight"}
    assert block["default"] == {}
    check = jsonschema.Draft202012Validator(block)
    assert check.is_valid({"basis": "classwise", "class_weight": "balanced"})
    assert not check.is_valid({"basis": "diagonal"})
    assert not check.is_valid({"basiss": "full"})


def test_read_yaml_gives_a_copy_and_reads_a_changed_file_again(tmp_path):
    path = _write(tmp_path / "doc.yaml", {"a": [1, 2]})
    first = read_yaml(path)
    first["a"].append(3)
    assert read_yaml(path) == {"a": [1, 2]}
    _write(path, {"a": [4]})
    assert read_yaml(path) == {"a": [4]}


def test_every_yaml_file_of_the_workflow_reads_as_with_the_pure_python_parser():
    files = [ROOT / "config.yaml", *sorted((ROOT / "workflow").rglob("*.yaml"))]
    assert len(files) > 20
    for path in files:
        assert read_yaml(path) == yaml.safe_load(path.read_text()), path
