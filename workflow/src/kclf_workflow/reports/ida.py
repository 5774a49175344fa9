"""IDA benchmark tables and figures from records, beside the MAPLP paper's numbers: test
error, time, and the quality of the test-set probabilities (calibration table and
reliability diagram)."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.ticker
import numpy as np
import pandas as pd

from ..files import atomic_write
from ..methods import family_methods
from ..readers import reading
from ..records import read_records
from .calibration import reliability_figure, write_calibration_table
from .figures import save_figure, subplots
from .palette import style
from .tables import (
    add_reference,
    summarize,
    variant_note,
    wide_table,
    write_table,
)

METHODS = family_methods("ida")

#: paper column label -> column stem in maplp_ida_error.csv
PAPER_ERROR = {
    "MAPLP": "maplp",
    "SVM": "svm",
    "KMAP": "kmap",
    "RBF": "rbf",
    "AB": "ab",
    "ABR": "abr",
    "KFD": "kfd",
}
#: how close our numbers must be to the paper's to count as reproduced, in published stds
AGREEMENT = {"SVM": ("svm", 1.5), "MAPLP": ("maplp", 2.0)}


def paper_error_columns(reference):
    """``mean ± std`` strings per dataset for every paper column."""
    ref = reference.set_index("dataset")
    return pd.DataFrame(
        {
            label: [f"{m:.1f} ± {s:.1f}" for m, s in zip(ref[f"{c}_mean"], ref[f"{c}_std"])]
            for label, c in PAPER_ERROR.items()
        },
        index=ref.index,
    )


def agreement(summary, reference):
    """Per dataset and method in :data:`AGREEMENT`: our mean, the paper's mean and std, and
    whether ``|ours - paper| <= k * paper std``."""
    ref = reference.set_index("dataset")
    rows = []
    for label, (col, k) in AGREEMENT.items():
        ours = summary[(summary["method"] == label) & (summary["dataset"].isin(ref.index))]
        for rec in ours.itertuples(index=False):
            pm, ps = ref.loc[rec.dataset, f"{col}_mean"], ref.loc[rec.dataset, f"{col}_std"]
            rows.append(
                {
                    "dataset": rec.dataset,
                    "method": label,
                    "ours": rec.mean,
                    "paper_mean": pm,
                    "paper_std": ps,
                    "k_std": k,
                    "within": bool(abs(rec.mean - pm) <= k * ps),
                }
            )
    return pd.DataFrame(
        rows, columns=["dataset", "method", "ours", "paper_mean", "paper_std", "k_std", "within"]
    )


def _ordered(summary, order):
    methods = [METHODS[m] for m in order if METHODS[m] in set(summary["method"])]
    return methods


def _protocol(folds, n_select):
    return f"{folds}-fold CV on each of the first {n_select} realisations"


def error_table(records, reference, stem, methods, origins, folds=5, n_select=5, user=()):
    """``<stem>.{csv,md,tex}``: test error % mean (std) per dataset; best bold, not
    significantly worse (Welch two-sample t-test at 5% over realisations) marked; then
    the paper's columns, unless every dataset is the user's (``user``: names under the
    config's ``datasets:``, whose rows have no published numbers)."""
    summary = summarize(records, "error", row="dataset", higher_is_better=False, paired=False)
    summary = summary[summary["dataset"] != "Average"].reset_index(drop=True)
    order = _ordered(summary, methods)
    paper = paper_error_columns(reference)
    user = sorted(set(user) & set(summary["dataset"]))
    only_user = set(summary["dataset"]) <= set(user)
    cols = {} if only_user else {f"{k}": k for k in PAPER_ERROR}
    md = add_reference(wide_table(summary, "dataset", order, markup="md"), paper, cols)
    tex = add_reference(wide_table(summary, "dataset", order, markup="tex"), paper, cols)
    n = summary.groupby("dataset")["n"].max()
    md.insert(0, "R", [int(n.get(d, 0)) for d in md.index])
    tex.insert(0, "R", [int(n.get(d, 0)) for d in tex.index])
    agree = agreement(summary, reference)
    notes = []
    for label, (_, k) in AGREEMENT.items():
        a = agree[agree["method"] == label]
        if len(a):
            out = ", ".join(a.loc[~a["within"], "dataset"]) or "none"
            notes.append(
                f"our {label} within {k:g} published std of the paper's {label}: "
                f"{int(a['within'].sum())} of {len(a)} datasets (outside: {out})"
            )
    sources = "; ".join(f"{d}: {o}" for d, o in sorted(origins.items()))
    caption = (
        f"Test error (%) mean (std) over R realisations, hyper-parameters by "
        f"{_protocol(folds, n_select)} and the median of the best values (the MAPLP paper, "
        "section 5: 5-fold CV on the first 5). "
        "Significance: Welch two-sample t-test at 5% over realisations. "
        f"'{METHODS['maplp_bias']}': MAPLP with a non-negative constant basis function per "
        "class, an ablation that is not in the paper. "
        + (
            ""
            if only_user
            else "'paper' columns: Nopriadi & Yamashita's table (mean ± std over 100 "
            "realisations, 20 for image and splice). "
        )
        + (
            f"Your own data sets (config datasets:, no published numbers): {', '.join(user)}. "
            if user
            else ""
        )
        + f"Data: {sources}. "
        + ". ".join(notes)
        + "."
        + variant_note(records)
    )
    write_table(stem, summary, md, tex, caption)
    atomic_write(
        Path(f"{stem}_agreement.csv"), lambda p: agree.to_csv(p, index=False, float_format="%.4g")
    )
    return summary, agree


def write_ida_time(records, reference_time, stem, methods, folds=5, user=()):
    """``<stem>.{csv,md,tex}``: seconds per realisation (learning + classification), CV
    excluded and included, beside the paper's seconds (none when every dataset is in
    ``user``, the user's own)."""
    ref = reference_time.set_index("dataset")
    df = records[records["metric"].isin(["seconds", "seconds_with_cv"])]
    mean = df.groupby(["dataset", "method", "metric"])["value"].mean().unstack(["method", "metric"])
    order = [METHODS[m] for m in methods if METHODS[m] in set(df["method"])]
    out = pd.DataFrame(index=pd.Index(sorted(mean.index), name="dataset"))
    for m in order:
        out[f"{m} s"] = [mean.loc[d, (m, "seconds")] for d in out.index]
        out[f"{m} s (+CV)"] = [mean.loc[d, (m, "seconds_with_cv")] for d in out.index]
    mine = sorted(set(user) & set(out.index))
    paper = (
        ()
        if set(out.index) <= set(user)
        else (("maplp_s", "paper MAPLP s"), ("svm_s", "paper SVM s"), ("kmap_s", "paper KMAP s"))
    )
    for col, label in paper:
        out[label] = [ref[col].get(d, np.nan) for d in out.index]
    caption = (
        "Seconds per realisation: fit + test prediction with the selected hyper-parameters "
        f"('s'), and plus the mean time of the {folds}-fold CV grid search on one selection "
        "realisation ('s (+CV)'); this machine, one core."
        + (
            " Paper: learning + classification seconds (GLPK for MAPLP and KMAP, LIBSVM for "
            "SVM; their machine)."
            if paper
            else ""
        )
        + (f" Your own data sets (config datasets:): {', '.join(mine)}." if mine else "")
    )
    stem = Path(stem)
    atomic_write(stem.with_suffix(".csv"), lambda p: out.to_csv(p, float_format="%.4g"))
    text = out.map(lambda v: "–" if pd.isna(v) else f"{v:.3g}")
    atomic_write(
        stem.with_suffix(".md"),
        lambda p: Path(p).write_text(f"{caption}\n\n{text.to_markdown()}\n"),
    )
    atomic_write(
        stem.with_suffix(".tex"),
        lambda p: Path(p).write_text(text.to_latex(caption=caption, label=f"tab:{stem.name}")),
    )
    return out


def error_figure(summary, reference, path, methods, user=()):
    """Dot plot per dataset: our mean ± std per method (filled) and the paper's MAPLP and
    SVM (open markers of the same method's style; left out when every dataset is in
    ``user``, the user's own)."""
    ref = reference.set_index("dataset")
    datasets = sorted(set(summary["dataset"]))
    order = _ordered(summary, methods)
    fig, ax = subplots(figsize=(7, 0.45 * len(datasets) + 1.5))
    n_series = len(order) + 2
    for k, m in enumerate(order):
        s = summary[summary["method"] == m].set_index("dataset")
        ys = [i + (k - n_series / 2) * 0.1 for i in range(len(datasets))]
        mean = [s["mean"].get(d, np.nan) for d in datasets]
        std = [s["std"].get(d, np.nan) for d in datasets]
        look = style(m)
        ax.errorbar(
            mean, ys, xerr=std, fmt=look.marker, ms=4, color=look.color, label=f"{m} (ours)"
        )
    paper = () if set(datasets) <= set(user) else (("MAPLP", "maplp"), ("SVM", "svm"))
    for j, (label, col) in enumerate(paper):
        k = len(order) + j
        ys = [i + (k - n_series / 2) * 0.1 for i in range(len(datasets))]
        mean = [ref[f"{col}_mean"].get(d, np.nan) for d in datasets]
        std = [ref[f"{col}_std"].get(d, np.nan) for d in datasets]
        look = style(label)  # the method's own style, open markers
        ax.errorbar(
            mean,
            ys,
            xerr=std,
            fmt=look.marker,
            mfc="none",
            ms=5,
            color=look.color,
            label=f"{label} (paper)",
        )
    ax.set_yticks(range(len(datasets)), datasets)
    ax.set_xscale("log")
    ticks = [0.5, 1, 2, 5, 10, 20, 50, 100]
    ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("test error (%), mean ± std over realisations")
    ax.invert_yaxis()
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path)


CALIBRATION_CAPTION = (
    "IDA benchmarks: quality of the test-set probabilities per dataset and method, mean ± "
    "std over realisations (log loss in nats, Brier score, ECE over equal-width and "
    "equal-mass bins; 'clipped': predictions of exactly 0 or 1, clipped to 1e-15 before "
    "the log loss). KLR, LSPC-new and LSPC: their posterior estimates. SVM: the selected "
    "SVC Platt-scaled by cross-validation on the training set. MAPLP (and its ablation "
    "with a constant basis function, not in the paper): its predict_proba is a surrogate, "
    "the normalised kernel model w(x, y) / sum w (argmax = the MAP decision, not a "
    "calibrated posterior), included for comparison."
)


def calibration_report(records, stem, reliability=None):
    """``<stem>_calibration.{csv,md}``: one row per dataset and method (sorted), the
    Markdown opening with :data:`CALIBRATION_CAPTION`; and, if ``reliability`` is a path,
    the reliability diagram (one panel per method, datasets and realisations pooled)."""
    csv_path, md_path = write_calibration_table(records, stem)
    text = f"{CALIBRATION_CAPTION}\n\n" + md_path.read_text(encoding="utf-8")
    atomic_write(md_path, lambda p: Path(p).write_text(text, encoding="utf-8"))
    if reliability is not None:
        reliability_figure(records, reliability, title="IDA benchmarks: reliability")
    return csv_path, md_path


def _reference(path, columns):
    """The published table, or an empty one with its columns when ``path`` is None/absent."""
    if path and Path(path).is_file():
        return pd.read_csv(path)
    return pd.DataFrame(columns=["dataset", *columns])


def data_origins(data_paths):
    """``{dataset: where its data came from}`` for the captions, from the data rule's
    npz files (``results/data/ida/<dataset>/<chunk>.npz``: ``origin`` and the
    realisations ``from_asc`` read from the IDA split files, named at the end)."""
    base, from_asc = {}, {}
    for path in data_paths:
        name = Path(path).parent.name
        with reading(path, "data archive"), np.load(path) as f:
            origin, realisations = str(f["origin"]), f["from_asc"]
        base.setdefault(name, origin.split(" (realisation ")[0])
        from_asc.setdefault(name, []).extend(int(r) for r in realisations)
    return {
        name: text
        + (
            f" (realisation {', '.join(map(str, sorted(from_asc[name])))} from the IDA split files)"
            if from_asc[name]
            else ""
        )
        for name, text in base.items()
    }


def write_report(
    record_paths,
    reference_error,
    reference_time,
    origins,
    outputs,
    methods,
    folds=5,
    n_select=5,
    user=(),
):
    """All IDA tables and figures; ``outputs`` has ``error_csv``, ``time_csv``, ``figure``
    and optionally ``calibration_csv`` (``<stem>_calibration.csv``; its ``.md`` beside it)
    and ``reliability`` (the reliability diagram). Missing reference files leave the
    paper columns empty ('–'). ``folds`` and ``n_select`` (the protocol that ran) go into
    the captions. ``user``: the datasets that are the user's own (config ``datasets:``),
    named in the captions; with only those, no paper columns or markers."""
    records = read_records(record_paths)
    ref_err = _reference(
        reference_error, [f"{c}_{s}" for c in PAPER_ERROR.values() for s in ("mean", "std")]
    )
    ref_time = _reference(reference_time, ["maplp_s", "svm_s", "kmap_s"])
    summary, agree = error_table(
        records,
        ref_err,
        str(Path(outputs["error_csv"]).with_suffix("")),
        methods,
        origins,
        folds,
        n_select,
        user,
    )
    time_stem = str(Path(outputs["time_csv"]).with_suffix(""))
    write_ida_time(records, ref_time, time_stem, methods, folds, user)
    error_figure(summary, ref_err, outputs["figure"], methods, user)
    if "calibration_csv" in outputs.keys():
        path = str(outputs["calibration_csv"])
        if not path.endswith("_calibration.csv"):
            raise ValueError(f"calibration_csv must end with '_calibration.csv', got {path!r}")
        stem = path.removesuffix("_calibration.csv")
        calibration_report(records, stem, outputs.get("reliability"))
    return summary, agree
