"""The AUC report of the VOC and scene experiments (LSPC-new paper, Table 1): the table
beside the paper's, its per-task figure, its calibration companions and its training
times; the audio report (:mod:`kclf_workflow.reports.audio`) reads the same records.

Wall-clock times differ from run to run, so they are never put in the AUC table (whose
files are byte-identical for the same config) but in ``<stem>_time.{csv,md}``
(:func:`write_auc_time`)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..methods import family_methods, specs
from ..records import read_records, records_source
from .calibration import reliability_figure, write_calibration_table
from .figures import save_figure, subplots
from .palette import style
from .tables import (
    AVERAGE,
    plain_label,
    summarize,
    time_table,
    variant_note,
    wide_table,
    write_table,
    write_time_table,
)

#: table order of the methods (display names)
ORDER = list(family_methods("auc").values())
#: display name -> the column stem of the paper's table (which has no SVC)
PAPER_COLUMNS = {s.name: s.reference for s in specs("auc").values() if s.reference}
TIME_ROW = "train time (s)"
logger = logging.getLogger(__name__)
REFERENCE_ALIASES = {"average": AVERAGE, "auc": AVERAGE, "train_time_s": TIME_ROW}


def read_reference(path):
    """Published table: first column the row (task name, ``average``/``auc``,
    ``train_time_s``), then ``<method>_mean`` / ``<method>_std`` columns."""
    ref = pd.read_csv(path)
    key = ref.columns[0]
    ref[key] = [REFERENCE_ALIASES.get(str(k).lower(), str(k).lower()) for k in ref[key]]
    return ref.set_index(key)


def _paper_cell(ref, row, col):
    lookup = row if row in (AVERAGE, TIME_ROW) else str(row).lower()
    if lookup not in ref.index or f"{col}_mean" not in ref:
        return "–"
    m, s = ref.loc[lookup, f"{col}_mean"], ref.loc[lookup].get(f"{col}_std", np.nan)
    if pd.isna(m):
        return "–"
    return f"{m:g}" if pd.isna(s) else f"{m:.1f} ({s:.1f})"


def auc_time_table(records, methods, reference=None):
    """Training seconds per method from the ``auc`` records' ``fit_seconds``.

    Columns: ``method``, ``n_trials``, ``trial_seconds_mean`` / ``_std`` (one trial's fit
    of all tasks: the sum of its tasks' shares, CV included; std over trials),
    ``task_seconds_mean`` (mean per-task share) and, with a ``reference`` holding a
    ``train_time_s`` row, ``paper_seconds``.
    """
    auc = records[records["metric"] == "auc"]
    per_trial = auc.groupby(["method", "trial"], as_index=False)["fit_seconds"].sum()
    table = time_table(
        per_trial.rename(columns={"fit_seconds": "trial_seconds"}), ["trial_seconds"], methods
    )
    table["task_seconds_mean"] = (
        auc.groupby("method")["fit_seconds"].mean()[table["method"]].to_numpy()
    )
    if reference is not None:
        ref = read_reference(reference)
        cols = [f"{PAPER_COLUMNS.get(m, '')}_mean" for m in table["method"]]
        table["paper_seconds"] = [
            float(ref.loc[TIME_ROW, c]) if TIME_ROW in ref.index and c in ref else np.nan
            for c in cols
        ]
    return table


def write_auc_time(records, stem, methods, *, title, reference=None):
    """Write :func:`auc_time_table` to ``<stem>_time.csv`` and ``<stem>_time.md``."""
    table = auc_time_table(records, methods, reference)
    columns = {"s per task": [f"{v:.3g}" for v in table["task_seconds_mean"]]}
    caption = (
        f"{title}: wall-clock training seconds (CV included), per trial for one fit of all "
        "tasks, mean (std) over trials, and per task (a multi-task fit's time shared equally "
        "by its tasks); machine- and load-dependent, hence kept out of the AUC table."
    )
    if "paper_seconds" in table:
        columns["paper s"] = ["–" if pd.isna(v) else f"{v:g}" for v in table["paper_seconds"]]
        caption += " Paper: the published training time."
    return write_time_table(
        stem, table, {"trial_seconds": "s per trial (all tasks)"}, caption, columns=columns
    )


def coverage_note(records, tasks, kind="tasks"):
    """Caption sentence on which of the expected ``tasks`` have an AUC (a task whose test
    part never holds both classes has none) and so enter the Average row; the missing
    ones are also logged as a warning.  ``""`` when ``tasks`` is None."""
    if tasks is None:
        return ""
    auc = records[records["metric"] == "auc"]
    scored = set(auc["task"])
    absent = [t for t in tasks if t not in scored]
    n_trials = auc["trial"].nunique()
    per_trial = auc.groupby("task")["trial"].nunique()
    partial = [t for t in tasks if t in scored and per_trial[t] < n_trials]
    covered = [t for t in tasks if t not in absent]
    sep = "; " if any("," in t for t in covered) else ", "
    note = f" '{AVERAGE}' covers {len(covered)} of the {len(tasks)} {kind}" + (
        f" ({sep.join(covered)})" if covered else ""
    )
    if absent:
        logger.warning(
            "%d of %d %s have no AUC in any trial (no positives or no negatives in the test "
            "part): %s; the Average covers the others",
            len(absent),
            len(tasks),
            kind,
            ", ".join(absent),
        )
        note += f"; not {sep.join(absent)}: no positives or no negatives in any test part"
    if partial:
        logger.warning("%s lack an AUC in some trials", ", ".join(partial))
        note += f"; {', '.join(partial)} only in the trials whose test part holds both classes"
    return note + "."


def write_auc_report(
    record_files,
    stem,
    figure,
    *,
    title,
    reference=None,
    reliability=None,
    methods=None,
    tasks=None,
    notes=(),
):
    """Write ``<stem>.{csv,md,tex}``, ``<stem>_calibration.{csv,md}``,
    ``<stem>_time.{csv,md}``, the per-task figure and (optionally) the reliability diagram,
    from the records only.  ``tasks`` (the expected task names) puts in the caption how
    many of them the Average row covers (:func:`coverage_note`); ``notes`` are further
    caption sentences (e.g. images left out)."""
    records = read_records(record_files)
    title = records_source(records, title)
    present = list(dict.fromkeys(records["method"]))
    methods = [m for m in (methods or ORDER) if m in present] + [
        m for m in present if m not in (methods or ORDER)
    ]
    summary = summarize(records, "auc", row="task", higher_is_better=True, paired=True)
    tables = {}
    for markup in ("md", "tex"):
        t = wide_table(summary, "task", methods, scale=100.0, digits=1, markup=markup)
        if reference is not None:
            ref = read_reference(reference)
            for label, col in PAPER_COLUMNS.items():
                t[f"paper {label}"] = [_paper_cell(ref, r, col) for r in t.index]
        tables[markup] = t
    n_trials = records["trial"].nunique()
    caption = (
        f"{title}: test AUC x 100, mean (std) over {n_trials} trials "
        f"(training times: {Path(stem).name}_time)."
    )
    caption += coverage_note(records, tasks, "classes")
    caption += variant_note(records)
    if reference is not None:
        caption += " Paper columns: the published table."
    caption += "".join(f" {n}" for n in notes)
    write_table(stem, summary, tables["md"], tables["tex"], caption)
    write_calibration_table(records, stem)
    write_auc_time(records, stem, methods, title=title, reference=reference)
    if reliability is not None:
        reliability_figure(records, reliability, title=f"{title}: reliability")
    _figure(summary, figure, methods, title, read_reference(reference) if reference else None)
    return Path(stem)


def _figure(summary, path, methods, title, ref):
    tasks = [t for t in dict.fromkeys(summary["task"]) if t != AVERAGE]
    fig, ax = subplots(figsize=(max(6, 0.45 * len(tasks) + 2), 4))
    x = np.arange(len(tasks))
    width = 0.8 / max(len(methods), 1)
    for i, m in enumerate(methods):
        s = summary[summary["method"] == m].set_index("task")
        mean = [100 * s["mean"].get(t, np.nan) for t in tasks]
        std = [100 * s["std"].get(t, np.nan) for t in tasks]
        pos = x - 0.4 + width * (i + 0.5)
        look = style(m)
        ax.errorbar(
            pos, mean, yerr=std, fmt=look.marker, ms=4, capsize=2, label=m, color=look.color
        )
        if ref is not None and m in PAPER_COLUMNS:
            col = f"{PAPER_COLUMNS[m]}_mean"
            paper = [ref[col].get(str(t).lower(), np.nan) if col in ref else np.nan for t in tasks]
            ax.plot(
                pos,
                paper,
                "x",
                color=look.color,
                ms=6,
                label=f"{m} (paper)" if i < len(PAPER_COLUMNS) else None,
            )
    ax.set_xticks(x, [plain_label(t) for t in tasks], rotation=60, ha="right")
    ax.set(ylabel="AUC x 100", title=title)
    ax.axhline(50, color="0.7", lw=0.5)
    ax.legend(fontsize=7, ncols=2)
    fig.tight_layout()
    save_figure(fig, path)
