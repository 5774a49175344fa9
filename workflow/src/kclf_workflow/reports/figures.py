"""Figures drawn without pyplot.

Every report draws on a :class:`matplotlib.figure.Figure` of its own (:func:`subplots`):
no global figure state, no GUI backend and nothing to choose before an import; saving
(:func:`save_figure`) renders PNG and PDF with matplotlib's Agg and PDF canvases.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from ..files import atomic_write


def subplots(nrows=1, ncols=1, *, figsize=None, layout=None, **kwargs):
    """``(figure, axes)`` as :func:`matplotlib.pyplot.subplots` gives them, on a figure of
    its own (``kwargs``: ``sharex``, ``squeeze``, ... of :meth:`Figure.subplots`)."""
    fig = Figure(figsize=figsize, layout=layout)
    return fig, fig.subplots(nrows, ncols, **kwargs)


def save_figure(fig, path, dpi=120):
    """Save ``fig`` atomically, PNG or PDF by the suffix of ``path``, with no timestamps or
    versions in the file, so reruns give identical bytes."""
    path = Path(path)
    fmt = path.suffix.lstrip(".") or "png"
    meta = (
        {"Software": None}
        if fmt == "png"
        else {"Creator": None, "Producer": None, "CreationDate": None}
    )
    atomic_write(path, lambda p: fig.savefig(p, dpi=dpi, format=fmt, metadata=meta))
    return path
