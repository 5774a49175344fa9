"""MULAN multilabel data sets in ARFF form (the "scene" set of the CorrLog paper).

MULAN stores a multilabel set as one ARFF file whose label attributes are nominal
``{0,1}`` attributes; for the sets used here they are the *last* ``n_labels``
attributes (MULAN's XML file only repeats their names).  ``scene`` (Boutell et al.,
2004) has 294 numeric colour/texture features and 6 labels, split by MULAN into
1211 training and 1196 test photographs.

The public original is the RAR archive :data:`SCENE_URL` on the MULAN project site.
RAR cannot be read by the standard library; :func:`fetch_scene` extracts it with
``libarchive-c`` (``pip install libarchive-c``; it wraps the system libarchive, which
reads RAR) when importable, else with a ``bsdtar``, ``unar``, ``unrar`` or ``7z``
executable on ``PATH``.  Whatever the route, the extracted ARFF files are verified
against :data:`SCENE_SHA256` before use, so a changed archive is an error.  Users
who extracted the archive themselves pass that folder to :func:`load_scene`.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
from scipy.io import arff

from ..files import file_sha256

SCENE_URL = "https://sourceforge.net/projects/mulan/files/datasets/scene.rar/download"
SCENE_FILES = ("scene-train.arff", "scene-test.arff")
#: the file name of MULAN's scene archive (SCENE_URL) in a cache or mirror
SCENE_ARCHIVE = "scene.rar"
SCENE_SHA256 = {
    "scene-train.arff": "b0557a75da7e4b93c83ab686adc6aae9c674cba7466f2cddd7b9594153b99a06",
    "scene-test.arff": "77d0f5ca0a48c1d787574f497a1619c405cf58c41436647960515e989faca418",
}
#: Names of the ARFF attributes ``Class1`` .. ``Class6`` of scene (Boutell et al., 2004).
SCENE_LABELS = ("Beach", "Sunset", "FallFoliage", "Field", "Mountain", "Urban")


def _is_sparse_arff(path):
    """True when the first data row of an ARFF file is in sparse ``{index value, ...}`` form."""
    with open(path, encoding="utf-8", errors="replace") as f:
        in_data = False
        for line in f:
            line = line.strip()
            if not line or line.startswith("%"):
                continue
            if in_data:
                return line.startswith("{")
            in_data = line.lower().startswith("@data")
    return False


def _read_sparse_arff(path):
    """Attribute names and kinds, and the dense (n, p) float matrix of a sparse ARFF file
    (``{index value, ...}`` rows, omitted entries 0; nominal values read as numbers)."""
    names, kinds, rows = [], [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        in_data = False
        for k, raw in enumerate(f, start=1):
            line = raw.strip()
            if not line or line.startswith("%"):
                continue
            if not in_data:
                low = line.lower()
                if low.startswith("@attribute"):
                    body = line[len("@attribute") :].strip()
                    if body.startswith(("'", '"')):
                        end = body.index(body[0], 1)
                        name, kind = body[1:end], body[end + 1 :].strip()
                    else:
                        name, _, kind = body.partition(" ")
                    names.append(name)
                    kinds.append(kind.strip())
                in_data = low.startswith("@data")
                continue
            if not (line.startswith("{") and line.endswith("}")):
                raise ValueError(f"{path.name}:{k}: expected a sparse row {{index value, ...}}")
            row = {}
            for item in filter(None, (t.strip() for t in line[1:-1].split(","))):
                index, _, value = item.partition(" ")
                try:
                    row[int(index)] = float(value)
                except ValueError:
                    raise ValueError(f"{path.name}:{k}: bad sparse entry {item!r}") from None
            if row and max(row) >= len(names):
                raise ValueError(f"{path.name}:{k}: attribute index {max(row)} out of range")
            rows.append(row)
    data = np.zeros((len(rows), len(names)))
    for i, row in enumerate(rows):
        data[i, list(row)] = list(row.values())
    return names, kinds, data


def _label_columns(path, names, n_labels, labels):
    """Indices of the label attributes: the last ``n_labels``, or those named ``labels``
    (anywhere, in the given order); the rest are the features."""
    if labels is not None:
        labels = list(labels)
        for name in labels:
            if name not in names:
                raise ValueError(
                    f"{path.name}: labels: no attribute {name!r} among its {len(names)} attributes"
                )
        if not 1 <= len(set(labels)) == len(labels) < len(names):
            raise ValueError(
                f"{path.name}: labels: need 1 to {len(names) - 1} distinct attribute names, "
                f"got {labels!r}"
            )
        return [names.index(name) for name in labels]
    if not isinstance(n_labels, (int, np.integer)) or not 1 <= n_labels < len(names):
        raise ValueError(
            f"n_labels must be an integer in [1, {len(names) - 1}] for {path.name} "
            f"(it has {len(names)} attributes), got {n_labels!r}"
        )
    return list(range(len(names) - n_labels, len(names)))


def _load_sparse(path, n_labels, labels=None):
    names, kinds, data = _read_sparse_arff(path)
    lab = _label_columns(path, names, n_labels, labels)
    feat = sorted(set(range(len(names))) - set(lab))
    for j in lab:
        if kinds[j].replace(" ", "") not in ("{0,1}", "{1,0}"):
            raise ValueError(
                f"{path.name}: label attribute {names[j]!r} is not nominal {{0,1}} "
                f"(is {_which(n_labels, labels)} right?)"
            )
    Y = data[:, lab]
    if not np.all((Y == 0) | (Y == 1)):
        raise ValueError(f"{path.name}: label values other than 0/1")
    return data[:, feat], Y.astype(int), [names[j] for j in feat], [names[j] for j in lab]


def _which(n_labels, labels):
    return f"n_labels={n_labels}" if labels is None else "labels"


def load_arff_multilabel(path, n_labels=None, *, labels=None):
    """Read a MULAN ARFF file whose last ``n_labels`` attributes (or the attributes named
    ``labels``) are the labels.

    Dense files are read by :func:`scipy.io.arff.loadarff`; sparse ones (``{index value,
    ...}`` rows, as ``medical``) by a small reader here, since scipy has none.

    Parameters
    ----------
    path : str or path-like
        The ``.arff`` file.
    n_labels : int
        Number of label attributes at the end of the attribute list.
    labels : list of str, optional
        Instead of ``n_labels``: the names of the label attributes, wherever they are (MEKA
        files put them first); ``Y``'s columns follow this order.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float
    Y : ndarray of shape (n_samples, n_labels), int with values 0/1
    feature_names : list of str
    label_names : list of str
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path: no ARFF file at {path}")
    if _is_sparse_arff(path):
        return _load_sparse(path, n_labels, labels)
    try:
        data, meta = arff.loadarff(path)
    except (arff.ArffError, ValueError, NotImplementedError) as exc:
        raise ValueError(
            f"path: {path} is not a dense ARFF file readable by scipy.io.arff ({exc})"
        ) from exc
    names = list(meta.names())
    lab = _label_columns(path, names, n_labels, labels)
    label_names = [names[j] for j in lab]
    feature_names = [names[j] for j in sorted(set(range(len(names))) - set(lab))]
    for name in feature_names:
        if meta[name][0] != "numeric":
            raise ValueError(f"{path.name}: feature attribute {name!r} is not numeric")
    X = np.column_stack([np.asarray(data[name], dtype=float) for name in feature_names])
    Y = np.empty((len(data), len(label_names)), dtype=int)
    for j, name in enumerate(label_names):
        kind, values = meta[name]
        if kind != "nominal" or set(values) != {"0", "1"}:
            raise ValueError(
                f"{path.name}: label attribute {name!r} is not nominal {{0,1}} "
                f"(is {_which(n_labels, labels)} right?)"
            )
        col = np.char.decode(np.asarray(data[name]).astype("S"), "ascii")
        if np.any(col == "?"):
            raise ValueError(f"{path.name}: label attribute {name!r} has missing values")
        Y[:, j] = (col == "1").astype(int)
    if np.isnan(X).any():
        i, j = np.argwhere(np.isnan(X))[0]
        raise ValueError(
            f"{path.name}: features have {int(np.isnan(X).sum())} missing values ('?'), the "
            f"first in data row {i + 1}, attribute {feature_names[j]!r}"
        )
    return X, Y, feature_names, label_names


def verify_scene(root):
    """Check both scene ARFF files under ``root`` against :data:`SCENE_SHA256`."""
    root = Path(root)
    for name in SCENE_FILES:
        p = root / name
        if not p.is_file():
            raise FileNotFoundError(f"root: {root} has no {name} (expected {SCENE_FILES})")
        digest = file_sha256(p)
        if digest != SCENE_SHA256[name]:
            raise ValueError(
                f"{p}: SHA-256 {digest} differs from the published {SCENE_SHA256[name]}"
            )
    return root


def load_scene(root, verify=False):
    """Load MULAN scene from a folder holding ``scene-train.arff`` and ``scene-test.arff``.

    Parameters
    ----------
    root : str or path-like
        Folder with the two extracted ARFF files (e.g. ``../shared/data/mulan`` or the
        folder :func:`fetch_scene` returns).
    verify : bool, default=False
        Check the files' SHA-256 first (:func:`verify_scene`).

    Returns
    -------
    dict with ``X_train`` (1211, 294), ``Y_train`` (1211, 6), ``X_test`` (1196, 294),
    ``Y_test`` (1196, 6), ``label_names`` (:data:`SCENE_LABELS`) and ``feature_names``.
    """
    root = Path(root)
    if verify:
        verify_scene(root)
    X_tr, Y_tr, feat, _ = load_arff_multilabel(root / SCENE_FILES[0], len(SCENE_LABELS))
    X_te, Y_te, feat_te, _ = load_arff_multilabel(root / SCENE_FILES[1], len(SCENE_LABELS))
    if feat != feat_te:
        raise ValueError(f"root: {root}: train and test ARFF files have different attributes")
    return {
        "X_train": X_tr,
        "Y_train": Y_tr,
        "X_test": X_te,
        "Y_test": Y_te,
        "label_names": list(SCENE_LABELS),
        "feature_names": feat,
    }


def extract_rar(archive, dest):
    """Extract a RAR archive into ``dest`` (libarchive-c, else a command-line extractor)."""
    archive, dest = Path(archive), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    try:
        import libarchive  # libarchive-c, optional
    except ImportError:
        libarchive = None
    if libarchive is not None and hasattr(libarchive, "file_reader"):
        root = dest.resolve()
        with libarchive.file_reader(str(archive)) as entries:
            for entry in entries:
                target = (root / entry.pathname).resolve()
                if not target.is_relative_to(root):
                    raise ValueError(f"{archive}: entry {entry.pathname!r} escapes {dest}")
                if entry.isdir:
                    target.mkdir(parents=True, exist_ok=True)
                elif entry.isfile:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with open(target, "wb") as f:
                        for block in entry.get_blocks():
                            f.write(block)
        return dest
    commands = {
        "bsdtar": ["bsdtar", "-xf", str(archive), "-C", str(dest)],
        "unar": ["unar", "-f", "-o", str(dest), str(archive)],
        "unrar": ["unrar", "x", "-o+", str(archive), str(dest) + "/"],
        "7z": ["7z", "x", "-y", f"-o{dest}", str(archive)],
    }
    for exe, cmd in commands.items():
        if shutil.which(exe):
            subprocess.run(cmd, check=True, capture_output=True)
            return dest
    raise RuntimeError(
        f"cannot extract {archive}: install libarchive-c (pip) or one of "
        f"{', '.join(commands)}, or extract it by hand and pass the folder to load_scene"
    )


def find_scene_root(folder):
    """The folder under ``folder`` that holds both scene ARFF files."""
    for p in sorted(Path(folder).rglob(SCENE_FILES[0])):
        if (p.parent / SCENE_FILES[1]).is_file():
            return p.parent
    raise FileNotFoundError(f"no {SCENE_FILES} found under {folder}")


def fetch_scene(cache_dir, mirror=None):
    """Folder with the verified scene ARFF files: the local mirror first, else download.

    Parameters
    ----------
    cache_dir : str or path-like
        Where ``scene.rar`` is downloaded (by :mod:`pooch`) and extracted.
    mirror : str or path-like, optional
        A folder that may already hold ``scene-train.arff`` and ``scene-test.arff``
        (e.g. ``../shared/data/mulan``); used, after verification, when present.

    Returns
    -------
    pathlib.Path of a folder holding both files, SHA-256-verified.
    """
    if mirror is not None and all((Path(mirror) / f).is_file() for f in SCENE_FILES):
        return verify_scene(mirror)
    cache_dir = Path(cache_dir)
    try:
        return verify_scene(find_scene_root(cache_dir))
    except FileNotFoundError:
        pass
    import pooch

    # The archive has no published checksum; the extracted files are verified instead.
    archive = pooch.retrieve(SCENE_URL, known_hash=None, fname=SCENE_ARCHIVE, path=cache_dir)
    extract_rar(archive, cache_dir / "scene")
    return verify_scene(find_scene_root(cache_dir / "scene"))
