"""Table 1 of the LSPC-new paper from records (VOC, and MULAN scene with the same layout):
AUC mean (std) per class, Average row, training-time row, the paper's figures side by side
when a reference is given; and the per-class figure."""

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from kclf.records import read_records  # noqa: E402
from kclf.reporting import AVERAGE, save_figure, summarize, wide_table, write_table  # noqa: E402

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
TIME = "train time (s)"
PAPER = {"LSPC-new": "lspc_new", "LSPC": "lspc", "KLR": "klr"}
methods = list(snakemake.params.methods)
records = read_records(snakemake.input.records)
summary = summarize(records, "auc", row="task")
order = list(dict.fromkeys(records["task"])) + [AVERAGE]
summary["task"] = pd.Categorical(summary["task"], order, ordered=True)
summary = summary.sort_values(["task", "method"]).reset_index(drop=True)
summary["task"] = summary["task"].astype(str)
tables = {m: wide_table(summary, "task", methods, 100.0, 1, m) for m in ("md", "tex")}

# training time: the whole multi-task fit (CV search over sigma x lambda for all classes,
# then the final fits) of one trial; records share it equally among the classes
auc = records[records["metric"] == "auc"]
per_trial = auc.groupby(["method", "trial"])["fit_seconds"].sum()
times = {
    m: (per_trial[m].mean(), per_trial[m].std(ddof=1) if per_trial[m].size > 1 else 0.0)
    for m in methods
}
for t in tables.values():
    t.loc[TIME] = [f"{times[m][0]:.3f} ({times[m][1]:.3f})" for m in methods]
time_rows = pd.DataFrame(
    [
        {
            "task": TIME,
            "method": m,
            "mean": times[m][0],
            "std": times[m][1],
            "n": int(per_trial[m].size),
            "best": False,
            "tied": False,
        }
        for m in methods
    ]
)
summary = pd.concat([summary, time_rows], ignore_index=True)

ref = None
if snakemake.input.reference:
    ref = pd.read_csv(snakemake.input.reference[0]).set_index("class")
    ref = ref.rename(index={"average": AVERAGE, "train_time_s": TIME})
    lookup = {}
    for m, col in PAPER.items():
        if f"{col}_mean" not in ref:
            continue
        mean, std = ref[f"{col}_mean"], ref[f"{col}_std"]
        cells = [f"{mu:.1f}" + ("" if pd.isna(sd) else f" ({sd:.1f})") for mu, sd in zip(mean, std)]
        for t in tables.values():
            t[f"paper {m}"] = [dict(zip(ref.index, cells)).get(r, "–") for r in t.index]
        lookup.update({(r, m): (mu, sd) for r, mu, sd in zip(ref.index, mean, std)})
    summary["paper_mean"] = [
        lookup.get((r, m), (np.nan, np.nan))[0] for r, m in zip(summary["task"], summary["method"])
    ]
    summary["paper_std"] = [
        lookup.get((r, m), (np.nan, np.nan))[1] for r, m in zip(summary["task"], summary["method"])
    ]

n_trials = records["trial"].nunique()
caption = (
    f"{snakemake.params.caption} {n_trials} trials. Training time = seconds per trial for "
    "all tasks, CV search included (the paper times the final training only)."
)
write_table(
    str(snakemake.output.csv)[: -len(".csv")], summary, tables["md"], tables["tex"], caption
)

# figure: per-class AUC, ours (bars, std whiskers) and the paper's (markers)
classes = [c for c in order if c != AVERAGE]
fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(classes) + 4), 4.2))
width = 0.8 / len(methods)
x = np.arange(len(classes))
for k, m in enumerate(methods):
    s = summary[(summary["method"] == m)].set_index("task")
    ax.bar(
        x + (k - (len(methods) - 1) / 2) * width,
        100 * s.loc[classes, "mean"],
        width,
        yerr=100 * s.loc[classes, "std"],
        label=f"{m} (ours)",
        alpha=0.8,
        capsize=1.5,
    )
if ref is not None:
    for m, marker in zip(PAPER, "ovs"):
        col = f"{PAPER[m]}_mean"
        if m in methods and col in ref:
            ax.plot(
                x,
                [ref[col].get(c, np.nan) for c in classes],
                marker,
                mfc="none",
                mec="k",
                ls="none",
                label=f"{m} (paper, VOC2010)",
            )
ax.set_xticks(x, classes, rotation=60, ha="right")
ax.set_ylabel("test AUC (%)")
ax.set_ylim(30, 100)
ax.axhline(50, color="0.6", lw=0.6, ls=":")
ax.set_title(f"{snakemake.params.dataset}: AUC per class, mean (std) over {n_trials} trials")
ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
fig.tight_layout()
save_figure(fig, snakemake.output.figure)
logging.info("%d records, %d trials", len(records), n_trials)
