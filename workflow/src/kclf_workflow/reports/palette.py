"""One colour and one marker per method, in every figure of the benchmark and the
families: a method keeps its style from panel to panel and figure to figure (LSPC-new is
red circles in the benchmark's critical-difference diagrams, the AUC dot plots, the IDA
error plot and the reliability diagrams alike).

:data:`STYLES` holds the style of each method under its canonical name; a family that
names the same method otherwise (the IDA family's "SVM", the multi-class family's
"kLOGREG pairwise", the MGPC family's "MEP", a config key such as ``lspc_new``) finds it
through :data:`ALIASES`.  A name of neither (a peer added to the registry without a
style) gets a style of its own from :data:`SPARE`, fixed by the name alone.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from ..methods import REGISTRY


@dataclass(frozen=True)
class Style:
    """A method's colour (a matplotlib colour) and marker."""

    color: str
    marker: str


#: canonical method name -> style (distinct colours; tab20's strong half first)
STYLES = {
    "LSPC-new": Style("#d62728", "o"),
    "LSPC": Style("#1f77b4", "s"),
    "LSPC'": Style("#2ca02c", "^"),
    "KLR": Style("#9467bd", "D"),
    "kLOGREG one-vs-rest": Style("#c5b0d5", "d"),
    "SVC": Style("#7f7f7f", "v"),
    "MAPLP": Style("#ff7f0e", "P"),
    "MAPLP-bias": Style("#8c564b", "X"),
    "MGPC-EP": Style("#17becf", "h"),
    "MLA": Style("#bcbd22", "p"),
    "LR": Style("#000080", "<"),
    "GPC": Style("#008080", ">"),
    "HGB": Style("#000000", "*"),
    "GPy-EP": Style("#e377c2", "H"),
    "RF": Style("#556b2f", "^"),
    "kNN": Style("#4b0082", "d"),
    "Ridge Newton": Style("#006400", "8"),
    "Ridge gradient": Style("#2e8b57", "x"),
    "CorrLog": Style("#800000", "o"),
    "ILR": Style("#4682b4", "s"),
    "ClassifierChain (LR)": Style("#daa520", "<"),
    "MultiOutput (SVC)": Style("#404040", "v"),
}
#: another name of a method in :data:`STYLES` -> its canonical name
ALIASES = {
    "kLOGREG pairwise": "KLR",
    "SVM": "SVC",
    "SVC (one-vs-one)": "SVC",
    "MAPLP + constant (not in paper)": "MAPLP-bias",
    "MEP": "MGPC-EP",
    "sklearn GPC": "GPC",
    "GPy EP": "GPy-EP",
}
#: the styles of names in neither table, picked by a CRC-32 of the name
SPARE = tuple(
    Style(color, marker)
    for color in ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c49c94", "#f7b6d2", "#dbdb8d")
    for marker in ("o", "s", "^", "D")
)


def canonical(name):
    """The canonical name of a method's table name or config key (itself when unknown)."""
    name = str(name)
    if name in STYLES:
        return name
    if name in ALIASES:
        return ALIASES[name]
    for table in REGISTRY.values():  # a config key: its table name
        if name in table:
            return canonical(table[name].name) if table[name].name != name else name
    return name


def style(name):
    """The :class:`Style` of the method ``name`` (a table name or a config key)."""
    key = canonical(name)
    if key in STYLES:
        return STYLES[key]
    return SPARE[zlib.crc32(key.encode("utf-8")) % len(SPARE)]


def colors(names):
    """``{name: colour}`` of ``names``."""
    return {n: style(n).color for n in names}
