"""Files written whole or not at all, and the hash of a file's content.

Every output of the workflow is written through :func:`atomic_write` (a temporary file
beside it, renamed onto it), so a crash or a kill never leaves a half file for the next run
to trust; :func:`atomic_directory` does the same for a folder, :func:`save_npz` for NumPy
archives, and :func:`write_if_changed` leaves a file that already holds the bytes
untouched (its time too, so nothing downstream reruns).  :func:`file_hash` is the one
hash of a file's content (manifests, downloads, the published checksums, cache keys).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import tempfile
from pathlib import Path

import numpy as np


def file_hash(path, algorithm="sha256"):
    """The ``hashlib`` object of the content of the file at ``path``
    (:func:`hashlib.file_digest`): read its ``hexdigest()``, or ``update`` it further."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, algorithm)


def file_sha256(path):
    """SHA-256 (lower-case hex) of the content of the file at ``path``."""
    return file_hash(path).hexdigest()


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def default_file_mode():
    """Mode of a new regular file under the process's umask (0o644 under umask 022)."""
    return 0o666 & ~_umask()


def _temp_beside(path):
    """Create an empty, unique ``.<name>.<random>.tmp`` next to ``path``; return its path.

    ``os.open(..., 0o666)`` lets the umask decide the mode, as for any new file (not the
    0600 of :func:`tempfile.mkstemp`: results on a shared file system stay readable by
    the group when the umask says so)."""
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(f"no free temporary name beside {path}")


def atomic_write(path, write):
    """Call ``write(tmp_path)`` then rename onto ``path``: a crash never leaves a half file.

    The file gets the mode a plain ``open(path, "w")`` would give (``0o666`` less the
    umask), whatever ``write`` does to the temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(path)
    try:
        write(str(tmp))
        os.chmod(tmp, default_file_mode())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def atomic_directory(path, fill):
    """Call ``fill(tmp_dir)`` on an empty folder beside ``path``, then rename it onto
    ``path``: a crash never leaves a half-filled folder (an archive half extracted).

    The folder gets the mode of a plain ``mkdir`` (``0o777`` less the umask); a folder
    already at ``path`` (left by an older run) is replaced."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        fill(tmp)
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp's folder is 0o700
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return path


def save_npz(path, **arrays):
    """:func:`numpy.savez` of ``arrays`` to ``path``, atomically (:func:`atomic_write`).

    The arrays go through an open file handle, closed on return: given a name, ``savez``
    would append ``.npz`` to the temporary file's."""

    def write(tmp):
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)

    return atomic_write(path, write)


def write_if_changed(path, data):
    """Write the bytes (or text, as UTF-8) ``data`` to ``path`` atomically unless the file
    already holds them; returns whether it wrote."""
    path = Path(path)
    data = data.encode("utf-8") if isinstance(data, str) else data
    if path.is_file() and path.read_bytes() == data:
        return False
    atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))
    return True
