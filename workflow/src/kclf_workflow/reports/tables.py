"""Tables and figures computed from tidy records (see :mod:`kclf_workflow.records`).

The papers' convention is followed: mean (std) over trials, the best method of each row
in bold, and methods not significantly worse than the best by a t-test at the 5% level
marked (a paired test over trials when every method ran on the same trials, else
Welch's two-sample test).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from ..files import atomic_write

ALPHA = 0.05
AVERAGE = "Average"
#: the paper's LSPC-new: kernels at every training point, the unweighted squared loss
PAPER_VARIANT = {"basis": "full", "class_weight": None}


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


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def tex_escape(text):
    """``text`` as LaTeX prints it literally (task names are folder names: any character)."""
    return "".join(_TEX_SPECIAL.get(c, c) for c in str(text))


def md_escape(text):
    """``text`` safe in a Markdown table cell (a ``|`` would split the row)."""
    return str(text).replace("|", "\\|")


def plain_label(text):
    """``text`` as a figure label shows it (matplotlib reads ``$...$`` as maths)."""
    return str(text).replace("$", r"\$")


def variant_note(records):
    """Caption sentence naming the LSPC-new variant that ran when its records' params
    differ from the paper's method (:data:`PAPER_VARIANT`); empty otherwise."""
    ran = set()
    for text in records["params"].dropna().unique():
        p = json.loads(text)
        if p.keys() & PAPER_VARIANT.keys():
            ran.add(tuple((k, p.get(k, v)) for k, v in PAPER_VARIANT.items()))
    changed = sorted(r for r in ran if dict(r) != PAPER_VARIANT)
    if not changed:
        return ""
    named = "; ".join(", ".join(f"{k}={'none' if v is None else v}" for k, v in r) for r in changed)
    return f" LSPC-new ran with {named} (the paper's method: basis=full, class_weight=none)."


def write_table(stem, summary, md_table, tex_table, caption):
    """Write ``<stem>.csv`` (the numeric summary), ``<stem>.md`` and ``<stem>.tex``.

    Row and column labels (task and method names) and the caption are escaped for each
    markup; the cells of ``tex_table`` are LaTeX already."""
    stem = Path(stem)
    summary = summary.copy()
    atomic_write(
        stem.with_suffix(".csv"), lambda p: summary.to_csv(p, index=False, float_format="%.6g")
    )
    legend = "Best mean in bold; ° (md) / underlined (tex): not significantly worse at 5%."
    md_table = md_table.rename(index=md_escape, columns=md_escape)
    md = f"{caption}\n\n{md_table.to_markdown()}\n\n{legend}\n"
    atomic_write(stem.with_suffix(".md"), lambda p: Path(p).write_text(md, encoding="utf-8"))
    tex_table = tex_table.rename(index=tex_escape, columns=tex_escape)
    if tex_table.index.name is not None:
        tex_table.index.name = tex_escape(tex_table.index.name)
    tex = tex_table.to_latex(
        escape=False, caption=tex_escape(f"{caption} {legend}"), label=f"tab:{stem.name}"
    )
    atomic_write(stem.with_suffix(".tex"), lambda p: Path(p).write_text(tex, encoding="utf-8"))
    return stem


def time_table(per_trial, timings, methods=None):
    """Wall-clock training seconds over trials, one row per method.

    ``per_trial`` holds one row per (method, trial): a ``method`` column and the seconds
    of every timing named in ``timings``.  ``methods``: the row order (methods without
    records are left out, repeats ignored); None: as they first appear.  Returns
    ``method``, ``n_trials`` and per timing ``<timing>_mean`` / ``<timing>_std`` (std over
    trials, 0 for one).
    """
    g = per_trial.groupby("method", sort=False)
    present = list(g.groups)
    order = present if methods is None else [m for m in dict.fromkeys(methods) if m in present]
    out = pd.DataFrame({"method": order, "n_trials": g.size().loc[order].to_numpy()})
    for t in timings:
        out[f"{t}_mean"] = g[t].mean().loc[order].to_numpy()
        out[f"{t}_std"] = g[t].std(ddof=1).loc[order].fillna(0.0).to_numpy()
    return out


def write_time_table(stem, table, labels, caption, *, names=None, columns=None, rows=(), tex=False):
    """``<stem>_time.csv`` (``table`` of :func:`time_table`, extra columns included) and
    ``<stem>_time.md``: ``caption``, then per method its trials and one ``mean (std)``
    column per timing (``labels``: timing -> column label).

    ``names`` maps methods to display names; ``columns`` (label -> strings, one per row
    of ``table``) and ``rows`` (``(name, {label: text})`` pairs, e.g. a paper's times)
    add formatted cells; ``tex``: also ``<stem>_time.tex``.  Wall-clock seconds differ
    between runs, so they live only here, never in a table meant to be byte-identical
    for the same config.  Returns the paths written.
    """
    stem = Path(stem)
    stem = stem.with_name(stem.name + "_time")
    csv_path, md_path = stem.with_suffix(".csv"), stem.with_suffix(".md")
    atomic_write(csv_path, lambda p: table.to_csv(p, index=False, float_format="%.6g"))
    cells = {
        label: [f"{m:.3g} ({s:.2g})" for m, s in zip(table[f"{t}_mean"], table[f"{t}_std"])]
        for t, label in labels.items()
    }
    shown = pd.DataFrame(
        {
            "method": [(names or {}).get(m, m) for m in table["method"]],
            "trials": table["n_trials"],
            **cells,
            **(columns or {}),
        }
    )
    if rows:
        extra = [{c: row.get(c, "–") for c in shown.columns} | {"method": n} for n, row in rows]
        shown = pd.concat([shown, pd.DataFrame(extra, columns=shown.columns)], ignore_index=True)
    text = f"{caption}\n\n{shown.to_markdown(index=False)}\n"
    atomic_write(md_path, lambda p: Path(p).write_text(text, encoding="utf-8"))
    paths = [csv_path, md_path]
    if tex:
        latex = shown.to_latex(index=False, caption=caption, label=f"tab:{stem.name}")
        paths.append(stem.with_suffix(".tex"))
        atomic_write(paths[-1], lambda p: Path(p).write_text(latex, encoding="utf-8"))
    return tuple(paths)
