"""Tables (FN/FP/CE), ROC curves, the ridge error-vs-lambda figure and the probability
quality (calibration table, reliability diagram) of the MGPC experiment."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import roc_curve

from ..methods import family_methods
from ..readers import load_npz, reading
from ..records import atomic_write, read_records
from .calibration import reliability_figure, write_calibration_table
from .figures import save_figure, subplots
from .palette import style
from .tables import summarize, wide_table, write_table

METHODS = family_methods("mgpc")
ORDER = list(METHODS.values())
METRICS = {"fn": "FN %", "fp": "FP %", "ce": "CE %", "auc": "AUC %"}
FPR_GRID = np.linspace(0.0, 1.0, 201)
PAPER_ROWS = {
    "newton_mle_gradient_features": "Newton-MLE, gradient field",
    "newton_mle_gabor_features": "Newton-MLE, Gabor",
    "newton_mle_binarization_features": "Newton-MLE, binarization",
    "mgpc_laplace": "MGPC MLA",
    "mgpc_ep": "MGPC MEP",
}


def curve_key(path):
    """``(dataset-representation, task, method)`` of ``<dataset>/<task>/<repr>/<method>.npz``
    or of one chunk of its trials, ``<method>_<first>-<last>.npz``."""
    p = Path(path)
    return f"{p.parts[-4]}-{p.parts[-2]}", p.parts[-3], re.sub(r"_\d+-\d+$", "", p.stem)


def _summaries(records):
    records = records.copy()
    records["row"] = records["dataset"] + " " + records["task"]
    out = []
    for metric in METRICS:
        s = summarize(records, metric, row="row", higher_is_better=metric == "auc", average=False)
        s.insert(0, "metric", metric)
        out.append(s)
    return pd.concat(out, ignore_index=True)


def _wide(summary, markup):
    """Rows ``(dataset-repr task, method)``, columns FN/FP/CE/AUC as ``mean (std)`` in %."""
    blocks = []
    for metric, label in METRICS.items():
        s = summary[summary["metric"] == metric]
        w = wide_table(s, "row", [m for m in ORDER if m in set(s["method"])], 100.0, 1, markup)
        blocks.append(w.stack().rename(label))
    table = pd.concat(blocks, axis=1)
    table.index = pd.Index([f"{r}: {m}" for r, m in table.index], name="task: method")
    return table


def paper_table(reference_csv):
    """The paper's Tables 1-2 (FN/FP/CE %) with readable row names."""
    ref = pd.read_csv(reference_csv).set_index("method")
    ref.index = [PAPER_ROWS.get(m, m) for m in ref.index]
    ref.index.name = "paper (2042 defect images, 15 splits)"
    return ref.rename(columns={"fn_pct": "FN %", "fp_pct": "FP %", "ce_pct": "CE %"})


def skipped_methods(curve_files):
    """``{display name: reason}`` of the methods whose fits were skipped (a curves file
    holding ``skipped``: GPy EP without GPy)."""
    out = {}
    for f in curve_files:
        with reading(f, "curves archive"), np.load(f) as z:
            skipped = str(z["skipped"]) if "skipped" in z else None
        if skipped is not None:
            out[METHODS.get(curve_key(f)[2], curve_key(f)[2])] = skipped
    return out


def write_tables(record_files, reference_csv, stem, user=(), skipped=None):
    """``<stem>.csv`` (numeric summary), ``<stem>.md`` / ``.tex`` (ours, then the paper's,
    when ``reference_csv`` is given).  ``user``: the user's own data sets among the rows
    (config ``datasets:``), name -> how the caption names them; ``skipped``: display name
    -> why that configured method did not run (:func:`skipped_methods`), said in the
    caption."""
    records = read_records(record_files)
    summary = _summaries(records)
    md_t, tex_t = _wide(summary, "md"), _wide(summary, "tex")
    n = records["trial"].nunique()
    user = dict(user or {})
    names = {d.rsplit("-", 1)[0] for d in records["dataset"]}  # "<dataset>-<representation>"
    data = "your data" if names <= set(user) else "public images"
    caption = (
        f"MGPC experiment (Fradi et al., Sec. 4) on {data}: test error rates in %, "
        f"mean (std) over {n} random training/test splits; FN among positives, FP among "
        "negatives, CE overall; AUC of the test scores. Hyper-parameters: MLA/MEP by the "
        "approximate marginal likelihood, ridge lambda by CV on the training half, sklearn "
        "GPC (Laplace) by its marginal likelihood optimiser, GPy EP by GPy's own optimiser "
        "(EP alternated with the kernel's variance and length scale)."
        + (f" Your own data sets (config datasets:): {'; '.join(user.values())}." if user else "")
        + "".join(f" Not run: {m}: {why}." for m, why in (skipped or {}).items())
    )
    write_table(stem, summary, md_t, tex_t, caption)
    if reference_csv is None:
        return summary
    paper = paper_table(reference_csv)
    md = Path(f"{stem}.md")
    text = md.read_text() + (
        "\nFor context, the paper's Tables 1-2 (defect images, not public; not comparable "
        "task by task):\n\n" + paper.to_markdown() + "\n"
    )
    atomic_write(md, lambda p: Path(p).write_text(text))
    return summary


CALIBRATION_CAPTION = (
    "MGPC experiment: quality of the test-set probabilities per task (dataset-representation "
    "and task) and method, mean ± std over the random splits (log loss in nats, Brier score, "
    "ECE over equal-width and equal-mass bins; 'clipped': predictions of exactly 0 or 1, "
    "clipped to 1e-15 before the log loss). MLA: the logistic-Gaussian integral of the "
    "Laplace posterior (erf mixture); MEP: Phi(mu / sqrt(1 + s2)), Eq. 8; ridge baselines: "
    "sigmoid(x'beta); sklearn GPC: its own predict_proba (Laplace, probit approximation)."
)


def calibration_report(record_files, calibration_csv, reliability=None):
    """``<stem>_calibration.{csv,md}`` with one row per (dataset-representation, task,
    method), the Markdown opening with :data:`CALIBRATION_CAPTION`, and, if
    ``reliability`` is a path, the reliability diagram (one panel per method, all tasks and
    splits pooled).  ``calibration_csv`` is the CSV's path (``<stem>_calibration.csv``)."""
    path = str(calibration_csv)
    if not path.endswith("_calibration.csv"):
        raise ValueError(f"calibration_csv must end with '_calibration.csv', got {path!r}")
    records = read_records(record_files)
    csv_path, md_path = write_calibration_table(
        records, path.removesuffix("_calibration.csv"), by=("dataset", "task", "method")
    )
    text = f"{CALIBRATION_CAPTION}\n\n" + md_path.read_text(encoding="utf-8")
    atomic_write(md_path, lambda p: Path(p).write_text(text, encoding="utf-8"))
    if reliability is not None:
        reliability_figure(records, reliability, title="MGPC: reliability", ncols=5)
    return csv_path, md_path


def mean_roc(pairs):
    """Vertical average of per-trial ROC curves on :data:`FPR_GRID`."""
    tprs = []
    for y, s in pairs:
        fpr, tpr, _ = roc_curve(y, s)
        tprs.append(np.interp(FPR_GRID, fpr, tpr))
    tpr = np.mean(tprs, axis=0)
    tpr[0] = 0.0
    return tpr


def _load(curve_files):
    """Curves per key, the chunks of one fit merged (their ``lam_errors`` stacked)."""
    out = {}
    for f in curve_files:
        new = load_npz(f, "curves archive")
        if "skipped" in new:  # a method that did not run (GPy EP without GPy)
            continue
        old = out.setdefault(curve_key(f), {})
        if "lam_errors" in old and "lam_errors" in new:
            new["lam_errors"] = np.concatenate([old["lam_errors"], new["lam_errors"]])
        old.update(new)
    return out


def plot_roc(curve_files, path):
    """Mean ROC curves: one panel per (dataset-representation, task), one line per method."""
    curves = _load(curve_files)
    panels = sorted({(d, t) for d, t, _ in curves})
    ncol = min(3, len(panels))
    nrow = int(np.ceil(len(panels) / ncol))
    fig, axes = subplots(nrow, ncol, figsize=(4 * ncol, 3.6 * nrow), squeeze=False)
    for ax, (d, t) in zip(axes.ravel(), panels):
        for key, label in METHODS.items():
            c = curves.get((d, t, key))
            if c is None:
                continue
            trials = sorted(int(k[7:]) for k in c if k.startswith("y_test_"))
            tpr = mean_roc([(c[f"y_test_{i}"], c[f"score_{i}"]) for i in trials])
            look = style(label)
            ax.plot(
                FPR_GRID,
                tpr,
                color=look.color,
                marker=look.marker,
                markevery=0.1,
                ms=4,
                label=label,
            )
        ax.plot([0, 1], [0, 1], color="0.8", lw=0.5)
        ax.set(title=f"{d} {t}", xlabel="false positive rate", ylabel="true positive rate")
        ax.set_xlim(0, 0.3)
        ax.set_ylim(0.7, 1.001)
    for ax in axes.ravel()[len(panels) :]:
        ax.axis("off")
    axes.ravel()[0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    save_figure(fig, path)


def plot_lambda(curve_files, path):
    """The paper's Figure 1: test FP, FN and CE of the ridge baselines against lambda
    (mean over splits), one row per (dataset-representation, task), Newton and gradient."""
    curves = {k: v for k, v in _load(curve_files).items() if "lam_errors" in v}
    panels = sorted({(d, t) for d, t, _ in curves})
    solvers = [m for m in ("ridge_newton", "ridge_gradient") if any(k[2] == m for k in curves)]
    if not panels:
        fig, ax = subplots(figsize=(4, 2))
        ax.text(0.5, 0.5, "no ridge baseline configured", ha="center", va="center")
        ax.axis("off")
        save_figure(fig, path)
        return
    fig, axes = subplots(
        len(panels), len(solvers), figsize=(4.2 * len(solvers), 2.8 * len(panels)), squeeze=False
    )
    for r, (d, t) in enumerate(panels):
        for c, m in enumerate(solvers):
            ax = axes[r, c]
            z = curves.get((d, t, m))
            if z is None:
                ax.axis("off")
                continue
            err = np.nanmean(z["lam_errors"], axis=0) * 100.0
            for k, (lab, fmt) in enumerate((("FN", "b-o"), ("FP", "r-s"), ("CE", "k-^"))):
                ax.plot(z["lams"], err[:, k], fmt, ms=3, label=lab)
            ax.set_xscale("log")
            ax.set(title=f"{METHODS[m]}: {d} {t}", xlabel="lambda", ylabel="test error %")
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
