"""Tables and figures of the CorrLog paper's multilabel experiments, from the records of
:mod:`kclf_workflow.experiments.multilabel`: the label-set table (metrics x methods), its
calibration companions, the training-time table and the toy example's Fig. 1."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from kclf.metrics import MULTILABEL_METRICS

from ..experiments.multilabel import (
    ALSO_MAP,
    ALSO_MARGINAL,
    MAP_SUFFIX,
    MARGINAL_SUFFIX,
)
from ..methods import family_methods
from .calibration import reliability_figure, write_calibration_table
from .figures import save_figure, subplots
from .tables import summarize, time_table, wide_table, write_time_table
from .tables import write_table as _write

METHODS = family_methods("multilabel")

METRIC_NAMES = {
    "hamming_loss": "Hamming loss",
    "subset_accuracy": "Subset accuracy",
    "example_accuracy": "Example accuracy",
    "example_precision": "Example precision",
    "example_recall": "Example recall",
    "example_f1": "Example F1",
    "micro_f1": "Micro F1",
    "macro_f1": "Macro F1",
}
METRIC_NAMES.update({m + MAP_SUFFIX: f"{METRIC_NAMES[m]} (MAP)" for m in ALSO_MAP})
METRIC_NAMES.update({m + MARGINAL_SUFFIX: f"{METRIC_NAMES[m]} (marginals)" for m in ALSO_MARGINAL})


def decoder_caption(records):
    """The caption's sentences on which decoder each row scores and on belief
    propagation's non-converged rows (from the ``bp_nonconverged`` records)."""
    text = (
        "CorrLog and ILR: subset accuracy scores the joint MAP label vector (its Bayes "
        "decision); Hamming loss each label's marginal thresholded at 1/2 (its Bayes "
        "decision); example F1, precision and recall the label vector of largest expected "
        "example F1 under the fitted joint model (GFM, the Bayes decision for example F1); "
        "example accuracy and micro / macro F1 the thresholded marginals, though neither "
        "decoder is their Bayes decision. The rows marked (MAP) score the F-type measures "
        "on the joint MAP and those marked (marginals) the example F1, precision and recall "
        "on the thresholded marginals (CorrLog and ILR only; for ILR, whose labels are "
        "independent, the MAP and the thresholded marginals coincide). The other methods "
        "have one prediction, scored in every unmarked row."
    )
    bp = records[records["metric"] == "bp_nonconverged"]
    if bp.empty:
        return text
    decoder = bp["params"].map(lambda p: json.loads(p)["decoder"])
    bp_rows = bp["params"].map(lambda p: json.loads(p)["bp_rows"])
    parts = []
    for key, name in (("map", "max-product (MAP)"), ("marginal", "sum-product (marginals)")):
        sel = decoder == key
        if bp_rows[sel].sum():
            n_bad, n_rows = int(bp["value"][sel].sum()), int(bp_rows[sel].sum())
            parts.append(f"{n_bad} of {n_rows} decoded test rows for {name}")
    if parts:
        text += (
            " CorrLog's belief propagation did not converge, even with the damped retry, on "
            + " and ".join(parts)
            + " (all trials); such rows keep their last beliefs, the MAP's finished by "
            "local search."
        )
    return text


def write_table(records, dataset, csv_path):
    """``multilabel_<dataset>.{csv,md,tex}``: metrics x methods, mean (std) in %."""
    parts = []
    metrics = dict(MULTILABEL_METRICS)
    metrics.update({m + MAP_SUFFIX: MULTILABEL_METRICS[m] for m in ALSO_MAP})
    metrics.update({m + MARGINAL_SUFFIX: MULTILABEL_METRICS[m] for m in ALSO_MARGINAL})
    for metric, higher in metrics.items():
        extra = metric.endswith(MAP_SUFFIX) or metric.endswith(MARGINAL_SUFFIX)
        if extra and not (records["metric"] == metric).any():
            continue  # no CorrLog or ILR in this table
        s = summarize(records, metric, row="dataset", higher_is_better=higher, average=False)
        s["task"] = METRIC_NAMES[metric]
        parts.append(s)
    summary = pd.concat(parts, ignore_index=True)
    summary["method"] = summary["method"].map(lambda m: METHODS.get(m, m))
    methods = [METHODS[m] for m in METHODS if METHODS[m] in set(summary["method"])]
    md = wide_table(summary, row="task", methods=methods, scale=100, markup="md")
    tex = wide_table(summary, row="task", methods=methods, scale=100, markup="tex")
    n = int(records["trial"].nunique())
    caption = f"Multilabel classification on {dataset} (%, mean (std) over {n} trial(s)). "
    caption += decoder_caption(records)
    if n == 1:
        caption += " One split only: the 'not significantly worse' marks carry no information."
    return _write(str(csv_path)[: -len(".csv")], summary, md, tex, caption)


def _display(records):
    records = records.copy()
    records["method"] = records["method"].map(lambda m: METHODS.get(m, m))
    return records


def write_calibration(records, dataset, stem, reliability=None):
    """``<stem>_calibration.{csv,md}`` (one row per method: log loss, Brier, ECE of the
    per-label probabilities, mean (std) over trials of the mean over labels) and, when
    ``reliability`` is a path, the reliability diagram pooled over labels and trials."""
    records = _display(records)
    paths = write_calibration_table(records, stem)
    if reliability is not None:
        title = f"Multilabel {dataset}: per-label probabilities"
        reliability_figure(records, reliability, title=title)
    return paths


def multilabel_time_table(records):
    """Seconds per trial (one fit of all labels with its CV) per method: ``dataset``,
    ``method`` (display name), ``n_trials``, ``seconds_mean``, ``seconds_std``."""
    sel = records[records["metric"] == "subset_accuracy"]  # one row per (method, trial)
    per_trial = sel.groupby(["method", "trial"], sort=False, as_index=False)["fit_seconds"].first()
    table = time_table(
        per_trial.rename(columns={"fit_seconds": "seconds"}),
        ["seconds"],
        [*METHODS, *per_trial["method"]],
    )
    table.insert(
        0,
        "dataset",
        sel.groupby("method", sort=False)["dataset"].first()[table["method"]].to_numpy(),
    )
    table["method"] = table["method"].map(lambda m: METHODS.get(m, m))
    return table


def write_multilabel_time(records, dataset, stem):
    """``<stem>_time.{csv,md}``: wall-clock training seconds, kept out of the main table
    (timings differ between runs; every other table is byte-identical across runs)."""
    caption = (
        f"Multilabel {dataset}: wall-clock training seconds per trial (all labels, CV "
        "included), mean (std) over trials; machine- and load-dependent."
    )
    return write_time_table(stem, multilabel_time_table(records), {"seconds": "seconds"}, caption)


LABEL_PAIRS = {(1, 1): "++", (1, 0): "+-", (0, 1): "-+", (0, 0): "--"}


def toy_figure(X, Y_true, Y_ilr, Y_corrlog, shift, path):
    """Fig. 1 of the paper: the test points coloured by label pair, truth / ILR / CorrLog."""
    colours = {"++": "tab:red", "+-": "tab:orange", "-+": "tab:blue", "--": "tab:green"}
    fig, axes = subplots(1, 3, figsize=(12, 4.2), sharex=True, sharey=True)
    panels = [("(a) true labels", Y_true), ("(b) ILR", Y_ilr), ("(c) CorrLog", Y_corrlog)]
    t = np.linspace(0, 2 * np.pi, 200)
    for ax, (title, Y) in zip(axes, panels):
        for pair, name in LABEL_PAIRS.items():
            sel = (Y[:, 0] == pair[0]) & (Y[:, 1] == pair[1])
            ax.scatter(*X[sel].T, s=4, c=colours[name], label=name)
        ax.plot(np.cos(t), np.sin(t), "k-", lw=0.5)
        ax.plot([0, 0], [-1, 1], "k--", lw=1)
        ax.plot([0, 1], [-shift, -shift], "k-", lw=1)
        ax.plot([-1, 0], [shift, shift], "k-", lw=1)
        acc = np.mean(np.all(Y == Y_true, axis=1))
        ax.set_title(f"{title}" + ("" if Y is Y_true else f" - subset acc. {acc:.3f}"))
        ax.set_aspect("equal")
    axes[0].legend(title="(y1, y2)", loc="lower left", fontsize=8, markerscale=3)
    fig.tight_layout()
    save_figure(fig, path)
    return path
