"""Tables and figures computed from tidy records (see :mod:`kclf.repro.records`).

The papers' convention is followed: mean (std) over trials, the best method of each row
in bold, and methods not significantly worse than the best by a t-test at the 5% level
marked (a paired test over trials when every method ran on the same trials, else
Welch's two-sample test).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from ..records import atomic_write

ALPHA = 0.05
AVERAGE = "Average"


def _tie_test(best, other, paired):
    """p-value of 'other differs from best'; 1.0 when undecidable (too few trials or no
    variance of the difference)."""
    if paired and best.size == other.size and best.size > 1:
        d = best - other
        if np.allclose(d, d[0]):
            return 0.0 if d[0] != 0 else 1.0
        return float(stats.ttest_rel(best, other).pvalue)
    if best.size < 2 or other.size < 2:
        return 1.0
    if np.std(best) == 0 and np.std(other) == 0:
        return 0.0 if best.mean() != other.mean() else 1.0
    return float(stats.ttest_ind(best, other, equal_var=False).pvalue)


def summarize(records, metric, row="task", higher_is_better=True, paired=True, average=True):
    """Mean, std and the best / not-significantly-worse flags per (row, method).

    Parameters
    ----------
    records : DataFrame
        Tidy records.
    metric : str
        The metric to summarise (e.g. ``"auc"``, ``"error"``).
    row : str
        Records column that names the table's rows (``"task"`` or ``"dataset"``).
    higher_is_better : bool
    paired : bool
        Paired t-test over trials (same trials for every method) or Welch's test.
    average : bool
        Add an ``"Average"`` row: per trial, the mean over rows; then mean (std) over trials.

    Returns
    -------
    DataFrame with columns row, method, mean, std, n, best, tied (tied: not significantly
    worse than the best at 5%).
    """
    df = records[records["metric"] == metric]
    if df.empty:
        raise ValueError(f"no records with metric {metric!r}")
    per = {
        key: g.sort_values("trial").set_index("trial")["value"]
        for key, g in df.groupby([row, "method"], sort=True)
    }
    if average:
        for method in sorted(df["method"].unique()):
            avg = df[df["method"] == method].groupby("trial")["value"].mean()
            per[(AVERAGE, method)] = avg
    out = []
    row_keys = list(dict.fromkeys(k[0] for k in per))
    for r in row_keys:
        methods = {m: v for (rr, m), v in per.items() if rr == r}
        means = {m: float(v.mean()) for m, v in methods.items()}
        best = (max if higher_is_better else min)(means, key=lambda m: means[m])
        for m, v in methods.items():
            common = methods[best].index.intersection(v.index)
            use_paired = paired and len(common) == len(v) == len(methods[best])
            a = methods[best].loc[common].to_numpy() if use_paired else methods[best].to_numpy()
            b = v.loc[common].to_numpy() if use_paired else v.to_numpy()
            p = 1.0 if m == best else _tie_test(a, b, use_paired)
            out.append(
                {
                    row: r,
                    "method": m,
                    "mean": means[m],
                    "std": float(v.std(ddof=1)) if v.size > 1 else 0.0,
                    "n": int(v.size),
                    "best": m == best,
                    "tied": m == best or p >= ALPHA,
                }
            )
    return pd.DataFrame(out)


def format_cell(mean, std, scale=1.0, digits=1):
    return f"{mean * scale:.{digits}f} ({std * scale:.{digits}f})"


def wide_table(summary, row="task", methods=None, scale=1.0, digits=1, markup="md"):
    """(rows x methods) strings ``mean (std)``; the best bold, the tied ones marked."""
    methods = methods or list(dict.fromkeys(summary["method"]))
    rows = list(dict.fromkeys(summary[row]))
    table = pd.DataFrame(index=pd.Index(rows, name=row), columns=methods, dtype=object)
    for rec in summary.itertuples(index=False):
        r, m = getattr(rec, row), rec.method
        if m not in methods:
            continue
        cell = format_cell(rec.mean, rec.std, scale, digits)
        if markup == "md":
            cell = f"**{cell}**" if rec.best else (f"{cell} °" if rec.tied else cell)
        elif markup == "tex":
            cell = (
                rf"\textbf{{{cell}}}"
                if rec.best
                else (rf"\underline{{{cell}}}" if rec.tied else cell)
            )
        table.loc[r, m] = cell
    return table.fillna("–")


def add_reference(table, reference, columns, prefix="paper "):
    """Append published columns (``reference`` indexed like ``table``) as strings."""
    out = table.copy()
    for label, col in columns.items():
        ref = reference[col] if col in reference else pd.Series(dtype=object)
        out[prefix + label] = [
            ref.get(r, "–") if not pd.isna(ref.get(r, np.nan)) else "–" for r in out.index
        ]
    return out


def write_table(stem, summary, md_table, tex_table, caption):
    """Write ``<stem>.csv`` (the numeric summary), ``<stem>.md`` and ``<stem>.tex``."""
    stem = Path(stem)
    summary = summary.copy()
    atomic_write(
        stem.with_suffix(".csv"), lambda p: summary.to_csv(p, index=False, float_format="%.6g")
    )
    legend = "Best mean in bold; ° (md) / underlined (tex): not significantly worse at 5%."
    md = f"{caption}\n\n{md_table.to_markdown()}\n\n{legend}\n"
    atomic_write(stem.with_suffix(".md"), lambda p: Path(p).write_text(md))
    tex = tex_table.to_latex(escape=False, caption=f"{caption} {legend}", label=f"tab:{stem.name}")
    atomic_write(stem.with_suffix(".tex"), lambda p: Path(p).write_text(tex))
    return stem


def save_figure(fig, path, dpi=120):
    """Save a matplotlib figure atomically (PNG or PDF by suffix), then close it."""
    import matplotlib.pyplot as plt

    path = Path(path)
    fmt = path.suffix.lstrip(".")
    # no timestamps or versions in the file, so reruns give identical bytes
    meta = (
        {"Software": None}
        if fmt == "png"
        else {"Creator": None, "Producer": None, "CreationDate": None}
    )
    atomic_write(path, lambda p: fig.savefig(p, dpi=dpi, format=fmt, metadata=meta))
    plt.close(fig)
    return path
