"""ISOLET spoken letters (UCI; Fanty & Cole 1991): 617 features, 26 classes.

The UCI repository ships two Unix-``compress``ed text files: ``isolet1+2+3+4.data.Z``
(6238 training rows, speakers 1-120) and ``isolet5.data.Z`` (1559 test rows, speakers
121-150; the klogreg paper's Table 1 lists N_T = 1560).  Each line holds 617
comma-separated features and the class ``1.`` ... ``26.`` (A ... Z).  ``.Z`` files are
LZW-compressed; they are read with the pure-Python :mod:`unlzw3`.

A MATLAB copy of the ``isolet1`` part alone (``fea`` 1560 x 617 in [-1, 1], ``gnd`` 1..26)
is read by :func:`load_isolet_mat`.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/isolet/"
FILES = {"train": "isolet1+2+3+4.data.Z", "test": "isolet5.data.Z"}
N_FEATURES = 617
LETTERS = tuple("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def parse_isolet(text):
    """``(X, y)`` from the text of an ISOLET ``.data`` file; ``y`` in 1..26 (int)."""
    if isinstance(text, bytes):
        text = text.decode("ascii")
    rows = np.loadtxt(io.StringIO(text), delimiter=",", ndmin=2)
    if rows.shape[1] != N_FEATURES + 1:
        raise ValueError(
            f"an ISOLET row has {N_FEATURES} features and a class, got {rows.shape[1]} columns"
        )
    y = rows[:, -1]
    if not np.all((y == np.round(y)) & (y >= 1) & (y <= 26)):
        raise ValueError("ISOLET classes must be 1..26")
    return rows[:, :-1], y.astype(int)


def read_isolet(path):
    """``(X, y)`` from an ISOLET ``.data`` or ``.data.Z`` file."""
    path = Path(path)
    raw = path.read_bytes()
    if path.suffix == ".Z":
        import unlzw3

        raw = unlzw3.unlzw(raw)
    return parse_isolet(raw)


def load_isolet_mat(path):
    """``(X, y)`` from a MATLAB file with ``fea`` (n x 617) and ``gnd`` (classes 1..26)."""
    from scipy.io import loadmat

    m = loadmat(str(path))
    if "fea" not in m or "gnd" not in m:
        raise ValueError(f"{path}: expected variables 'fea' and 'gnd'")
    X = np.asarray(m["fea"], dtype=float)
    y = np.asarray(m["gnd"]).ravel().astype(int)
    if X.shape != (y.size, N_FEATURES):
        raise ValueError(f"{path}: fea has shape {X.shape}, expected ({y.size}, {N_FEATURES})")
    return X, y
