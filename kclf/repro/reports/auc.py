"""The AUC table of a multi-task experiment beside the paper's (LSPC-new paper, Tables 1-2),
its per-task figure, its calibration companions, and its training times.

Wall-clock times differ from run to run, so they are never put in the AUC table (whose
files are byte-identical for the same config) but in ``<stem>_time.{csv,md}``
(:func:`write_time_table`)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from ..datasets.audio_collections import read_tag_file  # noqa: E402
from ..methods import family_methods  # noqa: E402
from ..readers import load_json, read_text  # noqa: E402
from ..records import read_records, records_source  # noqa: E402
from .calibration import reliability_figure, write_calibration_table  # noqa: E402
from .tables import (  # noqa: E402
    AVERAGE,
    plain_label,
    save_figure,
    summarize,
    variant_note,
    wide_table,
    write_table,
)
from .tables import time_table as _time_table  # noqa: E402
from .tables import write_time_table as _write_time_table  # noqa: E402

#: table order of the methods (display names)
ORDER = list(family_methods("auc").values())
#: display name -> the column stem of the paper's table (which has no SVC)
PAPER_COLUMNS = {name: slug for slug, name in family_methods("auc").items() if slug != "svc"}
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


def time_table(records, methods, reference=None):
    """Training seconds per method from the ``auc`` records' ``fit_seconds``.

    Columns: ``method``, ``n_trials``, ``trial_seconds_mean`` / ``_std`` (one trial's fit
    of all tasks: the sum of its tasks' shares, CV included; std over trials),
    ``task_seconds_mean`` (mean per-task share) and, with a ``reference`` holding a
    ``train_time_s`` row, ``paper_seconds``.
    """
    auc = records[records["metric"] == "auc"]
    per_trial = auc.groupby(["method", "trial"], as_index=False)["fit_seconds"].sum()
    table = _time_table(
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


def write_time_table(records, stem, methods, *, title, reference=None):
    """Write :func:`time_table` to ``<stem>_time.csv`` and ``<stem>_time.md``."""
    table = time_table(records, methods, reference)
    columns = {"s per task": [f"{v:.3g}" for v in table["task_seconds_mean"]]}
    caption = (
        f"{title}: wall-clock training seconds (CV included), per trial for one fit of all "
        "tasks, mean (std) over trials, and per task (a multi-task fit's time shared equally "
        "by its tasks); machine- and load-dependent, hence kept out of the AUC table."
    )
    if "paper_seconds" in table:
        columns["paper s"] = ["–" if pd.isna(v) else f"{v:g}" for v in table["paper_seconds"]]
        caption += " Paper: the published training time."
    return _write_time_table(
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
    write_time_table(records, stem, methods, title=title, reference=reference)
    if reliability is not None:
        reliability_figure(records, reliability, title=f"{title}: reliability")
    _figure(summary, figure, methods, title, read_reference(reference) if reference else None)
    return Path(stem)


def _figure(summary, path, methods, title, ref):
    tasks = [t for t in dict.fromkeys(summary["task"]) if t != AVERAGE]
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(tasks) + 2), 4))
    x = np.arange(len(tasks))
    width = 0.8 / max(len(methods), 1)
    for i, m in enumerate(methods):
        s = summary[summary["method"] == m].set_index("task")
        mean = [100 * s["mean"].get(t, np.nan) for t in tasks]
        std = [100 * s["std"].get(t, np.nan) for t in tasks]
        pos = x - 0.4 + width * (i + 0.5)
        ax.errorbar(pos, mean, yerr=std, fmt="o", ms=4, capsize=2, label=m, color=f"C{i}")
        if ref is not None and m in PAPER_COLUMNS:
            col = f"{PAPER_COLUMNS[m]}_mean"
            paper = [ref[col].get(str(t).lower(), np.nan) if col in ref else np.nan for t in tasks]
            ax.plot(
                pos,
                paper,
                "x",
                color=f"C{i}",
                ms=6,
                label=f"{m} (paper)" if i < len(PAPER_COLUMNS) else None,
            )
    ax.set_xticks(x, [plain_label(t) for t in tasks], rotation=60, ha="right")
    ax.set(ylabel="AUC x 100", title=title)
    ax.axhline(50, color="0.7", lw=0.5)
    ax.legend(fontsize=7, ncols=2)
    fig.tight_layout()
    save_figure(fig, path)


#: the pooled row of the audio table: mean (std) over all (tag, trial) pairs
POOLED = "AUC, all tags x trials"


def chosen_tau_note(auc, methods, tau, factors):
    """Caption sentence of a width search: the grid (factors of the median ``tau``) and,
    per method, the chosen widths' factors (median and range over tags and trials); the
    LSPC-new variant is named by :func:`kclf.repro.reports.tables.variant_note`."""
    parts = []
    for m in methods:
        params = [json.loads(p) for p in auc.loc[auc["method"] == m, "params"]]
        f = np.array([p["tau"] / tau for p in params if "tau" in p])
        if f.size:
            parts.append(f"{m} {np.median(f):.3g} ({f.min():.3g}-{f.max():.3g})")
    note = (
        f" The width is searched jointly with lambda (SVC: C) on the same folds over tau = "
        f"median x {', '.join(f'{v:g}' for v in factors)} (audio.kernel.tau_factors), "
        "the kernel PSD-projected per tau; chosen tau / median (median, range over tags "
        f"and trials): {'; '.join(parts) if parts else 'none recorded'}."
    )
    return note


def write_audio_report(
    records,
    stem,
    *,
    dataset,
    methods,
    kernel_summary,
    tags_file,
    dropped_file,
    bad_file,
    figure,
    reliability,
    reference=None,
):
    """Table 2 of the LSPC-new paper from the audio records: AUC per tag, the average over
    tags, the pooled mean (std) over all (tag, trial) pairs as the paper reports it and the
    paper's row beside (``<stem>.{csv,md,tex}``); the per-tag figure; the calibration table
    and reliability diagram; the training times in ``<stem>_time`` (they differ between
    runs, the AUC table must not).  The caption describes the HMM kernel
    (``kernel_summary``) and names the clips left out (``dropped_file``, ``bad_file``)."""
    methods = list(methods)
    dataset = records_source(records, dataset)
    auc = records[records["metric"] == "auc"]
    summary = summarize(records, "auc", row="task")
    tags = sorted(auc["task"].unique(), key=lambda t: (-auc[auc["task"] == t]["value"].size, t))
    order = tags + [AVERAGE]
    summary["task"] = pd.Categorical(summary["task"], order, ordered=True)
    summary = summary.sort_values(["task", "method"]).reset_index(drop=True)
    summary["task"] = summary["task"].astype(str)
    tables = {m: wide_table(summary, "task", methods, 100.0, 1, m) for m in ("md", "tex")}

    pooled = auc.groupby("method")["value"]
    stats = {m: (pooled.mean()[m], pooled.std(ddof=1)[m], pooled.size()[m]) for m in methods}
    for t in tables.values():
        t.loc[POOLED] = [
            f"{100 * stats[m][0]:.1f} ({100 * np.nan_to_num(stats[m][1]):.1f})" for m in methods
        ]
    extra = [
        {
            "task": POOLED,
            "method": m,
            "mean": stats[m][0],
            "std": stats[m][1],
            "n": int(stats[m][2]),
            "best": False,
            "tied": False,
        }
        for m in methods
    ]
    summary = pd.concat([summary, pd.DataFrame(extra)], ignore_index=True)

    ref = None
    if reference is not None:
        ref = pd.read_csv(reference).set_index("row")
        ref = ref.rename(index={"auc": POOLED})
        for m, col in PAPER_COLUMNS.items():
            if f"{col}_mean" not in ref:
                continue
            cells = {
                r: f"{mu:g}" + ("" if pd.isna(sd) else f" ({sd:g})")
                for r, mu, sd in zip(ref.index, ref[f"{col}_mean"], ref[f"{col}_std"])
            }
            for t in tables.values():
                t[f"paper {m}"] = [cells.get(r, "–") for r in t.index]
            for r in ref.index.intersection(list(tables["md"].index)):
                sel = (summary["task"] == r) & (summary["method"] == m)
                summary.loc[sel, "paper_mean"] = ref.loc[r, f"{col}_mean"]
                summary.loc[sel, "paper_std"] = ref.loc[r, f"{col}_std"]

    ks = load_json(kernel_summary, "kernel summary")
    n_trials = auc["trial"].nunique()
    caption = (
        f"{dataset}: test AUC (%) per tag, mean (std) over {n_trials} trials; "
        f"'{AVERAGE}': mean over tags per trial, then over trials; '{POOLED}': mean (std) over all "
        "(tag, trial) pairs as in the LSPC-new paper's Table 2 (training times: audio_auc_time). "
        f"HMM kernel on {ks['n_clips']} clips "
        f"({ks['n_bad_clips']} left out), tau = {ks['tau']:.4g} ({ks['tau_rule']}), "
        f"negative eigenvalue mass clipped: {100 * ks['clipped_mass']:.2f}%."
    )
    if "taus" in ks:
        caption += chosen_tau_note(auc, methods, ks["tau"], ks["tau_factors"])
    if "landmarks" in ks:
        caption += (
            f" Landmark kernel: {ks['landmarks']} landmark clips (audio.kernel.landmarks), "
            f"Nystroem features of rank {ks['rank']} (the clipped mass is that of the "
            "landmarks' own kernel)."
        )
    tag_file = read_tag_file(tags_file)
    caption += coverage_note(records, tag_file["tags"], "tags")
    caption += variant_note(records)
    if tag_file["left_out"]:
        caption += (
            " No task of their own, left out: "
            + "; ".join(f"{t!r} ({why})" for t, why in tag_file["left_out"].items())
            + "."
        )
    dropped = [Path(line).name for line in read_text(dropped_file, "list").splitlines()]
    if dropped:
        caption += (
            f" {len(dropped)} clip(s) listed in the metadata but missing on disk were dropped "
            f"(missing_files: drop): {', '.join(dropped)}."
        )
    bad = [line for line in read_text(bad_file, "list").splitlines() if line.strip()]
    if bad:
        caption += (
            f" Left out as undecodable or unusable (skip_bad): "
            f"{', '.join(Path(b.split(chr(9))[0]).name for b in bad)}."
        )

    write_table(stem, summary, tables["md"], tables["tex"], caption)
    name = dataset
    write_time_table(records, stem, methods, title=name, reference=reference)
    write_calibration_table(records, stem)
    reliability_figure(records, reliability, title=f"{name}: reliability")

    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(tags) + 2) + 3, 4.2))
    width = 0.8 / len(methods)
    x = np.arange(len(tags))
    for k, m in enumerate(methods):
        s = summary[summary["method"] == m].set_index("task")
        ax.bar(
            x + (k - (len(methods) - 1) / 2) * width,
            100 * s.reindex(tags)["mean"],
            width,
            yerr=100 * s.reindex(tags)["std"].fillna(0),
            label=m,
            alpha=0.8,
            capsize=1.5,
        )
    if ref is not None:
        for m, ls in zip(PAPER_COLUMNS, ("-", "--", ":")):
            col = f"{PAPER_COLUMNS[m]}_mean"
            if m in methods and col in ref and POOLED in ref.index:
                ax.axhline(
                    ref.loc[POOLED, col],
                    color="k",
                    lw=0.8,
                    ls=ls,
                    label=f"{m}, paper (mean over 50 Freesound tags)",
                )
    ax.set_xticks(x, [plain_label(t) for t in tags], rotation=60, ha="right")
    ax.set_ylabel("test AUC (%)")
    ax.set_ylim(30, 100)
    ax.axhline(50, color="0.6", lw=0.6, ls=":")
    ax.set_title(f"{dataset}: AUC per tag, mean (std) over {n_trials} trials")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    save_figure(fig, figure)
    logger.info("%d records, %d trials, %d tags", len(records), n_trials, len(tags))
