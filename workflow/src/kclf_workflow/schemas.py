"""The workflow's config schemas (``workflow/schemas/*.schema.yaml``), read with their
references to shared definitions inlined.

A schema may refer to a definition of another file beside it,
``$ref: definitions.yaml#/$defs/lspc_new``; Snakemake's ``validate`` resolves that
itself, and :func:`load_schema` gives the same schema as one document for the readers
that walk it (the one-line config errors of ``common.smk``, the docs' config reference).
Keys written beside a ``$ref`` (a ``default``, a ``description``) win over the
definition's.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import yaml

#: libyaml's parser where PyYAML was built with it (its wheels are), the same documents
#: as the pure-Python ``SafeLoader`` about ten times faster: the workflow reads its schemas
#: at every start, a dry run's or a cluster job's
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path):
    """The YAML document in ``path`` (safe loading); a text is parsed once per process
    (several readers walk the same schemas), each caller gets a copy it may change."""
    return copy.deepcopy(_parsed(Path(path).read_text()))


@functools.lru_cache(maxsize=64)
def _parsed(text):
    return yaml.load(text, Loader=_LOADER)


def load_schema(path):
    """The schema in ``path`` with every ``$ref`` replaced by what it refers to."""
    path = Path(path)
    return _inline(read_yaml(path), path, {})


def _inline(node, path, documents):
    if isinstance(node, list):
        return [_inline(v, path, documents) for v in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    ref = node.pop("$ref", None)
    node = {k: _inline(v, path, documents) for k, v in node.items()}
    if ref is None:
        return node
    name, _, pointer = ref.partition("#")
    target_path = (path.parent / name).resolve() if name else path.resolve()
    if target_path not in documents:
        if not target_path.is_file():
            raise FileNotFoundError(f"{path}: $ref {ref!r}: no file {target_path}")
        documents[target_path] = read_yaml(target_path)
    target = documents[target_path]
    for part in filter(None, pointer.split("/")):
        if not isinstance(target, dict) or part not in target:
            raise KeyError(f"{path}: $ref {ref!r}: {part!r} not found in {target_path.name}")
        target = target[part]
    return {**_inline(target, target_path, documents), **node}
