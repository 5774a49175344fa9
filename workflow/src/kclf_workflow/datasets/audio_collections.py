"""Tagged audio collections: Freesound-style folders, ESC-50 and UrbanSound8K.

Every loader returns the same table, one row per clip, columns :data:`COLUMNS`:

* ``id`` -- a unique clip id (string);
* ``path`` -- absolute path of the audio file;
* ``duration`` -- seconds;
* ``tags`` -- a tuple of tag strings (several per clip for Freesound; ESC-50 and
  UrbanSound8K give the one category as the tag).

Layouts:

* **Freesound-style** (:func:`load_freesound_folder`): a folder with ``metadata.csv``
  (columns ``id, file, tags, duration``; ``file`` relative to the folder, ``tags``
  separated by spaces or commas, as Freesound's tags are single tokens);
  :mod:`kclf_workflow.datasets.synthetic_audio` writes this layout.
* **ESC-50** (:func:`load_esc50`): ``audio/*.wav`` and ``meta/esc50.csv`` (K. J.
  Piczak, 2015; clips cut from Freesound recordings; GitHub ``karolpiczak/ESC-50``,
  fetched by :func:`fetch_esc50`).
* **Tag folders** (:func:`load_tag_folders`): one subfolder per tag, no metadata.
* **UrbanSound8K** (:func:`load_urbansound8k`): ``metadata/UrbanSound8K.csv`` and
  ``audio/foldN/<slice_file_name>``.  The csv is the authority for labels (the class
  id is also the 2nd field of the file name); a file not found in the fold the csv
  names is looked up in the other ``audio/`` folders.

:func:`select_clips` is the LSPC-new paper's selection (Sec. 4.2): clips carrying any
of the 50 most used tags, 3-60 s long; :func:`tag_matrix` gives the 0/1 label matrix.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from ..readers import damaged, load_json

logger = logging.getLogger(__name__)

COLUMNS = ["id", "path", "duration", "tags"]
LAYOUTS = ("freesound", "esc50", "urbansound8k", "folder")
#: the metadata file of each layout, relative to its root
METADATA_FILES = {
    "freesound": "metadata.csv",
    "esc50": "meta/esc50.csv",
    "urbansound8k": "metadata/UrbanSound8K.csv",
}

#: the file name of the ESC-50 GitHub archive in a cache (its URL: the config's
#: ``audio.download.url``)
ESC50_ARCHIVE = "ESC-50-master.zip"

_TAG_SPLIT = re.compile(r"[\s,]+")


def parse_tags(text):
    """``"dog  bark,street"`` -> ``("dog", "bark", "street")`` (lower-cased, order kept)."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return ()
    seen = []
    for t in _TAG_SPLIT.split(str(text).strip().lower()):
        if t and t not in seen:
            seen.append(t)
    return tuple(seen)


def encode_tags(tags):
    """A clip's tags as one text cell between rules: a JSON list, so a tag keeps its
    spaces, commas and any other character (``("001 - Dog bark",)`` stays one tag)."""
    return json.dumps(list(tags), ensure_ascii=False)


def decode_tags(text):
    """Inverse of :func:`encode_tags` (an empty cell is no tag)."""
    if text is None or (isinstance(text, float) and np.isnan(text)) or not str(text).strip():
        return ()
    return tuple(json.loads(text))


def write_tag_file(path, tags, left_out=None, source=None):
    """The experiment's tags (JSON: ``tags``, the tasks in order; ``left_out``, tag ->
    why it is no task, :func:`degenerate_tags`; ``source``, what the clips are)."""
    doc = {"tags": list(tags), "left_out": dict(left_out or {}), "source": source}
    Path(path).write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", "utf-8")


def read_tag_file(path):
    """The dict :func:`write_tag_file` wrote (a damaged file: one clear line)."""
    doc = load_json(path, "tag file")
    if not isinstance(doc, dict) or not {"tags", "left_out", "source"} <= doc.keys():
        raise damaged(path, "not a tag file (a JSON object of tags, left_out, source)")
    return doc


def degenerate_tags(Y, tags, kind="clip"):
    """Tags that are no task of their own: carried by every ``kind`` (no negative), or
    carried by exactly the same ones as an earlier tag (the same task twice).  Returns
    ``{tag: reason}`` in tag order."""
    Y = np.asarray(Y, dtype=bool)
    out, first = {}, {}
    for k, t in enumerate(tags):
        col = Y[:, k]
        if col.all():
            out[t] = f"carried by every {kind}"
            continue
        key = col.tobytes()
        if key in first:
            out[t] = f"the same {kind}s as {first[key]!r}"
        else:
            first[key] = t
    return out


def _durations(paths):
    import soundfile as sf

    out = []
    for p in paths:
        try:
            out.append(float(sf.info(str(p)).duration))
        except Exception:  # undecodable header: leave it to the feature step to report
            out.append(float("nan"))
    return out


def _check_files(df, root, missing, dropped=None):
    exists = np.array([Path(p).is_file() for p in df["path"]], dtype=bool)
    if exists.all():
        return df
    gone = df.loc[~exists, "path"].tolist()
    if missing == "error":
        raise FileNotFoundError(
            f"{len(gone)} audio files listed in the metadata of {root} are missing, e.g. "
            f"{gone[:3]} (audio.missing_files: drop leaves them out)"
        )
    if dropped is not None:
        dropped.extend(gone)
    return df.loc[exists].reset_index(drop=True)


def _check_missing(missing):
    if missing not in ("error", "drop"):
        raise ValueError(f"missing must be 'error' or 'drop', got {missing!r}")


def _require(df, columns, source):
    absent = [c for c in columns if c not in df.columns]
    if absent:
        raise ValueError(f"{source}: missing columns {absent} (has {list(df.columns)})")


def _finish(df):
    df = df[COLUMNS].copy()
    df["id"] = df["id"].astype(str)
    if df["id"].duplicated().any():
        dup = df.loc[df["id"].duplicated(), "id"].tolist()[:3]
        raise ValueError(f"clip ids must be unique, duplicated: {dup}")
    df["duration"] = df["duration"].astype(float)
    return df.reset_index(drop=True)


def load_freesound_folder(root, metadata="metadata.csv", missing="error", dropped=None):
    """A Freesound-style folder: ``root/metadata.csv`` (id, file, tags, duration) + files.

    A missing or empty ``duration`` is read from the file header.  ``missing="drop"``
    leaves out rows whose file is absent instead of raising ``FileNotFoundError``.
    """
    _check_missing(missing)
    root = Path(root).resolve()
    meta_path = root / metadata
    if not meta_path.is_file():
        raise FileNotFoundError(f"metadata file not found: {meta_path}")
    meta = pd.read_csv(meta_path, dtype={"id": str, "file": str, "tags": str})
    _require(meta, ["id", "file", "tags"], meta_path)
    df = pd.DataFrame(
        {
            "id": meta["id"],
            "path": [str(root / f) for f in meta["file"]],
            "duration": meta["duration"] if "duration" in meta else np.nan,
            "tags": [parse_tags(t) for t in meta["tags"]],
        }
    )
    df = _check_files(df, root, missing, dropped)
    need = df["duration"].isna().to_numpy()
    if need.any():
        df.loc[need, "duration"] = _durations(df.loc[need, "path"])
    return _finish(df)


def load_esc50(root, missing="error", dropped=None):
    """The ESC-50 layout: ``root/meta/esc50.csv`` and ``root/audio/<filename>``.

    Tags: the clip's ``category`` (one of 50).  Durations are read from the headers
    (5 s for every ESC-50 clip).
    """
    _check_missing(missing)
    root = Path(root).resolve()
    meta_path = root / "meta" / "esc50.csv"
    if not meta_path.is_file():
        raise FileNotFoundError(f"ESC-50 metadata not found: {meta_path}")
    meta = pd.read_csv(meta_path, dtype={"filename": str, "category": str})
    _require(meta, ["filename", "category"], meta_path)
    df = pd.DataFrame(
        {
            "id": [Path(f).stem for f in meta["filename"]],
            "path": [str(root / "audio" / f) for f in meta["filename"]],
            "duration": np.nan,
            "tags": [(c.strip().lower(),) for c in meta["category"]],
        }
    )
    df = _check_files(df, root, missing, dropped)
    df["duration"] = _durations(df["path"])
    return _finish(df)


def load_urbansound8k(root, missing="error", dropped=None):
    """The UrbanSound8K layout: ``root/metadata/UrbanSound8K.csv`` + ``root/audio/foldN/``.

    Labels come from the csv (``class``), never from folder names.  ``duration`` is the
    csv's ``end - start``.
    """
    _check_missing(missing)
    root = Path(root).resolve()
    meta_path = root / "metadata" / "UrbanSound8K.csv"
    if not meta_path.is_file():
        raise FileNotFoundError(f"UrbanSound8K metadata not found: {meta_path}")
    meta = pd.read_csv(meta_path, dtype={"slice_file_name": str, "class": str})
    _require(meta, ["slice_file_name", "fold", "start", "end", "class"], meta_path)
    elsewhere = {p.name: p for p in sorted((root / "audio").glob("*/*")) if p.is_file()}
    paths = []
    for name, fold in zip(meta["slice_file_name"], meta["fold"]):
        p = root / "audio" / f"fold{int(fold)}" / name
        paths.append(str(p if p.is_file() else elsewhere.get(name, p)))
    df = pd.DataFrame(
        {
            "id": [Path(n).stem for n in meta["slice_file_name"]],
            "path": paths,
            "duration": (meta["end"] - meta["start"]).astype(float),
            "tags": [(c.strip().lower(),) for c in meta["class"]],
        }
    )
    df = _check_files(df, root, missing, dropped)
    return _finish(df)


def load_tag_folders(root, missing="error", dropped=None):
    """One subfolder per tag (any names), its audio files the tag's clips
    (:func:`kclf_workflow.datasets.user_data.list_class_folders`): id ``<tag>/<file name>``,
    the tag the folder's name as it is, durations read from the headers.  An empty tag
    folder is an error; there is no metadata, so nothing can be listed and missing."""
    from .user_data import AUDIO_EXTENSIONS, list_class_folders

    _check_missing(missing)
    paths, y, tags = list_class_folders(Path(root).resolve(), AUDIO_EXTENSIONS)
    df = pd.DataFrame(
        {
            "id": [f"{tags[k]}/{p.name}" for p, k in zip(paths, y)],
            "path": [str(p) for p in paths],
            "duration": _durations(paths),
            "tags": [(tags[k],) for k in y],
        }
    )
    return _finish(df)


def load_collection(layout, root, **kwargs):
    """Dispatch on ``layout`` in :data:`LAYOUTS`.  With ``missing="drop"``, a list passed
    as ``dropped`` receives the paths of the listed files that are absent."""
    loaders = {
        "freesound": load_freesound_folder,
        "esc50": load_esc50,
        "urbansound8k": load_urbansound8k,
        "folder": load_tag_folders,
    }
    if layout not in loaders:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return loaders[layout](root, **kwargs)


def top_tags(df, n_top_tags=50):
    """The ``n_top_tags`` most used tags (ties broken alphabetically, so the order is stable)."""
    counts = Counter(t for tags in df["tags"] for t in tags)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [t for t, _ in ranked[: int(n_top_tags)]]


def select_clips(df, n_top_tags=50, min_seconds=3.0, max_seconds=60.0):
    """The paper's selection: clips with any of the ``n_top_tags`` most used tags and
    ``min_seconds <= duration <= max_seconds`` (``None`` disables a bound).  A clip of
    unknown duration (NaN: its header is unreadable) is kept, so that the feature step
    decodes it and reports it (stops, or skips and lists it) instead of it vanishing here.

    Tags are counted over the whole collection; each kept clip's ``tags`` is reduced to
    the selected tags.  Returns ``(clips, tags)``.
    """
    if int(n_top_tags) < 1:
        raise ValueError(f"n_top_tags must be >= 1, got {n_top_tags}")
    if min_seconds is not None and max_seconds is not None and min_seconds > max_seconds:
        raise ValueError(f"min_seconds={min_seconds} exceeds max_seconds={max_seconds}")
    tags = top_tags(df, n_top_tags)
    keep_tags = set(tags)
    reduced = [tuple(t for t in ts if t in keep_tags) for ts in df["tags"]]
    ok = np.array([len(r) > 0 for r in reduced], dtype=bool)
    dur = df["duration"].to_numpy(dtype=float)
    unknown = np.isnan(dur)
    if min_seconds is not None:
        ok &= unknown | (dur >= min_seconds)
    if max_seconds is not None:
        ok &= unknown | (dur <= max_seconds)
    out = df.copy()
    out["tags"] = reduced
    out = out.loc[ok].reset_index(drop=True)
    # a tag may lose all its clips to the duration bounds: keep only tags still present
    present = {t for ts in out["tags"] for t in ts}
    return out, [t for t in tags if t in present]


def experiment_clips(layout, root, missing, selection):
    """The clip list of the audio experiment (rule audio_clips): the collection's
    metadata loaded, the paper's selection (``n_top_tags``, ``min_seconds``,
    ``max_seconds`` of ``selection``) applied.

    Returns ``(clips, tags, dropped, left_out)``: a table (id, path, duration, tags as a
    JSON list per clip, :func:`encode_tags`), the selected tags that are tasks, the
    listed paths missing on disk (``missing="drop"``; each logged as a warning) and the
    selected tags that are no task of their own (:func:`degenerate_tags`, each logged as
    a warning).  Fewer than 4 selected clips raise ``ValueError`` naming ``root``.
    """
    dropped = []
    df = load_collection(layout, root, missing=missing, dropped=dropped)
    for path in dropped:
        logger.warning("dropped (listed in the metadata, missing on disk): %s", path)
    sel = selection
    clips, tags = select_clips(df, sel["n_top_tags"], sel["min_seconds"], sel["max_seconds"])
    logger.info(
        "%s: %d clips listed, %d dropped as missing, %d selected, %d tags",
        root,
        len(df) + len(dropped),
        len(dropped),
        len(clips),
        len(tags),
    )
    if len(clips) < 4:
        raise ValueError(f"only {len(clips)} clips of {root} pass the selection {sel}")
    left_out = degenerate_tags(tag_matrix(clips, tags), tags)
    for t, why in left_out.items():
        logger.warning("tag %r is left out: %s", t, why)
    tags = [t for t in tags if t not in left_out]
    if not tags:
        raise ValueError(f"no tag of {root} is a task of its own: {left_out}")
    table = pd.DataFrame(
        {
            "id": clips["id"],
            "path": clips["path"],
            "duration": clips["duration"],
            "tags": [encode_tags(t) for t in clips["tags"]],
        }
    )
    return table, tags, dropped, left_out


def tag_matrix(df, tags):
    """0/1 matrix (n_clips, n_tags): ``Y[i, k] = 1`` iff clip ``i`` carries ``tags[k]``."""
    index = {t: k for k, t in enumerate(tags)}
    Y = np.zeros((len(df), len(tags)), dtype=np.int8)
    for i, ts in enumerate(df["tags"]):
        for t in ts:
            if t in index:
                Y[i, index[t]] = 1
    return Y


def fetch_esc50(cache_dir, sha256, url, mirror=None, mirror_relpath=None):
    """Download (or take from ``mirror``) the ESC-50 GitHub archive, verify and unpack it.

    Returns the ESC-50 root (the folder holding ``audio/`` and ``meta/``).  ``sha256``
    is required (``None`` or ``"print"`` prints the archive's hash instead of checking).
    """
    from ..download import fetch, unzip

    files = fetch(
        url,
        sha256,
        cache_dir=cache_dir,
        mirror=mirror,
        mirror_relpath=mirror_relpath,
        filename=ESC50_ARCHIVE,
        processor=unzip(extract_dir="ESC-50"),
    )
    metas = sorted(Path(f) for f in files if str(f).endswith("meta/esc50.csv"))
    if not metas:
        raise ValueError(f"the archive from {url} holds no meta/esc50.csv: not ESC-50")
    return metas[0].parent.parent
