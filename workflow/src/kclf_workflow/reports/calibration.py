"""Calibration tables and reliability diagrams computed from records alone.

The fit rules write the rows of :func:`kclf_workflow.records.calibration_records`; this module
turns any set of them (one experiment, many tasks, trials and methods) into

* :func:`calibration_table` -- mean and standard deviation over trials of log loss,
  Brier score and ECE per method (and dataset), with the share of clipped predictions;
* :func:`write_calibration_table` -- that table as ``<stem>_calibration.{csv,md}``;
* :func:`pool_reliability` -- per-bin counts, confidences and frequencies pooled over
  tasks and trials (the reliability curve of all predictions together);
* :func:`reliability_figure` -- one reliability-diagram panel per method.

Within a trial the metrics of several tasks (labels of a multilabel set, one-vs-rest
classes) are averaged first; mean and sample standard deviation are then taken over
trials, as the papers' tables do for their error rates.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..files import atomic_write
from .figures import save_figure, subplots
from .palette import Style, style
from .tables import md_escape

__all__ = [
    "SCORES",
    "calibration_table",
    "pool_reliability",
    "reliability_figure",
    "write_calibration_table",
]

#: Scalar metrics of the calibration table, in column order, with their display names.
SCORES = {"log_loss": "log loss", "brier": "Brier", "ece": "ECE", "ece_mass": "ECE (equal mass)"}

_BIN = re.compile(r"^rel_(count|conf|pos)_b(\d+)$")


def _check_records(records):
    if not isinstance(records, pd.DataFrame):
        records = pd.DataFrame(list(records))
    needed = {"dataset", "task", "method", "trial", "metric", "value"}
    missing = needed - set(records.columns)
    if missing:
        raise ValueError(f"records lack the columns {sorted(missing)}")
    return records


def calibration_table(records, by=("dataset", "method")):
    """Mean and standard deviation over trials of the probability metrics.

    Parameters
    ----------
    records : DataFrame or iterable of dict
        Records holding (at least) the metrics of :func:`kclf_workflow.records.calibration_records`;
        other metrics are ignored.
    by : sequence of str, default=("dataset", "method")
        Columns identifying one row of the table.

    Returns
    -------
    DataFrame
        One row per group: ``n_trials``, ``<score>_mean`` and ``<score>_std`` for each
        score of :data:`SCORES` present, ``n_clipped`` and ``n_scored`` (totals) and
        ``clipped_share`` = n_clipped / n_scored.  The standard deviation is the sample
        one (``ddof=1``), 0 for a single trial.
    """
    records = _check_records(records)
    by = list(by)
    wanted = [*SCORES, "n_clipped", "n_scored"]
    df = records[records["metric"].isin(wanted)]
    if df.empty:
        raise ValueError("records hold no calibration metrics (log_loss, brier, ece, ...)")
    # groupby, not pivot_table(dropna=False): only the (dataset, method) pairs that ran
    per_trial = df.groupby([*by, "trial", "metric"])["value"].mean().unstack("metric")
    counts = (
        df[df["metric"].isin(["n_clipped", "n_scored"])]
        .groupby([*by, "metric"])["value"]
        .sum()
        .unstack("metric")
    )
    scores = [s for s in SCORES if s in per_trial.columns]
    grouped = per_trial.groupby(level=by, sort=True)
    out = pd.DataFrame({"n_trials": grouped.size()})
    for s in scores:
        out[f"{s}_mean"] = grouped[s].mean()
        out[f"{s}_std"] = grouped[s].std(ddof=1).fillna(0.0)
    for c in ("n_clipped", "n_scored"):
        if c in counts.columns:
            out[c] = counts[c].reindex(out.index).astype("int64")
    if {"n_clipped", "n_scored"} <= set(out.columns):
        out["clipped_share"] = out["n_clipped"] / out["n_scored"]
    return out.reset_index()


def _markdown(table, by, digits):
    rows = []
    for _, r in table.iterrows():
        row = {c: md_escape(r[c]) if isinstance(r[c], str) else r[c] for c in by}
        row["trials"] = int(r["n_trials"])
        for s, name in SCORES.items():
            if f"{s}_mean" in table.columns:
                row[name] = f"{r[f'{s}_mean']:.{digits}f} ± {r[f'{s}_std']:.{digits}f}"
        if "n_clipped" in table.columns:
            row["clipped"] = f"{int(r['n_clipped'])} ({100 * r['clipped_share']:.1f}%)"
        rows.append(row)
    return pd.DataFrame(rows).to_markdown(index=False) + "\n"


def write_calibration_table(records, stem, *, by=("dataset", "method"), digits=3):
    """Write :func:`calibration_table` to ``<stem>_calibration.csv`` and ``.md``.

    The CSV holds full-precision numbers; the Markdown shows ``mean ± std`` with
    ``digits`` decimals and the clipped predictions as a count and a percentage.

    Returns
    -------
    (csv_path, md_path) : tuple of pathlib.Path
    """
    by = list(by)
    table = calibration_table(records, by=by)
    stem = Path(stem)
    csv_path = stem.with_name(stem.name + "_calibration.csv")
    md_path = stem.with_name(stem.name + "_calibration.md")
    atomic_write(csv_path, lambda tmp: table.to_csv(tmp, index=False, float_format="%.6g"))
    text = _markdown(table, by, digits)
    atomic_write(md_path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
    return csv_path, md_path


def pool_reliability(records, by=("method",)):
    """Reliability curve pooled over everything not in ``by`` (tasks, trials, datasets).

    Per bin: ``count`` is the sum of the counts and ``confidence`` / ``frequency`` the
    count-weighted means, i.e. exactly the reliability curve of all the predictions
    concatenated (equal-width bins).

    Returns
    -------
    DataFrame
        Columns ``*by, bin, count, confidence, frequency`` (NaN for empty bins).
    """
    records = _check_records(records)
    by = list(by)
    found = records["metric"].str.extract(_BIN)
    df = records.assign(kind=found[0], bin=pd.to_numeric(found[1])).dropna(subset=["kind"])
    if df.empty:
        raise ValueError("records hold no reliability bins (rel_count_bXX, ...)")
    ids = ["dataset", "task", "method", "trial"]
    keys = ids + [c for c in by if c not in ids]
    wide = df.pivot_table(index=[*keys, "bin"], columns="kind", values="value", aggfunc="first")
    wide = wide.reset_index()
    count = wide["count"].fillna(0)
    wide["conf_sum"] = np.where(count > 0, wide["conf"] * count, 0.0)
    wide["pos_sum"] = np.where(count > 0, wide["pos"] * count, 0.0)
    wide["count"] = count
    pooled = wide.groupby([*by, "bin"], sort=True)[["count", "conf_sum", "pos_sum"]].sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled["confidence"] = pooled["conf_sum"] / pooled["count"]
        pooled["frequency"] = pooled["pos_sum"] / pooled["count"]
    out = pooled.drop(columns=["conf_sum", "pos_sum"]).reset_index()
    out["bin"] = out["bin"].astype(int)
    out["count"] = out["count"].astype("int64")
    return out[[*by, "bin", "count", "confidence", "frequency"]]


def reliability_figure(records, path, *, by="method", title=None, ncols=4):
    """Reliability diagrams, one panel per value of ``by`` (default: per method).

    Each panel pools all tasks and trials (:func:`pool_reliability`): observed
    frequency against mean predicted probability per equal-width bin, marker area
    proportional to the bin's count, the diagonal of perfect calibration, the pooled
    ECE in the panel title and the share of predictions per bin as grey bars; a method's
    panel in its colour and marker (:mod:`kclf_workflow.reports.palette`).

    Returns
    -------
    pathlib.Path
    """
    pooled = pool_reliability(records, by=(by,))
    groups = list(pooled.groupby(by, sort=True))
    ncols = max(1, min(ncols, len(groups)))
    nrows = -(-len(groups) // ncols)
    fig, axes = subplots(
        nrows,
        ncols,
        figsize=(3.2 * ncols, 3.3 * nrows + (0.4 if title else 0)),
        layout="constrained",
        squeeze=False,
    )
    axes = axes.ravel()
    for ax, (name, g) in zip(axes, groups):
        n_bins = int(g["bin"].max()) + 1
        width = 1.0 / n_bins
        total = g["count"].sum()
        share = g["count"] / total
        ax.bar(g["bin"] * width + width / 2, share, width=width * 0.9, color="0.85", zorder=0)
        ax.plot([0, 1], [0, 1], ls="--", color="0.4", lw=1)
        filled = g["count"] > 0
        ece = float(np.sum(share[filled] * np.abs(g["frequency"] - g["confidence"])[filled]))
        look = style(name) if by == "method" else Style("C0", "o")
        ax.plot(g["confidence"][filled], g["frequency"][filled], "-", color=look.color, lw=1.2)
        ax.scatter(
            g["confidence"][filled],
            g["frequency"][filled],
            s=10 + 200 * share[filled],
            color=look.color,
            marker=look.marker,
            zorder=3,
            clip_on=False,
        )
        ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", title=f"{name}\nECE {ece:.3f}, n={total}")
        ax.set_xlabel("mean predicted probability")
        ax.set_ylabel("observed frequency")
    for ax in axes[len(groups) :]:
        ax.set_axis_off()
    if title:
        fig.suptitle(title)
    return save_figure(fig, path)
