"""Per-shard manifests of raw input files (images, audio clips).

A manifest is a tab-separated file with one row per item: ``id``, ``path``, ``size``
(bytes), ``mtime_ns`` and ``sha256`` of the file's content.  The workflow writes one
manifest per shard of a large collection; the feature job of the shard reads its file
list from it.  The manifest rule's inputs are the shard's files and its params their
``(path, size, mtime_ns)``, so a changed, added or removed file rewrites only its own
shard's manifest, and only that shard's features are recomputed (then what follows).
The content hash records which bytes a result was computed from; hashing costs a few
per cent of the feature extraction (``benchmarks/bench_manifest_hash.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

from .files import atomic_write, file_sha256
from .readers import damaged, read_text

COLUMNS = ("id", "path", "size", "mtime_ns", "sha256")


def manifest_rows(ids, paths, extra=None):
    """Rows of :data:`COLUMNS` (plus the ``extra`` columns, one dict per item) for the
    files ``paths`` of the items ``ids``; a missing file raises ``FileNotFoundError``."""
    ids, paths = [str(i) for i in ids], [str(p) for p in paths]
    if len(ids) != len(paths):
        raise ValueError(f"ids and paths differ in length: {len(ids)} != {len(paths)}")
    rows = []
    for k, (item, path) in enumerate(zip(ids, paths)):
        if "\t" in item or "\t" in path or "\n" in item or "\n" in path:
            raise ValueError(f"manifest fields cannot hold tabs or newlines: {item!r} {path!r}")
        st = os.stat(path)
        row = {
            "id": item,
            "path": path,
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
            "sha256": file_sha256(path),
        }
        row.update((extra or [{}] * len(ids))[k])
        rows.append(row)
    return rows


def write_manifest(path, rows):
    """Write manifest rows (from :func:`manifest_rows`) atomically; returns ``path``."""
    columns = list(COLUMNS) + [c for c in (rows[0] if rows else {}) if c not in COLUMNS]
    text = "\t".join(columns) + "\n"
    text += "".join("\t".join(str(r[c]) for c in columns) + "\n" for r in rows)
    return atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def read_manifest(path):
    """The rows of a manifest as a list of dicts (``size`` and ``mtime_ns`` as int); a
    damaged one is one clear line (:func:`kclf_workflow.readers.damaged`)."""
    lines = read_text(path, "manifest").splitlines()
    if not lines or lines[0].split("\t")[:2] != ["id", "path"]:
        raise damaged(path, "not a manifest (header must start with id, path)")
    header = lines[0].split("\t")
    rows = []
    for lineno, line in enumerate(lines[1:], 2):
        fields = line.split("\t")
        if len(fields) != len(header):
            raise damaged(path, f"line {lineno}: expected {len(header)} fields, got {len(fields)}")
        row = dict(zip(header, fields))
        for key in ("size", "mtime_ns"):
            if key in row:
                if not row[key].isdigit():
                    raise damaged(path, f"line {lineno}: {key} {row[key]!r} is not a number")
                row[key] = int(row[key])
        rows.append(row)
    return rows
