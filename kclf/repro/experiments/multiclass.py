"""The klogreg paper's multi-class comparison (Roth 2001, Section 4 and Table 1).

Per dataset, every trial is a (train, test) split: ISOLET's own UCI split (one trial), or
seeded stratified K-fold splits where a dataset has no standard split (the isolet1
mirror, scikit-learn's digits).  Per trial and method, sigma and lambda (C for the SVC)
are chosen by K-fold CV on the training part, the chosen model is refitted (timed) and
scored on the test part: test error, the probability metrics of the probabilistic
methods (log loss, Brier score, calibration error and reliability bins,
:func:`kclf.repro.records.calibration_records`; scikit-learn's SVC gives no probabilities) and
seconds.  The error table (``<dataset>.{csv,md,tex}``) is the same bytes for the same
config; the seconds go to ``<dataset>_time.*`` (:func:`write_tables`).

The cost experiment (Section 3) times one fit of pairwise-coupled and one-vs-rest kernel
logistic regression at fixed hyper-parameters on the first ``c`` classes, ``N_c`` samples
each, for a range of ``c``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from ...kernels import median_sigma
from ...klr import KernelLogisticRegression
from ..datasets import user_data
from ..datasets.isolet import load_isolet_mat, read_isolet
from ..methods import (
    check_method,
    family_methods,
    gamma_of,
    kernel_estimator,
    kernel_search,
    sigma_of,
    svc_grid,
)
from ..records import atomic_write, calibration_records, record
from ..seeding import seed_for

METHODS = family_methods("multiclass")
DATASETS = ("digits", "isolet1", "isolet")


def prepare(
    name,
    seed,
    folds,
    isolet_mat=None,
    isolet_train=None,
    isolet_test=None,
    per_class=None,
    trials=None,
):
    """Inputs and trial splits of one dataset.

    ``digits``: scikit-learn's bundled 8x8 digits (1797 x 64, 10 classes), pixel values
    scaled to [0, 1]; ``isolet1``: the MATLAB copy of ISOLET's first part (1560 x 617);
    both split by seeded stratified ``folds``-fold CV (``trials`` of them, default
    ``folds``: trial t is fold ``t % folds`` of the seeded partition ``t // folds``,
    :func:`trial_split`), after keeping at most ``per_class`` samples of each class
    (seeded draw; ``None``: all).  ``isolet``: the UCI files, train isolet1-4 and test
    isolet5 (one trial).

    Returns
    -------
    dict with ``X``, ``y``, ``train``, ``test`` (lists of index arrays, one per trial).
    """
    if name == "isolet":
        Xtr, ytr = read_isolet(isolet_train)
        Xte, yte = read_isolet(isolet_test)
        X, y = np.vstack([Xtr, Xte]), np.concatenate([ytr, yte])
        n = ytr.size
        return {"X": X, "y": y, "train": [np.arange(n)], "test": [np.arange(n, y.size)]}
    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        X = X / 16.0
    elif name == "isolet1":
        X, y = load_isolet_mat(isolet_mat)
    else:
        raise ValueError(f"unknown dataset {name!r}; expected one of {DATASETS}")
    if per_class is not None:
        rng = np.random.default_rng(seed_for(seed, "multiclass", name, "subsample"))
        keep = [rng.permutation(np.flatnonzero(y == k))[:per_class] for k in np.unique(y)]
        keep = np.sort(np.concatenate(keep))
        X, y = X[keep], y[keep]
    trials = folds if trials is None else trials
    train, test = zip(*(trial_split(y, name, seed, folds, t) for t in range(trials)))
    return {"X": X, "y": y, "train": list(train), "test": list(test)}


def prepare_user(dataset):
    """The arrays of the data rule for the user's single-label set (a
    :class:`kclf.repro.datasets.user_data.UserDataset`): ``X`` and ``y`` (class codes);
    a fixed split (``train:`` + ``test:``) also ``train_0`` and ``test_0``, its one trial,
    as isolet's UCI split.  A ``path:`` set's trials are the family's :func:`trial_split`.
    ``standardize: true`` z-scores the features on the training part (fixed split) or on
    the whole set (its K-fold trials share one file); unset, they are used as given, as
    the paper's data are."""
    d = user_data.require_task(dataset, ("multiclass", "binary"), "multiclass.datasets")
    if not d.fixed_split:
        X = user_data.standardize_split(d.X, d.X[:1])[0] if d.standardize else d.X
        return {"X": X, "y": d.y, "classes": np.asarray(d.classes)}
    X, Xt = (d.X, d.X_test) if not d.standardize else user_data.standardize_split(d.X, d.X_test)
    n = len(X)
    return {
        "X": np.vstack([X, Xt]),
        "y": np.concatenate([d.y, d.y_test]),
        "train_0": np.arange(n),
        "test_0": np.arange(n, n + len(Xt)),
        "classes": np.asarray(d.classes),
    }


def trial_split(y, name, seed, folds, trial):
    """``(train, test)`` indices of trial ``trial``: fold ``trial % folds`` of a seeded
    stratified ``folds``-fold partition, partition ``trial // folds`` (partition 0 from
    ``seed_for(seed, "multiclass", name)``, partition r > 0 from ``seed_for(seed,
    "multiclass", name, "partition", r)``).  It depends on the seed, ``folds`` and its own
    index only, so more trials add partitions and leave the earlier trials as they are."""
    r, k = divmod(int(trial), int(folds))
    names = ("multiclass", name) if r == 0 else ("multiclass", name, "partition", r)
    skf = StratifiedKFold(folds, shuffle=True, random_state=seed_for(seed, *names))
    return list(skf.split(np.zeros((len(y), 1)), y))[k]


def _search(method, X, y, sigmas, lams, svc_Cs, cv, random_state):
    """(fitted search, chosen params)."""
    if method != "svc":
        s = kernel_search(method, sigmas, lams, cv=cv, random_state=random_state)
        s.fit(X, y)
        return {"sigma": s.sigma_, "lam": s.lam_}
    folds = StratifiedKFold(cv, shuffle=True, random_state=random_state)
    s = GridSearchCV(SVC(), svc_grid(sigmas, svc_Cs), cv=folds, scoring="accuracy")
    s.fit(X, y)
    gamma = s.best_params_["gamma"]
    return {"sigma": float(sigma_of(gamma)), "C": float(s.best_params_["C"])}


def make_estimator(method, params):
    if method != "svc":
        return kernel_estimator(method, params["sigma"], params["lam"])
    return SVC(gamma=float(gamma_of(params["sigma"])), C=params["C"])


def run_trial(
    data, trial, method, seed, dataset, sigma_factors, lams, lspc_lams, svc_Cs, cv, n_bins=10
):
    """Records of one trial: error, fit_seconds, search_seconds and, for the methods with
    ``predict_proba``, the probability metrics of the test part (log_loss, brier, ece,
    ece_mass, n_clipped, n_scored and ``n_bins`` reliability bins of the top-label
    confidence, :func:`kclf.repro.records.calibration_records`); ``fit_seconds`` column = the
    final fit's seconds."""
    check_method("multiclass", method)
    tr, te = data["train"][trial], data["test"][trial]
    X, y = data["X"], data["y"]
    sigmas = median_sigma(X[tr]) * np.asarray(sigma_factors, dtype=float)
    grid_lams = lspc_lams if method == "lspc_new" else lams
    rs = seed_for(seed, "multiclass", dataset, "cv", trial)
    t0 = time.perf_counter()
    params = _search(method, X[tr], y[tr], sigmas, grid_lams, svc_Cs, cv, rs)
    search = time.perf_counter() - t0
    est = make_estimator(method, params)
    t0 = time.perf_counter()
    est.fit(X[tr], y[tr])
    fit = time.perf_counter() - t0
    pred = est.predict(X[te])
    rows = [
        record(dataset, "all", method, trial, "error", np.mean(pred != y[te]), fit, params),
        record(dataset, "all", method, trial, "fit_seconds", fit, fit, params),
        record(dataset, "all", method, trial, "search_seconds", search, fit, params),
    ]
    if hasattr(est, "predict_proba"):
        rows += calibration_records(
            y[te],
            est.predict_proba(X[te]),
            labels=est.classes_,
            dataset=dataset,
            task="all",
            method=method,
            trial=trial,
            n_bins=n_bins,
            fit_seconds=fit,
            params=params,
        )
    return rows


def cost_curve(X, y, n_classes, per_class, sigma, lam, seed, repeats=1):
    """Seconds of one pairwise and one one-vs-rest fit on the first ``c`` classes with
    ``per_class`` samples each (drawn by the seeded stream), for each ``c``.

    Returns a list of dicts (c, n, strategy, seconds): the minimum over ``repeats``.
    """
    rng = np.random.default_rng(seed)
    classes = np.unique(y)
    pick = {k: rng.permutation(np.flatnonzero(y == k))[:per_class] for k in classes}
    warm = np.concatenate([pick[k] for k in classes[:3]])  # first-call costs, untimed
    for strategy in ("pairwise", "ovr"):
        KernelLogisticRegression(sigma=sigma, lam=lam, multi_class=strategy).fit(X[warm], y[warm])
    out = []
    for c in n_classes:
        if c < 2 or c > classes.size:
            raise ValueError(f"number of classes must be in 2..{classes.size}, got {c}")
        idx = np.concatenate([pick[k] for k in classes[:c]])
        for strategy in ("pairwise", "ovr"):
            best = np.inf
            for _ in range(repeats):
                est = KernelLogisticRegression(sigma=sigma, lam=lam, multi_class=strategy)
                t0 = time.perf_counter()
                est.fit(X[idx], y[idx])
                best = min(best, time.perf_counter() - t0)
            out.append({"c": c, "n": idx.size, "strategy": strategy, "seconds": best})
    return out


def predicted_cost(c, per_class, strategy):
    """The paper's Section 3 counts: one-vs-rest ``c^3 N_c^2``, pairwise
    ``2 (c^2 - c) N_c^2`` (up to the same constant)."""
    c = np.asarray(c, dtype=float)
    if strategy == "ovr":
        return c**3 * per_class**2
    return 2.0 * (c**2 - c) * per_class**2


def plot_cost(df, ax):
    """Measured seconds against c for both strategies, with the Section 3 predictions
    scaled to the measured largest-c point of each strategy (log-log axes)."""
    colors = {"pairwise": "C0", "ovr": "C3"}
    labels = {"pairwise": "pairwise coupling", "ovr": "one-vs-rest"}
    formula = {"pairwise": r"$2(c^2-c)N_c^2$", "ovr": r"$c^3 N_c^2$"}
    per_class = int(df["per_class"].iloc[0])
    for strategy in ("pairwise", "ovr"):
        d = df[df["strategy"] == strategy].sort_values("c")
        if d.empty:
            continue
        ax.plot(d["c"], d["seconds"], "o-", color=colors[strategy], label=labels[strategy])
        pred = predicted_cost(d["c"].to_numpy(), per_class, strategy)
        scale = d["seconds"].iloc[-1] / pred[-1]
        ax.plot(
            d["c"],
            pred * scale,
            "--",
            color=colors[strategy],
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
    return ax


#: metric -> (column label, scale, digits); lower is better for all
TABLE_METRICS = {
    "error": ("test error [%]", 100.0, 2),
    "log_loss": ("log loss", 1.0, 3),
}
#: the wall-clock columns, only in the ``*_time`` table (not reproducible bytes)
TIME_METRICS = {
    "fit_seconds": ("fit [s]", 1.0, 2),
    "search_seconds": ("CV search + fit [s]", 1.0, 1),
}
PROTOCOL = {
    "digits": "scikit-learn's digits (8x8 images, 10 classes), seeded stratified {folds}-fold CV",
    "isolet1": "ISOLET's isolet1 part (1560 x 617, 26 letters; the mirror copy), seeded "
    "stratified {folds}-fold CV",
    "isolet": "ISOLET, the UCI split: isolet1-4 (6238) for training, isolet5 (1559) for testing",
}


def _paper_rows(reference, kind):
    """The paper's ISOLET rows (Roth 2001, Table 1): ``{name: (cells, error_pct)}``, the
    cells of the error or the time table."""
    ref = reference[reference["dataset"] == "isolet"] if "dataset" in reference else reference
    if ref.empty:
        return {}
    r = ref.iloc[0]
    rows = {
        "paper ISOLET: SVM (SVM-Torch II)": (r["svm_error_pct"], r["svm_time"]),
        "paper ISOLET: kLOGREG pairwise": (r["klogreg_error_pct"], r["klogreg_time"]),
    }
    if kind == "error":
        return {n: ({"test error [%]": f"{float(e):.2f}"}, float(e)) for n, (e, _) in rows.items()}
    return {n: ({"fit [s]": f"{t} (500 MHz PC)"}, float(e)) for n, (e, t) in rows.items()}


def multiclass_table(
    records, reference, dataset, folds, per_class=None, kind="error", trials=None, source=None
):
    """Summary (csv) and the md / tex tables of one dataset: methods x metrics, mean
    (std) over trials, best per metric in bold; the paper's ISOLET rows below (none when
    ``reference`` is empty).

    ``source``: for the user's own data set, how the caption names it (its entry and
    files) and whether it is a fixed split (``fixed``); ``per_class`` does not apply.

    ``kind="error"``: test error and log loss (:data:`TABLE_METRICS`), the same bytes
    for the same config; ``kind="time"``: the seconds of the final fit and of the CV
    search (:data:`TIME_METRICS`), which vary from run to run.

    Returns ``(summary, md_table, tex_table, caption)``.
    """
    from ..reports.tables import summarize, wide_table

    if kind not in ("error", "time"):
        raise ValueError(f"kind must be 'error' or 'time', got {kind!r}")
    metrics = TABLE_METRICS if kind == "error" else TIME_METRICS
    records = records[records["dataset"] == dataset]
    parts, md_cols, tex_cols = [], {}, {}
    for metric, (label, scale, digits) in metrics.items():
        if not (records["metric"] == metric).any():
            continue
        s = summarize(records, metric, row="dataset", higher_is_better=False, average=False)
        parts.append(s.assign(metric=metric))
        md_cols[label] = wide_table(s, row="dataset", scale=scale, digits=digits).iloc[0]
        tex_cols[label] = wide_table(
            s, row="dataset", scale=scale, digits=digits, markup="tex"
        ).iloc[0]
    if not parts:
        raise ValueError(f"no {kind} records ({list(metrics)}) for dataset {dataset!r}")
    summary = pd.concat(parts, ignore_index=True)
    md = pd.DataFrame(md_cols).fillna("–")
    tex = pd.DataFrame(tex_cols).fillna("–")
    md.index = tex.index = [METHODS.get(m, m) for m in md.index]
    for name, (cells, error_pct) in _paper_rows(reference, kind).items():
        row = pd.Series({c: cells.get(c, "–") for c in md.columns})
        md.loc[name] = tex.loc[name] = row
        if kind == "error":
            paper = {
                "dataset": "isolet",
                "method": name,
                "metric": "error",
                "mean": error_pct / 100.0,
                "std": float("nan"),
                "n": 1,
                "best": False,
                "tied": False,
            }
            summary = pd.concat([summary, pd.DataFrame([paper])], ignore_index=True)
    md.index.name = tex.index.name = "method"
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
    has_paper = bool(_paper_rows(reference, kind))
    if kind == "error":
        caption = (
            f"Multi-class comparison on {proto}: mean (std) over trials of the test error "
            "and the log loss of the probabilistic methods; sigma and lambda (C) chosen by "
            "CV on each training part. Seconds: the _time table."
            + (" The paper's ISOLET row (Roth 2001, Table 1) is shown for reference." * has_paper)
        )
    else:
        caption = (
            f"Training time on {proto}: mean (std) over trials of the seconds of the final "
            "fit and of the whole CV search (this machine, one core)"
            + (
                "; the paper's ISOLET times (Roth 2001, Table 1) were measured on a 500 MHz PC."
                if has_paper
                else "."
            )
        )
    return summary, md, tex, caption


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
    ``<stem>_calibration.{csv,md}`` (:func:`kclf.repro.reports.calibration.write_calibration_table`,
    one row per probabilistic method under its display name of :data:`METHODS`, the md
    with a caption) and, if ``reliability`` is a path, the reliability diagram (one
    panel per probabilistic method).

    ``source``: the user's data set (:func:`multiclass_table`).  Returns the error table's
    md (for the log).
    """
    from ..reports.calibration import reliability_figure, write_calibration_table
    from ..reports.tables import write_table

    stem = Path(stem)
    records = records[records["dataset"] == dataset]
    summary, md, tex, caption = multiclass_table(
        records, reference, dataset, folds, per_class, trials=trials, source=source
    )
    write_table(stem, summary, md, tex, caption)
    t_summary, t_md, t_tex, t_caption = multiclass_table(
        records, reference, dataset, folds, per_class, kind="time", trials=trials, source=source
    )
    write_table(stem.with_name(stem.name + "_time"), t_summary, t_md, t_tex, t_caption)
    named = records.assign(method=records["method"].map(lambda m: METHODS.get(m, m)))
    _, md_path = write_calibration_table(named, stem)
    named_as = dataset if source is None else source["text"]
    text = f"{calibration_caption(named_as)}\n\n{md_path.read_text(encoding='utf-8')}"
    atomic_write(md_path, lambda p: Path(p).write_text(text, encoding="utf-8"))
    if reliability is not None:
        reliability_figure(named, reliability, title=f"{dataset}: reliability (top label)")
    return md
