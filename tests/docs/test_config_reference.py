"""The config reference lists every key of every schema, and only those.

docs/_ext/kclf_config_reference.py writes the pages (one per block) from
workflow/schemas/*.schema.yaml; this test walks the schemas on its own and compares the
dotted keys with the keys the generated pages list (their ``confval`` entries), and with
the built HTML when ``make docs`` has run.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "workflow" / "schemas"
HTML = ROOT / "docs" / "_build" / "html" / "config"


def _extension():
    path = ROOT / "docs" / "_ext" / "kclf_config_reference.py"
    spec = importlib.util.spec_from_file_location("kclf_config_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def schema_keys():
    """Dotted paths of every property of every schema (``<name>`` for a key you name)."""
    keys = set()

    def walk(node, prefix):
        if not isinstance(node, dict):
            return
        if "$ref" in node:  # a shared definition: definitions.yaml#/$defs/<name>
            name, _, pointer = node["$ref"].partition("#")
            target = yaml.safe_load((SCHEMAS / name).read_text())
            for part in filter(None, pointer.split("/")):
                target = target[part]
            walk(target, prefix)
        for name, sub in (node.get("properties") or {}).items():
            path = f"{prefix}.{name}" if prefix else name
            keys.add(path)
            walk(sub, path)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and (
            "properties" in extra
            or "additionalProperties" in extra
            or extra.get("type") == "object"
        ):
            path = f"{prefix}.<name>" if prefix else "<name>"
            keys.add(path)
            walk(extra, path)
        for combinator in ("allOf", "anyOf", "oneOf"):
            for sub in node.get(combinator) or []:
                walk(sub, prefix)
        for conditional in ("if", "then", "else"):
            walk(node.get(conditional), prefix)

    for path in SCHEMAS.glob("*.schema.yaml"):
        block = path.name[: -len(".schema.yaml")]
        prefix = "" if block == "config" else block
        if prefix:
            keys.add(prefix)
        walk(yaml.safe_load(path.read_text()), prefix)
    return keys


def test_every_schema_key_is_listed_once(tmp_path):
    ext = _extension()
    ext.generate(tmp_path, SCHEMAS)
    expected = schema_keys()
    listed = ext.listed_keys(tmp_path)
    assert len(expected) > 200
    assert listed == expected, {
        "missing from the pages": sorted(expected - listed),
        "not in the schemas": sorted(listed - expected),
    }
    # one page per block, each key on exactly one page
    pages = {p.stem for p in tmp_path.glob("*.rst")}
    assert pages == {p.name[: -len(".schema.yaml")] for p in SCHEMAS.glob("*.schema.yaml")} | {
        "index"
    }
    counts = {}
    for page in tmp_path.glob("*.rst"):
        for key in re.findall(r"^\.\. confval:: (\S+)$", page.read_text(), re.M):
            counts[key] = counts.get(key, 0) + 1
    assert {k for k, n in counts.items() if n > 1} == set()


def test_pages_show_type_default_and_allowed_values(tmp_path):
    ext = _extension()
    ext.generate(tmp_path, SCHEMAS)
    voc = (tmp_path / "voc.rst").read_text()
    entry = voc.split(".. confval:: voc.features.detector")[1].split(".. confval::")[0]
    assert ':default: ``"surf"``' in entry
    assert '``"surf"``, ``"opencv-surf"``, ``"sift"``' in entry
    assert "mahotas SURF" in entry
    top = (tmp_path / "config.rst").read_text()
    assert ".. confval:: seed" in top and ":required: yes" in top


@pytest.mark.docs
@pytest.mark.skipif(
    not (HTML / "index.html").exists(),
    reason="docs/_build/html not built (make docs)",
)
def test_built_pages_hold_every_key():
    ids = set()
    for page in HTML.glob("*.html"):
        ids |= set(re.findall(r'<dt class="sig sig-object std" id="([^"]+)"', page.read_text()))
    assert len(ids) == len(schema_keys())
