"""The config reference, generated from ``workflow/schemas/*.schema.yaml`` at build time.

One page per top-level block of the config (``config.schema.yaml`` gives the top-level
keys, every other schema one block), written to ``docs/config/`` when the builder starts,
so the pages can never drift from the schemas the workflow validates against.  Every key
is a ``confval`` object (``:confval:`voc.features.n_shards``` links to it) listed by its
dotted path; a key under ``additionalProperties`` (a name you choose, e.g. a data set) is
written ``<name>``.  ``tests/docs/test_config_reference.py`` compares the listed keys with the
schemas'.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kclf_workflow.schemas import load_schema

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "workflow" / "schemas"
OUT = ROOT / "docs" / "config"

TOP = "config"  # config.schema.yaml: the top-level keys
NAME = "<name>"  # the path segment of a key you name (additionalProperties)
COMBINATORS = ("allOf", "anyOf", "oneOf")
CONDITIONALS = ("if", "then", "else")
CONSTRAINTS = [
    ("minimum", "minimum {}"),
    ("exclusiveMinimum", "greater than {}"),
    ("maximum", "maximum {}"),
    ("exclusiveMaximum", "less than {}"),
    ("minItems", "at least {} item(s)"),
    ("maxItems", "at most {} item(s)"),
    ("minLength", "at least {} character(s)"),
    ("maxLength", "at most {} character(s)"),
    ("pattern", "matching ``{}``"),
]


# ---------------------------------------------------------------- reading the schemas


def load_schemas(schema_dir=SCHEMAS):
    """Block name -> schema, ``config`` (the top-level keys) first, then alphabetical."""
    schemas = {}
    for path in sorted(Path(schema_dir).glob("*.schema.yaml")):
        schemas[path.name[: -len(".schema.yaml")]] = load_schema(path)
    return {TOP: schemas.pop(TOP), **schemas} if TOP in schemas else schemas


def _is_object(node):
    return isinstance(node, dict) and (
        "properties" in node
        or isinstance(node.get("additionalProperties"), dict)
        or node.get("type") == "object"
    )


def _branches(node):
    """Sub-schemas that may add keys at the same level (allOf / oneOf / if-then ...)."""
    for key in COMBINATORS:
        for sub in node.get(key, []) or []:
            if isinstance(sub, dict):
                yield sub
                yield from _branches(sub)
    for key in CONDITIONALS:
        sub = node.get(key)
        if isinstance(sub, dict):
            yield sub
            yield from _branches(sub)


def walk(node, prefix):
    """``(dotted path, schema node)`` of every key below ``node``, in schema order.

    A key that appears again in an ``allOf`` / ``oneOf`` / ``if``-``then`` branch (which
    only narrows it) is listed once, with its main definition.
    """
    if not isinstance(node, dict):
        return []
    out, seen = [], set()

    def add(path, sub):
        if path in seen:
            return
        seen.add(path)
        out.append((path, sub))
        for p, s in walk(sub, path):
            if p not in seen:
                seen.add(p)
                out.append((p, s))

    for name, sub in (node.get("properties") or {}).items():
        add(f"{prefix}.{name}" if prefix else name, sub)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict) and _is_object(extra):
        add(f"{prefix}.{NAME}" if prefix else NAME, extra)
    items = node.get("items")
    if isinstance(items, dict) and "properties" in items:
        for p, s in walk(items, f"{prefix}[]"):
            if p not in seen:
                seen.add(p)
                out.append((p, s))
    for branch in _branches(node):
        for name, sub in (branch.get("properties") or {}).items():
            path = f"{prefix}.{name}" if prefix else name
            if path not in seen:
                add(path, sub)
    return out


def block_keys(block, schema):
    """Every dotted key of one block (the top-level keys for ``config``)."""
    prefix = "" if block == TOP else block
    keys = [] if block == TOP else [block]
    return keys + [p for p, _ in walk(schema, prefix)]


# ---------------------------------------------------------------- rendering


def _literal(value):
    text = json.dumps(value, ensure_ascii=False).replace("`", "'")
    return f"``{text}``"


def _escape(text):
    """Schema prose as reStructuredText: `code` kept as literal, markup characters escaped."""
    parts = re.split(r"(`[^`]+`)", " ".join(str(text).split()))
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 2:
            out.append(f"``{part[1:-1]}``")
        else:
            out.append(re.sub(r"([\\*_`|\[\]<>])", r"\\\1", part))
    return "".join(out)


def _types(node):
    kinds = node.get("type")
    if kinds is None:
        if "enum" in node:
            return "one of the allowed values"
        if "const" in node:
            return f"the constant {_literal(node['const'])}"
        if _is_object(node):
            return "mapping"
        if "anyOf" in node or "oneOf" in node:
            subs = node.get("anyOf") or node.get("oneOf")
            return " or ".join(_types(s) for s in subs if isinstance(s, dict))
        return "any"
    kinds = kinds if isinstance(kinds, list) else [kinds]
    names = {"object": "mapping", "array": "list", "number": "number", "null": "null"}
    text = []
    for kind in kinds:
        word = names.get(kind, kind)
        if kind == "array" and isinstance(node.get("items"), dict):
            word = f"list of {_items(node['items'])}"
        text.append(word)
    return " or ".join(text)


def _items(items):
    if "enum" in items:
        return "values from " + ", ".join(_literal(v) for v in items["enum"])
    if "anyOf" in items or "oneOf" in items:
        subs = items.get("anyOf") or items.get("oneOf")
        parts = []
        for sub in subs:
            if "enum" in sub:
                parts.append(", ".join(_literal(v) for v in sub["enum"]))
            elif "pattern" in sub:
                desc = sub.get("description", "a string")
                parts.append(f"{_escape(desc)} (matching ``{sub['pattern']}``)")
            else:
                parts.append(_types(sub))
        return "entries, each one of " + "; or ".join(parts)
    word = _types(items)
    extra = [fmt.format(items[k]) for k, fmt in CONSTRAINTS if k in items]
    return word + (f" ({', '.join(extra)})" if extra else "")


def _fields(node, required):
    lines = [f":type: {_types(node)}"]
    if "default" in node:
        lines.append(f":default: {_literal(node['default'])}")
    elif required:
        lines.append(":default: none: the key is required")
    else:
        lines.append(":default: none (left out: unset)")
    if "enum" in node:
        lines.append(":allowed: " + ", ".join(_literal(v) for v in node["enum"]))
    limits = [fmt.format(node[k]) for k, fmt in CONSTRAINTS if k in node]
    if node.get("uniqueItems"):
        limits.append("no repeated items")
    if isinstance(node.get("items"), dict):
        limits += [
            f"each item {fmt.format(node['items'][k])}"
            for k, fmt in CONSTRAINTS
            if k in node["items"] and "enum" not in node["items"]
        ]
    if limits:
        lines.append(":constraints: " + "; ".join(limits))
    if required:
        lines.append(":required: yes")
    names = node.get("propertyNames")
    if isinstance(names, dict) and "pattern" in names:
        lines.append(
            f":names: {_escape(names.get('description', 'keys'))} (``{names['pattern']}``)"
        )
    if node.get("additionalProperties") is False and "properties" in node:
        lines.append(":other keys: not allowed (an unknown key stops the run)")
    return lines


def _rules(node):
    """The cross-key rules of ``allOf`` / ``if``-``then`` entries, as prose."""
    rules = []
    for sub in node.get("allOf", []) or []:
        desc = sub.get("description") or (sub.get("then") or {}).get("description")
        if desc:
            cond = sub.get("if", {}).get("properties", {})
            when = ""
            if cond:
                (key, test), *_ = cond.items()
                vals = test.get("enum") or [test.get("const")]
                when = f"when ``{key}`` is " + " or ".join(_literal(v) for v in vals) + ": "
            rules.append(when + _escape(desc))
    return rules


def _confval(path, node, required):
    out = [f".. confval:: {path}", ""]
    out += ["   " + line for line in _fields(node, required)]
    out.append("")
    if node.get("description"):
        out += ["   " + _escape(node["description"]), ""]
    rules = _rules(node)
    if rules:
        out += ["   Rules between its keys:", ""]
        out += [f"   * {rule}" for rule in rules]
        out.append("")
    return out


def _heading(text, char):
    return [text, char * len(text), ""]


def _required_of(schema, path, prefix):
    """Whether the key at ``path`` is required by its parent object."""
    parts = (path[len(prefix) + 1 :] if prefix else path).split(".")
    node = schema
    for part in parts[:-1]:
        node = (
            (node.get("additionalProperties") or {})
            if part == NAME
            else ((node.get("properties") or {}).get(part, {}))
        )
    return parts[-1] in (node.get("required") or [])


def render_block(block, schema, blocks):
    """The reStructuredText page of one block."""
    title = "Top-level keys" if block == TOP else f"``{block}``"
    lines = [f".. _config-{block}:", "", *_heading(title, "=")]
    lines += [
        f".. This page is generated from workflow/schemas/{block}.schema.yaml by "
        "docs/_ext/kclf_config_reference.py; edit the schema, not this file.",
        "",
    ]
    if schema.get("title"):
        lines += [_escape(schema["title"]), ""]
    if schema.get("description"):
        lines += [_escape(schema["description"]), ""]
    lines += [
        f"Schema: ``workflow/schemas/{block}.schema.yaml``.  Defaults are the schema's: "
        "a key left out of the config takes its default; ``config.yaml`` and the paper "
        "configs in ``workflow/configs/`` set many of them explicitly.",
        "",
    ]
    if block == TOP:
        lines += _top_level(schema, blocks)
        return "\n".join(lines) + "\n"

    skip = ("$schema", "description", "title")
    lines += _confval(block, {k: v for k, v in schema.items() if k not in skip}, False)
    prefix = block
    entries = walk(schema, prefix)
    sections = [p for p, n in entries if _is_object(n) and p.count(".") == 1]
    top = [(p, n) for p, n in entries if p.count(".") == 1 and p not in sections]
    if top:
        lines += _heading(f"Keys of ``{block}``", "-")
        for path, node in top:
            lines += _confval(path, node, _required_of(schema, path, prefix))
    for section in sections:
        lines += _heading(f"``{section}``", "-")
        for path, node in entries:
            if path == section or path.startswith(section + "."):
                lines += _confval(path, node, _required_of(schema, path, prefix))
    return "\n".join(lines) + "\n"


def _top_level(schema, blocks):
    """The top-level keys; a block with a page of its own is a link to it (its ``confval``
    is there)."""
    lines, links = [], []
    for path, node in walk(schema, ""):
        if path in blocks:
            desc = node.get("description") or blocks[path].get("description", "")
            links.append(f"* :ref:`{path} <config-{path}>`: {_escape(desc)}")
            continue
        lines += _confval(path, node, path in (schema.get("required") or []))
    return lines + _heading("Blocks", "-") + links + [""]


def render_index(blocks):
    lines = [".. _config-reference:", "", *_heading("Config reference", "=")]
    lines += [
        "Every key the workflow's config accepts, generated at build time from the JSON "
        "schemas in ``workflow/schemas/`` (the files the workflow validates ``config.yaml`` "
        "against before any job runs), so these pages list exactly what the schemas do.  "
        "One page per top-level block; each key with its type, default, allowed values, "
        "constraints and description.  A key written ``<name>`` is one you name (a data "
        "set, a download).  How the blocks fit together: :doc:`/user_guide/workflow`.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 20 80",
        "",
        "   * - block",
        "     - what it configures",
    ]
    for block, schema in blocks.items():
        label = "top-level keys" if block == TOP else block
        desc = _escape(schema.get("title") or schema.get("description", ""))
        lines += [f"   * - :ref:`{label} <config-{block}>`", f"     - {desc}"]
    lines += ["", ".. toctree::", "   :hidden:", ""]
    lines += [f"   {block}" for block in blocks]
    return "\n".join(lines) + "\n"


def generate(out_dir=OUT, schema_dir=SCHEMAS):
    """Write the pages; only files whose text changed are rewritten.  Returns the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    blocks = load_schemas(schema_dir)
    pages = {"index": render_index(blocks)}
    for block, schema in blocks.items():
        pages[block] = render_block(block, schema, blocks)
    written = []
    for name, text in pages.items():
        path = out_dir / f"{name}.rst"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    for stale in set(out_dir.glob("*.rst")) - set(written):
        stale.unlink()
    return written


def listed_keys(out_dir=OUT):
    """The keys the generated pages list (their ``confval`` directives)."""
    keys = set()
    for path in Path(out_dir).glob("*.rst"):
        keys |= set(re.findall(r"^\.\. confval:: (\S+)$", path.read_text(), re.M))
    return keys


def _builder_inited(app):
    generate()


def setup(app):
    app.add_object_type(
        "confval",
        "confval",
        objname="configuration key",
        indextemplate="pair: %s; configuration key",
    )
    app.connect("builder-inited", _builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
