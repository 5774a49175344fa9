"""A researcher's own data sets: the entries of the top-level config block ``datasets:``.

Each entry names one data set and says how to read it (schema:
``workflow/schemas/datasets.schema.yaml``)::

    datasets:
      my_scene: {format: arff, train: a-train.arff, test: a-test.arff, n_labels: 6}
      my_cells: {format: csv, path: cells.csv, label: diagnosis}
      my_tags:  {format: tsv, path: tags.tsv, labels: [rock, jazz], features: [f1, f2]}
      my_svm:   {format: libsvm, train: a.train.svm, test: a.test.svm}
      my_npz:   {format: npz, path: arrays.npz, standardize: true}

* ``arff``: MULAN style (:func:`kclf_workflow.datasets.mulan.load_arff_multilabel`), the last
  ``n_labels`` attributes are the labels, or the attributes named in ``labels``.
* ``csv`` / ``tsv`` (a header row): ``label: <column>`` for a binary or multi-class task,
  ``labels: [columns]`` (values 0/1) for a multi-label one; every other column is a
  numeric feature, or only the columns listed in ``features``.  A csv file's separator
  (``,`` ``;`` or tab) and both formats' decimal mark (``1.5`` or ``1,5``, as European
  spreadsheets export) are detected from the header and the first lines
  (:func:`table_dialect`), or given as ``sep:`` (csv) and ``decimal:``.
* ``libsvm``: svmlight text read by :func:`sklearn.datasets.load_svmlight_files`; rows
  with comma-separated labels (or none) make the set multi-label, one label per row a
  binary or multi-class task.
* ``npz``: arrays ``X`` and ``y`` (one label per row) or ``Y`` (0/1 label matrix), and
  optionally ``feature_names`` and ``label_names``.

Either ``train:`` + ``test:`` (a fixed split, as MULAN ships) or ``path:`` (one file; the
family draws seeded stratified realisations with :func:`stratified_realisation`).  Bad
input is a ``ValueError`` of one line naming the entry, the file and the column or row;
a class of the training part absent from the test part is a :class:`UserDataWarning`.

Image and audio collections in a one-subfolder-per-class layout are listed by
:func:`list_class_folders`.
"""

from __future__ import annotations

import csv
import io
import logging
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..schemas import read_yaml
from ..text import plain
from . import ida, mulan, voc

logger = logging.getLogger(__name__)

__all__ = [
    "AUDIO_EXTENSIONS",
    "FORMATS",
    "IMAGE_EXTENSIONS",
    "UserDataWarning",
    "UserDataset",
    "builtin_dataset_names",
    "check_dataset_name",
    "describe",
    "list_class_folders",
    "load_user_dataset",
    "require_task",
    "standardize_split",
    "stratified_realisation",
    "table_dialect",
    "trial_parts",
]

FORMATS = ("arff", "csv", "tsv", "libsvm", "npz")
#: Image files of a class folder (those :mod:`kclf_workflow.datasets.voc` reads), case-insensitive.
IMAGE_EXTENSIONS = tuple(sorted({e.lower() for e in voc.IMAGE_EXTENSIONS}))
#: Audio files of a class folder (formats librosa / soundfile decode).
AUDIO_EXTENSIONS = (".flac", ".mp3", ".ogg", ".wav")
NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_]*$"
NPZ_KEYS = ("X", "y", "Y", "feature_names", "label_names")
#: Separators a csv file's header and first lines are tried with, in this order of preference.
SEPARATORS = (",", ";", "\t")
#: Lines after the header that :func:`table_dialect` looks at.
SNIFF_LINES = 200
_SEP_NAMES = {",": "comma", ";": "semicolon", "\t": "tab"}
_COMMA_NUMBER = re.compile(r"^\s*[+-]?(\d+,\d*|,\d+)([eE][+-]?\d+)?\s*$")
_POINT_NUMBER = re.compile(r"^\s*[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?\s*$")
COMMON_KEYS = ("format", "path", "train", "test", "standardize")
FORMAT_KEYS = {
    "arff": ("n_labels", "labels"),
    "csv": ("label", "labels", "features", "sep", "decimal"),
    "tsv": ("label", "labels", "features", "decimal"),
    "libsvm": (),
    "npz": (),
}


class UserDataWarning(UserWarning):
    """Readable but suspicious user data (e.g. a class missing from the test part)."""


@dataclass(frozen=True)
class UserDataset:
    """One user data set, ready for the experiment families.

    Attributes
    ----------
    name : str
        The entry's name under ``datasets:``.
    task : {"binary", "multiclass", "multilabel"}
    X : ndarray of shape (n, p), float
        Features: the whole set (``path:``), or the training part (``train:``).
    y : ndarray
        Single-label tasks: (n,) int codes into ``classes`` (binary: 0/1, ``classes[1]``
        the positive class).  Multi-label: (n, L) int 0/1, columns in ``classes`` order.
    classes : tuple of str
        Class names (single-label, sorted) or label names (multi-label).
    feature_names : tuple of str
    X_test, y_test : ndarray or None
        The test part of a fixed split (``train:`` + ``test:``), else None.
    standardize : bool or None
        The entry's ``standardize`` (None: the family's own choice for its paper data).
    files : tuple of str
        The files read, in order (train, test or the one path).
    """

    name: str
    task: str
    X: np.ndarray
    y: np.ndarray
    classes: tuple
    feature_names: tuple
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    standardize: bool | None = None
    files: tuple = ()

    @property
    def fixed_split(self):
        """True when the entry gave ``train:`` and ``test:`` (no realisations drawn)."""
        return self.X_test is not None


# --- names ---------------------------------------------------------------------------


def builtin_dataset_names(schema_dir):
    """Built-in data set names, read from the family schemas in ``schema_dir``.

    Every ``<family>.schema.yaml`` whose block has a ``datasets`` key contributes the
    names its list accepts (``items.enum``, or the ``enum`` of an ``items.anyOf``
    alternative) or its keys (``properties``, as ``mgpc``).

    Returns
    -------
    dict mapping each name to the sorted keys that list it, e.g.
    ``{"scene": ["mgpc.datasets", "multilabel.datasets"], ...}``.
    """
    out = {}
    files = sorted(Path(schema_dir).glob("*.schema.yaml"))
    if not files:
        raise FileNotFoundError(f"schema_dir: no *.schema.yaml files in {schema_dir}")
    for path in files:
        family = path.name[: -len(".schema.yaml")]
        node = (read_yaml(path) or {}).get("properties", {}).get("datasets")
        if not isinstance(node, dict):
            continue
        items = node.get("items", {})
        alternatives = [items, *items.get("anyOf", [])]  # anyOf: the user's names beside
        names = [n for alt in alternatives for n in alt.get("enum", [])]
        names += list(node.get("properties", {}))
        for name in names:
            out.setdefault(str(name), []).append(f"{family}.datasets")
    return {name: sorted(keys) for name, keys in out.items()}


def check_dataset_name(name, builtin=()):
    """``name`` if it is a usable, non-clashing user data set name, else ``ValueError``.

    ``builtin``: the built-in names (e.g. :func:`builtin_dataset_names`); a mapping's
    values say where the clashing name is listed.
    """
    if not isinstance(name, str) or not re.match(NAME_PATTERN, name):
        raise ValueError(
            f"datasets.{name}: a data set name is a letter then letters, digits or '_' "
            f"(it names files and table rows)"
        )
    if name in builtin:
        where = builtin[name] if isinstance(builtin, dict) else ["the built-in data sets"]
        raise ValueError(
            f"datasets.{name}: the name clashes with the built-in data set {name!r} of "
            f"{', '.join(where)}; choose another name"
        )
    return name


# --- readers of one file -----------------------------------------------------------------
# Each returns (X, labels, feature_names, label_names): labels is a 1-D array of class
# values (single-label, label_names None) or an (n, L) 0/1 int matrix (multi-label).


def _check_finite(path, X, feature_names, where):
    bad = ~np.isfinite(X)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(
            f"{path}: {int(bad.sum())} NaN, inf or empty values in the features, the first "
            f"at {where(i)}, column {feature_names[j]!r}"
        )


def _numeric_frame(path, frame, where, hint="", advice=None, decimal="."):
    """The float matrix of a DataFrame of features; a non-numeric column is an error
    naming it and the first value that is not a number, followed by ``advice(value)``
    when that says something, else by ``hint``.  With ``decimal=","`` a text column's
    ``2,5`` is 2.5 (and ``1.5`` still 1.5)."""
    for col in frame.columns:
        if pd.api.types.is_numeric_dtype(frame[col]) and frame[col].dtype != object:
            continue
        values = frame[col]
        if decimal == ",":
            values = values.astype(str).str.replace(",", ".", regex=False).where(values.notna())
        as_num = pd.to_numeric(values, errors="coerce")
        bad = np.flatnonzero(as_num.isna().to_numpy() & frame[col].notna().to_numpy())
        if len(bad):
            value = frame[col].iloc[bad[0]]
            why = (advice(value) if advice is not None else "") or hint
            raise ValueError(
                f"{path}: feature column {col!r} is not numeric: {plain(value)!r} at "
                f"{where(bad[0])}{why}"
            )
        frame[col] = as_num
    return frame.to_numpy(dtype=float)


def _binary_matrix(path, M, names, where, raw=None):
    """An (n, L) 0/1 int label matrix; a label column with other values (``raw``: the
    values as read, for the message) is an error."""
    M = np.asarray(M, dtype=float)
    bad = ~((M == 0) | (M == 1))
    if bad.any():
        i, j = np.argwhere(bad)[0]
        value = M[i, j] if raw is None else raw[i, j]
        raise ValueError(
            f"{path}: label column {names[j]!r} must hold 0/1, got {plain(value)!r} at {where(i)}"
        )
    return M.astype(int)


def _show_sep(sep):
    """A separator as a message shows it: ``','``, ``';'``, ``tab ("\\t")``."""
    return 'tab ("\\t")' if sep == "\t" else repr(sep)


def _yaml_value(text):
    """``text`` as it is written in the YAML config (double-quoted, ``"\\t"`` for a tab)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'


def _sample(path):
    """The header line and up to :data:`SNIFF_LINES` more lines of ``path`` as text, and
    whether the file holds more lines than these."""
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
        lines = [line for _, line in zip(range(SNIFF_LINES + 1), fh)]
        more = fh.readline() != ""
    return "".join(lines), more


def _split(text, sep, truncated):
    """The non-blank rows of ``text`` split at ``sep`` (quotes respected); the last row is
    left out when the sample stops mid-file (it may be cut inside a quoted field)."""
    try:
        rows = [r for r in csv.reader(io.StringIO(text), delimiter=sep) if any(map(str.strip, r))]
    except csv.Error:
        return None
    return rows[:-1] if truncated and len(rows) > 2 else rows


def _detect_sep(text, truncated):
    """The separator of :data:`SEPARATORS` that splits the header into the most columns
    among those splitting every sampled line into as many (ties: the earlier one); when
    none does, the one giving the header the most columns (the parser then names the
    ragged line); None when the header holds none of them."""
    best, best_key = None, None
    for sep in SEPARATORS:
        rows = _split(text, sep, truncated)
        if not rows or len(rows[0]) < 2:
            continue
        key = (all(len(r) == len(rows[0]) for r in rows[1:]), len(rows[0]))
        if best_key is None or key > best_key:
            best, best_key = sep, key
    return best


def _detect_decimal(rows, skip=()):
    """``","`` when the sampled values (columns named in ``skip`` left out) hold numbers
    written with a decimal comma (``1,5``) and none with a decimal point, else ``"."``."""
    if not rows:
        return "."
    skip = set(skip)
    keep = [j for j, name in enumerate(rows[0]) if name not in skip]
    comma = point = 0
    for row in rows[1:]:
        for j in keep:
            if j < len(row):
                comma += bool(_COMMA_NUMBER.match(row[j]))
                point += bool(_POINT_NUMBER.match(row[j]))
    return "," if comma and not point else "."


def table_dialect(path, sep=None, decimal=None, skip=()):
    """The separator and decimal mark of a delimited text file with a header row.

    Parameters
    ----------
    path : path-like
    sep : str, optional
        The column separator; None: detected among :data:`SEPARATORS` (``,`` ``;`` tab)
        from the header and the next :data:`SNIFF_LINES` lines, as the one splitting the
        header into the most columns and every sampled line into as many.
    decimal : {".", ","}, optional
        The decimal mark; None: ``","`` when the sampled values hold numbers such as
        ``1,5`` and none such as ``1.5``, else ``"."``.
    skip : collection of str
        Columns not looked at for the decimal mark (e.g. the label columns).

    Returns
    -------
    sep, decimal : str
        ``sep`` is None when it was to be detected and the header holds none of
        :data:`SEPARATORS`.
    header : list of str
        The header row split at ``sep`` (one column when it is not there).
    """
    text, more = _sample(path)
    if sep is None:
        sep = _detect_sep(text, more)
    rows = _split(text, sep or ",", more) or []
    if decimal is None:
        decimal = _detect_decimal(rows, skip)
    header = rows[0] if rows else []
    return sep, decimal, header


def _one_column_error(path, name, fmt, sep, text):
    """The error of a header that does not split at ``sep`` (None: none of
    :data:`SEPARATORS` is in it): the separator it holds and the keys to set."""
    line = (text.splitlines() or [""])[0]
    shown = repr(line if len(line) <= 60 else line[:57] + "...")
    seen = sorted((s for s in SEPARATORS if s != sep and s in line), key=lambda s: -line.count(s))
    if sep is None:
        how = ": no comma, semicolon or tab in it"
    else:
        how = f" with sep {_show_sep(sep)}" + (f" but holds {_show_sep(seen[0])}" if seen else "")
    value = _yaml_value(seen[0]) if seen else "(its separator)"
    if fmt == "tsv":
        todo = (
            f"set format: csv under datasets.{name} (it detects the separator or takes "
            f"sep: {value})"
        )
    else:
        todo = f"set sep: {value} under datasets.{name}"
    return ValueError(
        f'{path}: the header {shown} reads as one column{how}; {todo}, and decimal: "," if its '
        f"numbers are written 1,5"
    )


def _decimal_advice(name, decimal):
    """What a non-numeric feature value says about the decimal mark, if anything."""

    def advice(value):
        if decimal == "." and _COMMA_NUMBER.match(str(value)):
            return f' (a decimal comma: set decimal: "," under datasets.{name})'
        return ""

    return advice


def _read_table(path, name, entry, fmt):
    where = lambda i: f"line {i + 2}"  # noqa: E731  (line 1 is the header)
    label, labels = entry.get("label"), entry.get("labels")
    wanted = [label] if label is not None else list(labels)
    given_sep = entry.get("sep") if fmt == "csv" else "\t"
    sep, decimal, header = table_dialect(path, given_sep, entry.get("decimal"), skip=wanted)
    if len(header) < 2:
        text = _sample(path)[0]
        if not text.strip():
            raise ValueError(f"{path}: empty file (a table needs a header row)")
        raise _one_column_error(path, name, fmt, sep, text)
    logger.info(
        "%s: sep %s, decimal %r (%s)",
        path,
        _show_sep(sep),
        decimal,
        ", ".join(
            f"{key} {'given' if entry.get(key) is not None else 'detected'}"
            for key in (("sep", "decimal") if fmt == "csv" else ("decimal",))
        ),
    )
    try:
        frame = pd.read_csv(path, sep=sep, decimal=decimal)
    except ValueError as exc:  # pandas' ParserError and EmptyDataError
        message = " ".join(str(exc).split())
        kind = _SEP_NAMES.get(sep, repr(sep))
        raise ValueError(
            f"{path}: not a {kind}-separated table with a header row ({message})"
        ) from None
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    for col in wanted + list(entry.get("features") or []):
        if col not in columns:
            key = "label" if col == label else "labels" if col in wanted else "features"
            raise ValueError(
                f"{path}: no column {col!r} ({key}); its columns are {', '.join(columns)}"
            )
    if entry.get("features"):
        features = list(entry["features"])
        overlap = sorted(set(features) & set(wanted))
        if overlap:
            raise ValueError(f"{path}: column {overlap[0]!r} is both a feature and a label")
        hint = ""
    else:
        features = [c for c in columns if c not in wanted]
        hint = " (list the feature columns under `features:` to leave a column out)"
    if not features:
        raise ValueError(f"{path}: no feature column besides the label columns")
    X = _numeric_frame(
        path,
        frame[features].copy(),
        where,
        hint,
        advice=_decimal_advice(name, decimal),
        decimal=decimal,
    )
    if label is not None:
        values = frame[label]
        empty = np.flatnonzero(values.isna().to_numpy())
        if len(empty):
            raise ValueError(
                f"{path}: label column {label!r} is empty at {where(empty[0])} ({len(empty)} empty)"
            )
        return X, values.to_numpy(), features, None
    M = frame[wanted].apply(pd.to_numeric, errors="coerce")
    Y = _binary_matrix(path, M, wanted, where, frame[wanted].to_numpy(dtype=object))
    return X, Y, features, wanted


def _read_arff(path, entry):
    try:
        X, Y, features, labels = mulan.load_arff_multilabel(
            path, entry.get("n_labels"), labels=entry.get("labels")
        )
    except ValueError as exc:
        message = str(exc).removeprefix(f"{path.name}: ")
        raise ValueError(f"{path}: {message}") from None
    return X, Y, features, labels


def _read_npz(path):
    where = lambda i: f"row index {i}"  # noqa: E731
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
    except (ValueError, OSError) as exc:  # not an npz, or object arrays
        raise ValueError(f"{path}: not an npz of numeric or text arrays ({exc})") from None
    extra = sorted(set(arrays) - set(NPZ_KEYS))
    if extra:
        raise ValueError(
            f"{path}: unexpected array {extra[0]!r}; an npz data set holds X, y or Y, and "
            f"optionally feature_names, label_names"
        )
    if "X" not in arrays or ("y" in arrays) == ("Y" in arrays):
        raise ValueError(f"{path}: needs the arrays X and one of y (labels) or Y (0/1 matrix)")
    X = arrays["X"]
    if X.ndim != 2:
        raise ValueError(f"{path}: X must be 2-D (samples x features), has shape {X.shape}")
    features = [str(v) for v in arrays.get("feature_names", range(X.shape[1]))]
    if len(features) != X.shape[1]:
        raise ValueError(f"{path}: {len(features)} feature_names for {X.shape[1]} columns of X")
    if X.dtype.kind in "biuf":
        X = X.astype(float)
    else:
        X = _numeric_frame(path, pd.DataFrame(X, columns=features), where)
    labels = arrays.get("y", arrays.get("Y"))
    if len(labels) != len(X):
        raise ValueError(f"{path}: {len(labels)} label rows for {len(X)} rows of X")
    if "y" in arrays:
        if labels.ndim != 1:
            raise ValueError(f"{path}: y must be 1-D (one label per row); use Y for 0/1 sets")
        return X, labels, features, None
    if labels.ndim != 2:
        raise ValueError(f"{path}: Y must be 2-D (samples x labels), has shape {labels.shape}")
    names = [str(v) for v in arrays.get("label_names", range(labels.shape[1]))]
    if len(names) != labels.shape[1]:
        raise ValueError(f"{path}: {len(names)} label_names for {labels.shape[1]} columns of Y")
    return X, _binary_matrix(path, labels, names, where), features, names


def _read_libsvm(paths):
    """All parts at once, so they share the feature count and the index base."""
    from sklearn.datasets import load_svmlight_files

    try:
        loaded = load_svmlight_files([str(p) for p in paths], multilabel=True)
    except ValueError as exc:
        raise ValueError(
            f"{', '.join(map(str, paths))}: not svmlight/libsvm text ({exc})"
        ) from None
    parts = [(loaded[2 * k].toarray(), loaded[2 * k + 1]) for k in range(len(paths))]
    rows = [row for _, labs in parts for row in labs]
    features = [str(j) for j in range(parts[0][0].shape[1])]
    if all(len(row) == 1 for row in rows):
        ys = [np.array([row[0] for row in labs]) for _, labs in parts]
        if all(np.all(y == np.round(y)) for y in ys):
            ys = [y.astype(int) for y in ys]
        return [(X, y, features, None) for (X, _), y in zip(parts, ys)]
    values = sorted({v for row in rows for v in row})
    names = [f"{v:g}" for v in values]
    col = {v: j for j, v in enumerate(values)}
    out = []
    for X, labs in parts:
        Y = np.zeros((len(labs), len(values)), dtype=int)
        for i, row in enumerate(labs):
            Y[i, [col[v] for v in row]] = 1
        out.append((X, Y, features, names))
    return out


# --- the entry ---------------------------------------------------------------------------


def _resolve(name, entry, key, base_dir):
    path = Path(entry[key])
    if base_dir is not None and not path.is_absolute():
        path = Path(base_dir) / path
    if not path.is_file():
        raise FileNotFoundError(f"datasets.{name}.{key}: no file {path}")
    return path


def _parts(name, entry, base_dir):
    fmt = entry.get("format")
    if fmt not in FORMATS:
        raise ValueError(f"datasets.{name}.format: one of {', '.join(FORMATS)}, got {fmt!r}")
    if (entry.get("path") is None) == (entry.get("train") is None):
        raise ValueError(f"datasets.{name}: give either path: or train: and test:")
    if (entry.get("train") is None) != (entry.get("test") is None):
        raise ValueError(f"datasets.{name}: train: and test: go together")
    for key, value in entry.items():
        if value is not None and key not in COMMON_KEYS + FORMAT_KEYS[fmt]:
            raise ValueError(
                f"datasets.{name}.{key}: not a key of format {fmt} (its keys: "
                f"{', '.join(COMMON_KEYS + FORMAT_KEYS[fmt])})"
            )
    keys = ("path",) if entry.get("path") is not None else ("train", "test")
    paths = [_resolve(name, entry, key, base_dir) for key in keys]
    if fmt == "libsvm":
        return paths, _read_libsvm(paths)
    if fmt == "npz":
        return paths, [_read_npz(p) for p in paths]
    if fmt == "arff":
        if (entry.get("n_labels") is None) == (entry.get("labels") is None):
            raise ValueError(f"datasets.{name}: format arff needs n_labels: or labels:")
        return paths, [_read_arff(p, entry) for p in paths]
    if (entry.get("label") is None) == (entry.get("labels") is None):
        raise ValueError(f"datasets.{name}: format {fmt} needs label: or labels:")
    _check_dialect_keys(name, entry)
    return paths, [_read_table(p, name, entry, fmt) for p in paths]


def _check_dialect_keys(name, entry):
    sep, decimal = entry.get("sep"), entry.get("decimal")
    if sep is not None and (not isinstance(sep, str) or len(sep) != 1 or sep in "\r\n\"'"):
        raise ValueError(
            f'datasets.{name}.sep: one character such as ",", ";" or "\\t", got {sep!r}'
        )
    if decimal not in (None, ".", ","):
        raise ValueError(f'datasets.{name}.decimal: "." or ",", got {decimal!r}')


def _single_label(paths, parts, label_key):
    """Codes of the training (or only) part's classes; a test class unseen in training is
    an error, a training class absent from the test part a warning."""
    classes = np.unique(parts[0][1])
    if len(classes) < 2:
        raise ValueError(
            f"{paths[0]}: {label_key} has a single class {plain(classes[0])!r}; a classifier "
            "needs two"
        )
    counts = [int(np.sum(parts[0][1] == c)) for c in classes]
    if len(parts) == 1 and min(counts) < 2:
        c = classes[int(np.argmin(counts))]
        raise ValueError(
            f"{paths[0]}: class {plain(c)!r} of {label_key} has a single example; a stratified "
            f"split needs two"
        )
    codes = [np.searchsorted(classes, part[1]) for part in parts]
    if len(parts) == 2:
        test = parts[1][1]
        unseen = sorted(set(test.tolist()) - set(classes.tolist()))
        if unseen:
            raise ValueError(
                f"{paths[1]}: class {unseen[0]!r} of {label_key} is absent from the training "
                f"file {paths[0]}"
            )
        absent = sorted(set(classes.tolist()) - set(test.tolist()))
        if absent:
            warnings.warn(
                f"{paths[1]}: class {absent[0]!r} of {label_key} is in the training file but "
                f"absent from the test file ({len(absent)} such classes)",
                UserDataWarning,
                stacklevel=3,
            )
    task = "binary" if len(classes) == 2 else "multiclass"
    return task, tuple(str(c) for c in classes), codes


def _multi_label(paths, parts):
    Y = parts[0][1]
    names = parts[0][3]
    if len(parts) == 2 and list(parts[1][3]) != list(names):
        raise ValueError(f"{paths[1]}: its labels {parts[1][3]} differ from {paths[0]}'s")
    varies = Y.min(axis=0) != Y.max(axis=0)
    if not varies.any():
        raise ValueError(f"{paths[0]}: every label has a single class (no label varies)")
    if not varies.all():
        j = int(np.flatnonzero(~varies)[0])
        warnings.warn(
            f"{paths[0]}: label {names[j]!r} is {plain(Y[0, j])} in every row (a single class; "
            f"{int((~varies).sum())} such labels): it is predicted constant",
            UserDataWarning,
            stacklevel=3,
        )
    if len(parts) == 2:
        absent = np.flatnonzero((Y.max(axis=0) == 1) & (parts[1][1].max(axis=0) == 0))
        if len(absent):
            warnings.warn(
                f"{paths[1]}: label {names[absent[0]]!r} is in the training file but absent "
                f"from the test file ({len(absent)} such labels)",
                UserDataWarning,
                stacklevel=3,
            )
    return "multilabel", tuple(names), [part[1] for part in parts]


def load_user_dataset(name, entry, base_dir=None, builtin=()):
    """Read the data set ``name`` described by one entry of the config block ``datasets:``.

    Parameters
    ----------
    name : str
        The entry's key; checked by :func:`check_dataset_name` against ``builtin``.
    entry : dict
        ``format``, ``path`` or ``train`` + ``test``, and per format ``n_labels`` /
        ``labels`` / ``label`` / ``features``; optional ``standardize``.
    base_dir : path-like, optional
        Relative paths are taken from here (the workflow's directory); default: the
        current directory.
    builtin : collection of str or dict, optional
        Built-in data set names (:func:`builtin_dataset_names`) the name must not clash with.

    Returns
    -------
    UserDataset
    """
    check_dataset_name(name, builtin)
    paths, parts = _parts(name, entry, base_dir)
    fmt = entry["format"]
    where = {
        "csv": lambda i: f"line {i + 2}",
        "tsv": lambda i: f"line {i + 2}",
        "npz": lambda i: f"row index {i}",
    }.get(fmt, lambda i: f"data row {i + 1}")
    for path, (X, _, features, _) in zip(paths, parts):
        _check_finite(path, X, features, where)
    if len(parts) == 2 and parts[0][0].shape[1] != parts[1][0].shape[1]:
        raise ValueError(
            f"{paths[1]}: {parts[1][0].shape[1]} features, {paths[0]} has {parts[0][0].shape[1]}"
        )
    if len(parts) == 2 and list(parts[0][2]) != list(parts[1][2]):
        raise ValueError(f"{paths[1]}: its feature columns differ from those of {paths[0]}")
    if parts[0][3] is None:
        label_key = {"npz": "y", "libsvm": "the labels"}.get(
            fmt, f"label column {entry.get('label')!r}"
        )
        task, classes, ys = _single_label(paths, parts, label_key)
    else:
        task, classes, ys = _multi_label(paths, parts)
    return UserDataset(
        name=name,
        task=task,
        X=parts[0][0],
        y=ys[0],
        classes=classes,
        feature_names=tuple(parts[0][2]),
        X_test=parts[1][0] if len(parts) == 2 else None,
        y_test=ys[1] if len(parts) == 2 else None,
        standardize=entry.get("standardize"),
        files=tuple(str(p) for p in paths),
    )


def require_task(dataset, tasks, where):
    """``dataset`` if its task is one of ``tasks``, else a ``ValueError`` of one line naming
    the entry, its file and ``where`` (the family's datasets key) that cannot take it."""
    if dataset.task not in tasks:
        raise ValueError(
            f"datasets.{dataset.name} ({dataset.files[0]}): a {dataset.task} data set, but "
            f"{where} takes {' or '.join(tasks)} ones"
        )
    return dataset


def describe(dataset):
    """Caption text naming the user's data set and its files."""
    return f"your data (datasets.{dataset.name}: {', '.join(Path(f).name for f in dataset.files)})"


# --- realisations and scaling ----------------------------------------------------------------


def _label_strata(Y, limit):
    """Strata of a 0/1 label matrix: its label sets (rows), those seen once, or beyond the
    ``limit - 1`` most frequent, merged into one stratum (a lone merged row joins the most
    frequent stratum)."""
    _, inverse, counts = np.unique(Y, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    order = np.argsort(-counts, kind="stable")
    keep = {int(s) for s in order[: max(limit - 1, 1)] if counts[s] >= 2}
    strata = np.array([s if s in keep else -1 for s in inverse])
    if np.sum(strata == -1) == 1:
        strata[strata == -1] = order[0]
    return strata


def stratified_realisation(y, name, seed, trial, test_size):
    """``(train, test)`` indices of realisation ``trial`` of a ``path:`` data set.

    Stratified by class (single-label ``y``), or by label set (a 0/1 matrix: rare label
    sets merged, :func:`_label_strata`).  Drawn by
    :func:`kclf_workflow.datasets.ida.stratified_splits` with the stream ``seed_for(seed, "ida",
    name, "split", trial)``: it depends on the seed, the name, ``trial`` and the sizes
    only, never on how many realisations are drawn, and a binary set gets the realisation
    the IDA family draws for a pattern set of that name.

    Parameters
    ----------
    y : array-like of shape (n,) or (n, L)
    name : str
    seed : int
    trial : int
    test_size : float in (0, 1) or int
        Fraction or number of test rows.
    """
    y = np.asarray(y)
    n = len(y)
    n_test = int(round(test_size * n)) if isinstance(test_size, float) else int(test_size)
    if not 0 < n_test < n:
        raise ValueError(f"{name}: test_size {test_size!r} leaves no training or no test rows")
    strata = _label_strata(y, min(n_test, n - n_test)) if y.ndim == 2 else y
    train, test = ida.stratified_splits(strata, name, seed, n - n_test, n_test, [int(trial)])
    return train[0], test[0]


def trial_parts(dataset, seed, trial, test_size, standardize=False):
    """``(X_train, y_train, X_test, y_test)`` of trial ``trial`` of a user data set.

    A fixed split (``train:`` + ``test:``) is trial 0, the only one; a ``path:`` set's
    trial is :func:`stratified_realisation` (``test_size``).  The features are z-scored on
    the training part (:func:`standardize_split`) when the entry's ``standardize`` says so,
    or, left unset, when ``standardize`` (the family's choice) does.
    """
    if dataset.fixed_split:
        if int(trial) != 0:
            raise ValueError(
                f"datasets.{dataset.name}: a fixed train/test split is trial 0 only, asked "
                f"for trial {trial}"
            )
        parts = [dataset.X, dataset.y, dataset.X_test, dataset.y_test]
    else:
        train, test = stratified_realisation(dataset.y, dataset.name, seed, trial, test_size)
        parts = [dataset.X[train], dataset.y[train], dataset.X[test], dataset.y[test]]
    if standardize if dataset.standardize is None else dataset.standardize:
        parts[0], parts[2] = standardize_split(parts[0], parts[2])
    return tuple(parts)


def standardize_split(X_train, X_test):
    """Features z-scored with the training part's means and deviations (a constant
    column is only centred), as :class:`sklearn.preprocessing.StandardScaler` does."""
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test)


# --- folders of files ----------------------------------------------------------------------


def list_class_folders(root, extensions):
    """Files of a one-subfolder-per-class collection (images or audio clips).

    Parameters
    ----------
    root : path-like
        A folder whose non-hidden subfolders are the classes (any names).
    extensions : iterable of str
        File suffixes to take, e.g. :data:`IMAGE_EXTENSIONS`, :data:`AUDIO_EXTENSIONS`
        (compared case-insensitively).

    Returns
    -------
    paths : list of pathlib.Path
        The files, class by class (classes sorted by name), each class's files sorted.
    y : ndarray of int
        The class index of each file.
    classes : list of str
        The subfolder names, sorted.

    A class folder without such files is an error; files directly in ``root`` or of other
    types in a class folder are left out with a :class:`UserDataWarning`.
    """
    root = Path(root)
    ext = {e.lower() if e.startswith(".") else f".{e.lower()}" for e in extensions}
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such folder")
    folders = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if len(folders) < 2:
        raise ValueError(
            f"{root}: needs one subfolder per class (at least two), found {len(folders)}"
        )
    stray = [p for p in root.iterdir() if p.is_file() and p.suffix.lower() in ext]
    if stray:
        warnings.warn(
            f"{root}: {len(stray)} files outside the class subfolders are left out "
            f"(e.g. {sorted(stray)[0].name})",
            UserDataWarning,
            stacklevel=2,
        )
    paths, y = [], []
    for k, folder in enumerate(folders):
        entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
        files = sorted(p for p in entries if p.is_file() and p.suffix.lower() in ext)
        if not files:
            raise ValueError(
                f"{folder}: class folder {folder.name!r} has no {'/'.join(sorted(ext))} files"
            )
        other = len(entries) - len(files)
        if other:
            warnings.warn(
                f"{folder}: {other} entries that are not {'/'.join(sorted(ext))} files are "
                f"left out",
                UserDataWarning,
                stacklevel=2,
            )
        paths += files
        y += [k] * len(files)
    return paths, np.array(y, dtype=int), [p.name for p in folders]
