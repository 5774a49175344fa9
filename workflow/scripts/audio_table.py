"""Table 2 of the LSPC-new paper from records: AUC per tag, the average over tags, the
pooled mean (std) over all (tag, trial) pairs as the paper reports it and the paper's row
beside; the per-tag figure; the calibration table and reliability diagram; the training
times in their own table (audio_auc_time: they differ between runs, the AUC table must not)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import json
import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from kclf.repro.records import read_records  # noqa: E402
from kclf.repro.reports.auc import coverage_note, write_time_table  # noqa: E402
from kclf.repro.reports.calibration import reliability_figure, write_calibration_table  # noqa: E402
from kclf.repro.reports.tables import AVERAGE, save_figure, summarize, wide_table, write_table  # noqa: E402

POOLED = "AUC, all tags x trials"
PAPER = {"LSPC-new": "lspc_new", "LSPC": "lspc", "KLR": "klr"}
methods = list(snakemake.params.methods)
records = read_records(snakemake.input.records)
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
if snakemake.input.reference:
    ref = pd.read_csv(snakemake.input.reference[0]).set_index("row")
    ref = ref.rename(index={"auc": POOLED})
    for m, col in PAPER.items():
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

with open(snakemake.input.kernel_summary) as fh:
    ks = json.load(fh)
n_trials = auc["trial"].nunique()
caption = (
    f"{snakemake.params.dataset}: test AUC (%) per tag, mean (std) over {n_trials} trials; "
    f"'{AVERAGE}': mean over tags per trial, then over trials; '{POOLED}': mean (std) over all "
    "(tag, trial) pairs as in the LSPC-new paper's Table 2 (training times: audio_auc_time). "
    f"HMM kernel on {ks['n_clips']} clips "
    f"({ks['n_bad_clips']} left out), tau = {ks['tau']:.4g} ({ks['tau_rule']}), "
    f"negative eigenvalue mass clipped: {100 * ks['clipped_mass']:.2f}%."
)
expected = Path(snakemake.input.tags).read_text().split()
caption += coverage_note(records, expected, "tags")
dropped = [Path(line).name for line in Path(snakemake.input.dropped).read_text().splitlines()]
if dropped:
    caption += (
        f" {len(dropped)} clip(s) listed in the metadata but missing on disk were dropped "
        f"(missing_files: drop): {', '.join(dropped)}."
    )
bad = [line for line in Path(snakemake.input.bad).read_text().splitlines() if line.strip()]
if bad:
    caption += (
        f" Left out as undecodable or unusable (skip_bad): "
        f"{', '.join(Path(b.split(chr(9))[0]).name for b in bad)}."
    )
stem = str(snakemake.output.csv)[: -len(".csv")]
write_table(stem, summary, tables["md"], tables["tex"], caption)
name = snakemake.params.dataset
reference = snakemake.input.reference[0] if snakemake.input.reference else None
write_time_table(records, stem, methods, title=name, reference=reference)
write_calibration_table(records, stem)
reliability_figure(records, snakemake.output.reliability, title=f"{name}: reliability")

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
    for m, ls in zip(PAPER, ("-", "--", ":")):
        col = f"{PAPER[m]}_mean"
        if m in methods and col in ref and POOLED in ref.index:
            ax.axhline(
                ref.loc[POOLED, col],
                color="k",
                lw=0.8,
                ls=ls,
                label=f"{m}, paper (mean over 50 Freesound tags)",
            )
ax.set_xticks(x, tags, rotation=60, ha="right")
ax.set_ylabel("test AUC (%)")
ax.set_ylim(30, 100)
ax.axhline(50, color="0.6", lw=0.6, ls=":")
ax.set_title(f"{snakemake.params.dataset}: AUC per tag, mean (std) over {n_trials} trials")
ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
fig.tight_layout()
save_figure(fig, snakemake.output.figure)
logging.info("%d records, %d trials, %d tags", len(records), n_trials, len(tags))
