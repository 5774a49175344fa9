"""Tables and figures of the klogreg paper's multi-class comparison (Roth 2001, Table 1)
and of its Section 3 cost argument, from the records of
:mod:`kclf_workflow.experiments.multiclass`.

The error table (``<dataset>.{csv,md,tex}``) is the same bytes for the same config; the
seconds go to ``<dataset>_time.*`` (:func:`write_tables`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..files import atomic_write
from ..methods import family_methods
from .calibration import reliability_figure, write_calibration_table
from .figures import save_figure, subplots
from .palette import style
from .tables import (
    summarize,
    time_table,
    variant_note,
    wide_table,
    write_table,
    write_time_table,
)

METHODS = family_methods("multiclass")


def predicted_cost(c, per_class, strategy):
    """The paper's Section 3 counts: one-vs-rest ``c^3 N_c^2``, pairwise
    ``2 (c^2 - c) N_c^2`` (up to the same constant)."""
    c = np.asarray(c, dtype=float)
    if strategy == "ovr":
        return c**3 * per_class**2
    return 2.0 * (c**2 - c) * per_class**2


def cost_figure(df, path):
    """Measured seconds against c for both strategies, with the Section 3 predictions
    scaled to the measured largest-c point of each strategy (log-log axes), into
    ``path``."""
    fig, ax = subplots(figsize=(5.5, 4))
    # the two strategies in the styles of their methods (kLOGREG pairwise, one-vs-rest)
    looks = {s: style(key) for s, key in (("pairwise", "klr_pairwise"), ("ovr", "klr_ovr"))}
    labels = {"pairwise": "pairwise coupling", "ovr": "one-vs-rest"}
    formula = {"pairwise": r"$2(c^2-c)N_c^2$", "ovr": r"$c^3 N_c^2$"}
    per_class = int(df["per_class"].iloc[0])
    for strategy in ("pairwise", "ovr"):
        d = df[df["strategy"] == strategy].sort_values("c")
        if d.empty:
            continue
        look = looks[strategy]
        ax.plot(
            d["c"], d["seconds"], "-", marker=look.marker, color=look.color, label=labels[strategy]
        )
        pred = predicted_cost(d["c"].to_numpy(), per_class, strategy)
        scale = d["seconds"].iloc[-1] / pred[-1]
        ax.plot(
            d["c"],
            pred * scale,
            "--",
            color=look.color,
            label=f"predicted {formula[strategy]} (scaled)",
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    cs = sorted(df["c"].unique())
    ax.set_xticks(cs, [str(c) for c in cs])
    ax.minorticks_off()
    ax.set_xlabel("number of classes c")
    ax.set_ylabel("training time [s]")
    ax.set_title(f"kLOGREG training cost, $N_c$ = {per_class} per class")
    ax.legend(fontsize=8)
    return save_figure(fig, path)


#: metric -> (column label, scale, digits); lower is better for all
TABLE_METRICS = {
    "error": ("test error [%]", 100.0, 2),
    "log_loss": ("log loss", 1.0, 3),
}
#: the wall-clock records -> their column label, only in the ``*_time`` table (not
#: reproducible bytes)
TIME_METRICS = {
    "fit_seconds": "fit [s]",
    "search_seconds": "CV search + fit [s]",
}
PROTOCOL = {
    "digits": "scikit-learn's digits (8x8 images, 10 classes), seeded stratified {folds}-fold CV",
    "isolet1": "ISOLET's isolet1 part (1560 x 617, 26 letters; the mirror copy), seeded "
    "stratified {folds}-fold CV",
    "isolet": "ISOLET, the UCI split: isolet1-4 (6238) for training, isolet5 (1559) for testing",
}


def _paper_rows(reference):
    """The paper's ISOLET rows (Roth 2001, Table 1): ``{name: (error_pct, time)}``."""
    ref = reference[reference["dataset"] == "isolet"] if "dataset" in reference else reference
    if ref.empty:
        return {}
    r = ref.iloc[0]
    return {
        "paper ISOLET: SVM (SVM-Torch II)": (float(r["svm_error_pct"]), r["svm_time"]),
        "paper ISOLET: kLOGREG pairwise": (float(r["klogreg_error_pct"]), r["klogreg_time"]),
    }


def _protocol(dataset, folds, per_class, trials, source):
    """How the caption names the data set and its trials (see :func:`multiclass_table`)."""
    fixed = dataset == "isolet" or (source is not None and source["fixed"])
    if source is None:
        proto = PROTOCOL.get(dataset, dataset).format(folds=folds)
    else:
        split = "its train/test split" if fixed else f"seeded stratified {folds}-fold CV"
        proto = f"{source['text']}, {split}"
    if trials is not None and trials != folds and not fixed:
        proto += f" repeated: {trials} trials over {-(-trials // folds)} seeded partitions"
    if per_class is not None and not fixed and source is None:
        proto += f", at most {per_class} samples per class"
    return proto


def multiclass_table(records, reference, dataset, folds, per_class=None, trials=None, source=None):
    """Summary (csv) and the md / tex tables of one dataset: methods x (test error, log
    loss) (:data:`TABLE_METRICS`), mean (std) over trials, best per metric in bold; the
    paper's ISOLET rows below (none when ``reference`` is empty).  The same bytes for the
    same config: the seconds are in :func:`write_multiclass_time`'s table.

    ``source``: for the user's own data set, how the caption names it (``text``: its entry
    and files) and whether it is a fixed split (``fixed``); ``per_class`` does not apply.

    Returns ``(summary, md_table, tex_table, caption)``.
    """
    records = records[records["dataset"] == dataset]
    parts, md_cols, tex_cols = [], {}, {}
    for metric, (label, scale, digits) in TABLE_METRICS.items():
        if not (records["metric"] == metric).any():
            continue
        s = summarize(records, metric, row="dataset", higher_is_better=False, average=False)
        parts.append(s.assign(metric=metric))
        md_cols[label] = wide_table(s, row="dataset", scale=scale, digits=digits).iloc[0]
        tex_cols[label] = wide_table(
            s, row="dataset", scale=scale, digits=digits, markup="tex"
        ).iloc[0]
    if not parts:
        raise ValueError(f"no error records ({list(TABLE_METRICS)}) for dataset {dataset!r}")
    summary = pd.concat(parts, ignore_index=True)
    md = pd.DataFrame(md_cols).fillna("–")
    tex = pd.DataFrame(tex_cols).fillna("–")
    md.index = tex.index = [METHODS.get(m, m) for m in md.index]
    paper = _paper_rows(reference)
    for name, (error_pct, _) in paper.items():
        row = pd.Series({c: "–" for c in md.columns} | {"test error [%]": f"{error_pct:.2f}"})
        md.loc[name] = tex.loc[name] = row[md.columns]
        ref = {
            "dataset": "isolet",
            "method": name,
            "metric": "error",
            "mean": error_pct / 100.0,
            "std": float("nan"),
            "n": 1,
            "best": False,
            "tied": False,
        }
        summary = pd.concat([summary, pd.DataFrame([ref])], ignore_index=True)
    md.index.name = tex.index.name = "method"
    caption = (
        f"Multi-class comparison on {_protocol(dataset, folds, per_class, trials, source)}: "
        "mean (std) over trials of the test error and the log loss of the probabilistic "
        "methods; sigma and lambda (C) chosen by CV on each training part. Seconds: the "
        "_time table."
        + (" The paper's ISOLET row (Roth 2001, Table 1) is shown for reference." * bool(paper))
        + variant_note(records)
    )
    return summary, md, tex, caption


def write_multiclass_time(
    records, reference, dataset, folds, per_class, stem, trials=None, source=None
):
    """``<stem>_time.{csv,md,tex}`` (:func:`kclf_workflow.reports.tables.write_time_table`):
    per method the mean (std) over trials of the seconds of the final fit and of the whole
    CV search, the paper's ISOLET times below."""
    records = records[records["dataset"] == dataset]
    timed = records[records["metric"].isin(list(TIME_METRICS))]
    if timed.empty:
        raise ValueError(f"no time records ({list(TIME_METRICS)}) for dataset {dataset!r}")
    per_trial = timed.pivot_table(index=["method", "trial"], columns="metric", values="value")
    table = time_table(per_trial.reset_index(), list(TIME_METRICS), [*METHODS, *timed["method"]])
    paper = _paper_rows(reference)
    rows = [(name, {"fit [s]": f"{t} (500 MHz PC)"}) for name, (_, t) in paper.items()]
    caption = (
        f"Training time on {_protocol(dataset, folds, per_class, trials, source)}: mean "
        "(std) over trials of the seconds of the final fit and of the whole CV search "
        "(this machine, one core)"
        + (
            "; the paper's ISOLET times (Roth 2001, Table 1) were measured on a 500 MHz PC."
            if paper
            else "."
        )
    )
    return write_time_table(stem, table, TIME_METRICS, caption, names=METHODS, rows=rows, tex=True)


def calibration_caption(dataset):
    return (
        f"Probability quality on the test parts of {dataset} (mean ± std over trials): "
        "multi-class log loss (nats, probabilities clipped to 1e-15 first), Brier score "
        "summed over classes (in [0, 2]) and the ECE of the top-label confidence over "
        "equal-width and equal-mass bins. SVC (one-vs-one) gives no probabilities and is "
        "left out."
    )


def write_tables(
    records, reference, dataset, folds, per_class, stem, reliability=None, trials=None, source=None
):
    """Write the tables of one dataset from its records.

    ``<stem>.{csv,md,tex}`` (error, log loss), ``<stem>_time.{csv,md,tex}`` (seconds),
    ``<stem>_calibration.{csv,md}``
    (:func:`kclf_workflow.reports.calibration.write_calibration_table`,
    one row per probabilistic method under its display name of :data:`METHODS`, the md
    with a caption) and, if ``reliability`` is a path, the reliability diagram (one
    panel per probabilistic method).

    ``source``: the user's data set (:func:`multiclass_table`).  Returns the error table's
    md (for the log).
    """
    stem = Path(stem)
    records = records[records["dataset"] == dataset]
    summary, md, tex, caption = multiclass_table(
        records, reference, dataset, folds, per_class, trials=trials, source=source
    )
    write_table(stem, summary, md, tex, caption)
    write_multiclass_time(records, reference, dataset, folds, per_class, stem, trials, source)
    named = records.assign(method=records["method"].map(lambda m: METHODS.get(m, m)))
    _, md_path = write_calibration_table(named, stem)
    named_as = dataset if source is None else source["text"]
    text = f"{calibration_caption(named_as)}\n\n{md_path.read_text(encoding='utf-8')}"
    atomic_write(md_path, lambda p: Path(p).write_text(text, encoding="utf-8"))
    if reliability is not None:
        reliability_figure(named, reliability, title=f"{dataset}: reliability (top label)")
    return md
