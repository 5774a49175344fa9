"""Rätsch's IDA benchmark: 13 binary datasets with fixed train/test realisations.

Sources, best first:

* ``benchmarks.mat`` (GitHub tdiethe/gunnar_raetsch_benchmark_datasets, DOI
  10.5281/zenodo.18110): one MATLAB struct per dataset with fields ``x`` (patterns),
  ``t`` (targets in {-1, +1}), ``train`` and ``test`` (1-based row indices, one row per
  realisation: 100, or 20 for image and splice).  :func:`load_benchmarks_mat`.
* a local mirror laid out as ``../shared/data/ida``: ``unique_xt/<name>.mat`` (the
  pattern set, ``data`` and ``target``) and ``splits_asc/<name>/<name>_{train,test}_
  {data,labels}_<r>.asc`` (realisation ``r`` as text).  :func:`load_pattern_set`,
  :func:`load_split_asc`, :func:`asc_split_indices`.
* Breiman's generators for ringnorm, twonorm, waveform (:mod:`kclf_workflow.datasets.breiman`).

When split indices are missing, :func:`stratified_splits` draws the published number of
realisations at the published train/test sizes (:data:`PUBLISHED`) by seeded stratified
sampling (one stream per realisation, :func:`kclf_workflow.seeding.seed_for`).  Every loader
returns binary labels in {-1, +1} and rejects anything else.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.io

from ..seeding import rng_for, seed_for
from . import breiman

__all__ = [
    "BENCHMARKS_DOI",
    "PUBLISHED",
    "asc_split_indices",
    "check_binary",
    "EXTRA",
    "generate",
    "load_wdbc",
    "load_benchmarks_mat",
    "load_pattern_set",
    "load_split_asc",
    "stratified_splits",
]

BENCHMARKS_DOI = "10.5281/zenodo.18110"

#: Published (n_train, n_test, n_realisations) of the 13 IDA benchmarks.
PUBLISHED = {
    "banana": (400, 4900, 100),
    "breast_cancer": (200, 77, 100),
    "diabetis": (468, 300, 100),
    "flare_solar": (666, 400, 100),
    "german": (700, 300, 100),
    "heart": (170, 100, 100),
    "image": (1300, 1010, 20),
    "ringnorm": (400, 7000, 100),
    "splice": (1000, 2175, 20),
    "thyroid": (140, 75, 100),
    "titanic": (150, 2051, 100),
    "twonorm": (400, 7000, 100),
    "waveform": (400, 4600, 100),
}


#: Offline stand-ins with (n_train, n_test, n_realisations) chosen here, not published.
EXTRA = {"wdbc": (300, 269, 100)}


def load_wdbc():
    """scikit-learn's bundled Breast Cancer Wisconsin (Diagnostic) data: 569 x 30,
    features standardised over the whole set (as the IDA sets are), ``y = +1`` for
    malignant.  Not IDA's breast_cancer (Ljubljana, 277 x 9): an offline stand-in."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    X = np.asarray(data.data, dtype=float)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, np.where(data.target == 0, 1, -1)


def check_name(name):
    if name not in PUBLISHED:
        raise ValueError(f"unknown IDA dataset {name!r}; expected one of {sorted(PUBLISHED)}")
    return name


def check_binary(y, name="y"):
    """Labels as int in {-1, +1}; ``ValueError`` for anything else (e.g. three classes)."""
    y = np.asarray(y).ravel()
    values = np.unique(y)
    if not set(values.tolist()) <= {-1, 1} or len(values) != 2:
        raise ValueError(
            f"{name}: IDA benchmarks are binary with labels in {{-1, +1}}, got values "
            f"{values[:10].tolist()}"
        )
    return y.astype(int)


def load_pattern_set(name, mirror):
    """``(X, y)`` of ``mirror/unique_xt/<name>.mat`` (variables ``data``, ``target``)."""
    path = Path(mirror) / "unique_xt" / f"{check_name(name)}.mat"
    if not path.is_file():
        raise FileNotFoundError(f"IDA pattern set not found: {path}")
    m = scipy.io.loadmat(path)
    return np.asarray(m["data"], dtype=float), check_binary(m["target"], f"{path}: target")


def load_split_asc(name, mirror, realisation=1):
    """``(X_train, y_train, X_test, y_test)`` of realisation ``realisation`` (1-based)
    from ``mirror/splits_asc/<name>/``; ``None`` when its files are absent."""
    folder = Path(mirror) / "splits_asc" / check_name(name)
    parts = {}
    for part in ("train", "test"):
        data = folder / f"{name}_{part}_data_{realisation}.asc"
        labels = folder / f"{name}_{part}_labels_{realisation}.asc"
        if not (data.is_file() and labels.is_file()):
            return None
        parts[part] = (
            np.loadtxt(data, ndmin=2),
            check_binary(np.loadtxt(labels), f"{labels}"),
        )
    return (*parts["train"], *parts["test"])


def _row_keys(X, y):
    # the .asc files hold the pattern values printed as %.7e; printing the pattern set
    # the same way makes equal rows equal strings
    return [" ".join(f"{v:.7e}" for v in row) + f" {t:d}" for row, t in zip(X, y)]


def asc_split_indices(X, y, X_part, y_part, used=None):
    """Row indices into ``(X, y)`` of every ``(X_part, y_part)`` row (value and label).

    Repeated rows (titanic has only 14 distinct patterns) are matched to distinct indices;
    ``used`` (a set) carries indices already taken by another part.  ``ValueError`` when
    a row has no unused match.
    """
    used = set() if used is None else used
    pool = {}
    for i, k in enumerate(_row_keys(X, y)):
        if i not in used:
            pool.setdefault(k, []).append(i)
    out = []
    for r, k in enumerate(_row_keys(X_part, y_part)):
        rows = pool.get(k)
        if not rows:
            raise ValueError(f"split row {r} ({k}) is not an unused row of the pattern set")
        out.append(rows.pop(0))
    used.update(out)
    return np.array(out, dtype=int)


def stratified_splits(y, name, seed, n_train=None, n_test=None, n_realisations=None):
    """``(train, test)`` index arrays of shape (R, n_train), (R, n_test).

    Realisation ``r`` is one stratified random partition drawn with
    ``seed_for(seed, "ida", name, "split", r)``, at the published sizes unless given.
    ``n_realisations`` is a count (realisations 0 .. R-1) or a list of realisation indices.
    """
    from sklearn.model_selection import StratifiedShuffleSplit

    pub = PUBLISHED.get(name, EXTRA.get(name, (None, None, None)))
    n_train = pub[0] if n_train is None else n_train
    n_test = pub[1] if n_test is None else n_test
    R = pub[2] if n_realisations is None else n_realisations
    which = range(R) if isinstance(R, (int, np.integer)) or R is None else list(R)
    R = None if R is None else len(which)
    if n_train is None or n_test is None or R is None:
        raise ValueError(f"{name}: give n_train, n_test and n_realisations (no published sizes)")
    if n_train + n_test > len(y):
        raise ValueError(
            f"{name}: n_train + n_test = {n_train + n_test} exceeds the {len(y)} patterns"
        )
    train = np.empty((R, n_train), dtype=int)
    test = np.empty((R, n_test), dtype=int)
    for row, r in enumerate(which):
        sss = StratifiedShuffleSplit(
            n_splits=1,
            train_size=n_train,
            test_size=n_test,
            random_state=seed_for(seed, "ida", name, "split", r),
        )
        train[row], test[row] = next(sss.split(np.zeros(len(y)), y))
    return train, test


def load_benchmarks_mat(path, name):
    """``(X, y, train, test)`` of dataset ``name`` in ``benchmarks.mat``; indices 0-based,
    one row per realisation."""
    m = scipy.io.loadmat(path, variable_names=[check_name(name)], squeeze_me=True)
    if name not in m:
        raise ValueError(f"{path}: no variable {name!r}")
    s = m[name]
    X = np.atleast_2d(np.asarray(s["x"].item(), dtype=float))
    if X.shape[0] == 1 and X.shape[1] > 1 and s["t"].item().size > 1:
        X = X.T
    y = check_binary(s["t"].item(), f"{path}: {name}.t")
    train = np.atleast_2d(np.asarray(s["train"].item(), dtype=int)) - 1
    test = np.atleast_2d(np.asarray(s["test"].item(), dtype=int)) - 1
    if X.shape[0] != len(y) or train.max() >= len(y) or test.max() >= len(y) or train.min() < 0:
        raise ValueError(f"{path}: {name} has inconsistent x, t, train, test")
    return X, y, train, test


def generate(name, seed, n_patterns=None):
    """``(X, y)``: a pattern set of ``n_patterns`` (default ``n_train + n_test``) drawn
    from Breiman's generator ``name`` with the stream ``rng_for(seed, "ida", name,
    "patterns")``."""
    if name not in breiman.GENERATORS:
        raise ValueError(f"no generator for {name!r}; generators: {sorted(breiman.GENERATORS)}")
    n = sum(PUBLISHED[name][:2]) if n_patterns is None else n_patterns
    return breiman.GENERATORS[name](n, rng_for(seed, "ida", name, "patterns"))
