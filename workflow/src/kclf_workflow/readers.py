"""Reading back the files the workflow wrote, with one clear line when one is damaged.

Every output is written atomically (:func:`kclf_workflow.records.atomic_write`), so a file
the workflow reads back is whole unless something outside it cut or changed it: a disk
that filled during a copy, a transfer between machines interrupted, an edit by hand.
Such a file gives a ``ValueError`` of one line (:func:`damaged`) naming the file, saying
what is wrong with it and that deleting it recomputes it (Snakemake reruns the job of a
missing output), instead of a bare traceback from the parser that names no file.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path

import numpy as np

#: what reading a damaged file raises (a missing file is not damaged: it stays a
#: ``FileNotFoundError``)
READ_ERRORS = (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)


def damaged(path, problem):
    """The ``ValueError`` of a damaged file: ``"<path>: <problem>; delete it ..."``."""
    problem = " ".join(str(problem).split())  # one line
    return ValueError(f"{path}: {problem}; delete it and run again to recompute it")


def _reason(exc):
    if isinstance(exc, KeyError):
        return f"it has no entry {exc.args[0]!r}" if exc.args else "an entry is missing"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


@contextmanager
def reading(path, what):
    """Turn a failure to read ``path`` inside the block into :func:`damaged`'s one line
    (``what`` the file is: "data archive", "records file", ...).  The block should hold
    the reading alone: any ``ValueError`` or ``KeyError`` raised in it is blamed on the
    file."""
    try:
        yield
    except FileNotFoundError:
        raise
    except READ_ERRORS as exc:
        raise damaged(path, f"not a readable {what} ({_reason(exc)})") from None


def load_npz(path, what="data archive"):
    """Every array of the ``.npz`` archive ``path`` (object arrays refused) as a dict."""
    with reading(path, what), np.load(path, allow_pickle=False) as f:
        return {name: f[name] for name in f.files}


def load_json(path, what="JSON file"):
    """The JSON document of ``path``."""
    with reading(path, what):
        return json.loads(Path(path).read_text(encoding="utf-8"))


def read_text(path, what="text file"):
    """The text of ``path``, which the workflow ends with a newline when it is not empty:
    a file whose last line has no end was cut short."""
    with reading(path, what):
        text = Path(path).read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        raise damaged(path, f"this {what} is cut short (its last line has no end)")
    return text
