"""The audio-tagging report (LSPC-new paper, Table 2): AUC per tag beside the paper's
row, the pooled mean over all (tag, trial) pairs as the paper reports it, the per-tag
figure, the calibration companions and the training times, from the records of the
multi-task AUC experiment on the HMM kernel."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from ..datasets.audio_collections import read_tag_file
from ..readers import load_json, read_text
from ..records import records_source
from .auc import PAPER_COLUMNS, coverage_note, write_auc_time
from .calibration import reliability_figure, write_calibration_table
from .figures import save_figure, subplots
from .palette import style
from .tables import AVERAGE, plain_label, summarize, variant_note, wide_table, write_table

logger = logging.getLogger(__name__)

#: the pooled row of the audio table: mean (std) over all (tag, trial) pairs
POOLED = "AUC, all tags x trials"


def chosen_tau_note(auc, methods, tau, factors):
    """Caption sentence of a width search: the grid (factors of the median ``tau``) and,
    per method, the chosen widths' factors (median and range over tags and trials); the
    LSPC-new variant is named by :func:`kclf_workflow.reports.tables.variant_note`."""
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
    write_auc_time(records, stem, methods, title=name, reference=reference)
    write_calibration_table(records, stem)
    reliability_figure(records, reliability, title=f"{name}: reliability")

    fig, ax = subplots(figsize=(max(6, 0.45 * len(tags) + 2) + 3, 4.2))
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
            color=style(m).color,
            alpha=0.8,
            capsize=1.5,
        )
    if ref is not None:
        for m, ls in zip(PAPER_COLUMNS, ("-", "--", ":")):
            col = f"{PAPER_COLUMNS[m]}_mean"
            if m in methods and col in ref and POOLED in ref.index:
                ax.axhline(
                    ref.loc[POOLED, col],
                    color=style(m).color,
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
