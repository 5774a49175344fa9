"""The klogreg paper's multi-class comparison (Roth 2001, Section 4 and Table 1).

Per dataset, every trial is a (train, test) split: ISOLET's own UCI split (one trial), or
seeded stratified K-fold splits where a dataset has no standard split (the isolet1
mirror, scikit-learn's digits).  Per trial and method, sigma and lambda (C for the SVC)
are chosen by K-fold CV on the training part, the chosen model is refitted (timed) and
scored on the test part: test error, log loss (probabilistic methods) and seconds.

The cost experiment (Section 3) times one fit of pairwise-coupled and one-vs-rest kernel
logistic regression at fixed hyper-parameters on the first ``c`` classes, ``N_c`` samples
each, for a range of ``c``.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from ..datasets.isolet import load_isolet_mat, read_isolet
from ..kernels import median_sigma
from ..klr import KernelLogisticRegression
from ..klr_cv import KernelLogisticRegressionCV
from ..lspc import LSPC
from ..lspc_cv import LSPCCV
from ..records import record
from ..seeding import seed_for

METHODS = {
    "klr_pairwise": "kLOGREG pairwise",
    "klr_ovr": "kLOGREG one-vs-rest",
    "lspc_new": "LSPC-new",
    "svc": "SVC (one-vs-one)",
}
DATASETS = ("digits", "isolet1", "isolet")


def check_method(method):
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {list(METHODS)}")
    return method


def prepare(
    name, seed, folds, isolet_mat=None, isolet_train=None, isolet_test=None, per_class=None
):
    """Inputs and trial splits of one dataset.

    ``digits``: scikit-learn's bundled 8x8 digits (1797 x 64, 10 classes), pixel values
    scaled to [0, 1]; ``isolet1``: the MATLAB copy of ISOLET's first part (1560 x 617);
    both split by seeded stratified ``folds``-fold CV, after keeping at most
    ``per_class`` samples of each class (seeded draw; ``None``: all).  ``isolet``: the UCI
    files, train isolet1-4 and test isolet5 (one trial).

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
    skf = StratifiedKFold(folds, shuffle=True, random_state=seed_for(seed, "multiclass", name))
    train, test = zip(*skf.split(X, y))
    return {"X": X, "y": y, "train": list(train), "test": list(test)}


def _search(method, X, y, sigmas, lams, svc_Cs, cv, random_state):
    """(fitted search, chosen params)."""
    if method in ("klr_pairwise", "klr_ovr"):
        s = KernelLogisticRegressionCV(
            sigmas,
            lams,
            cv=cv,
            multi_class="pairwise" if method == "klr_pairwise" else "ovr",
            random_state=random_state,
        ).fit(X, y)
        return {"sigma": s.sigma_, "lam": s.lam_}
    if method == "lspc_new":
        s = LSPCCV(sigmas, lams, cv=cv, rounding="outputs", random_state=random_state).fit(X, y)
        return {"sigma": s.sigma_, "lam": s.lam_}
    folds = StratifiedKFold(cv, shuffle=True, random_state=random_state)
    grid = {"gamma": list(1.0 / (2.0 * np.asarray(sigmas) ** 2)), "C": list(svc_Cs)}
    s = GridSearchCV(SVC(), grid, cv=folds, scoring="accuracy").fit(X, y)
    gamma = s.best_params_["gamma"]
    return {"sigma": float(np.sqrt(1.0 / (2.0 * gamma))), "C": float(s.best_params_["C"])}


def make_estimator(method, params):
    if method in ("klr_pairwise", "klr_ovr"):
        return KernelLogisticRegression(
            sigma=params["sigma"],
            lam=params["lam"],
            multi_class="pairwise" if method == "klr_pairwise" else "ovr",
        )
    if method == "lspc_new":
        return LSPC(sigma=params["sigma"], lam=params["lam"], rounding="outputs")
    return SVC(gamma=1.0 / (2.0 * params["sigma"] ** 2), C=params["C"])


def run_trial(data, trial, method, seed, dataset, sigma_factors, lams, lspc_lams, svc_Cs, cv):
    """Records of one trial: error, log_loss (probabilistic methods), fit_seconds,
    search_seconds; ``fit_seconds`` column = the final fit's seconds."""
    check_method(method)
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
        P = est.predict_proba(X[te])
        ll = log_loss(y[te], np.clip(P, 1e-15, 1.0), labels=est.classes_)
        rows.append(record(dataset, "all", method, trial, "log_loss", ll, fit, params))
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


#: metric -> (column label, scale, digits, lower is better)
TABLE_METRICS = {
    "error": ("test error [%]", 100.0, 2),
    "log_loss": ("log loss", 1.0, 3),
    "fit_seconds": ("fit [s]", 1.0, 2),
    "search_seconds": ("CV search + fit [s]", 1.0, 1),
}
PROTOCOL = {
    "digits": "scikit-learn's digits (8x8 images, 10 classes), seeded stratified {folds}-fold CV",
    "isolet1": "ISOLET's isolet1 part (1560 x 617, 26 letters; the mirror copy), seeded "
    "stratified {folds}-fold CV",
    "isolet": "ISOLET, the UCI split: isolet1-4 (6238) for training, isolet5 (1559) for testing",
}


def multiclass_table(records, reference, dataset, folds, per_class=None):
    """Summary (csv) and the md / tex tables of one dataset: methods x metrics, mean
    (std) over trials, best per metric in bold; the paper's ISOLET row below.

    Returns ``(summary, md_table, tex_table, caption)``.
    """
    from ..reporting import summarize, wide_table

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
    summary = pd.concat(parts, ignore_index=True)
    md = pd.DataFrame(md_cols).fillna("–")
    tex = pd.DataFrame(tex_cols).fillna("–")
    md.index = tex.index = [METHODS.get(m, m) for m in md.index]
    ref = reference[reference["dataset"] == "isolet"]
    if not ref.empty:
        r = ref.iloc[0]
        paper = {
            "paper ISOLET: SVM (SVM-Torch II)": (r["svm_error_pct"], r["svm_time"]),
            "paper ISOLET: kLOGREG pairwise": (r["klogreg_error_pct"], r["klogreg_time"]),
        }
        for name, (err, t) in paper.items():
            row = {c: "–" for c in md.columns}
            row[TABLE_METRICS["error"][0]] = f"{float(err):.2f}"
            row[TABLE_METRICS["fit_seconds"][0]] = f"{t} (500 MHz PC)"
            md.loc[name] = tex.loc[name] = pd.Series(row)
            summary = pd.concat(
                [
                    summary,
                    pd.DataFrame(
                        [
                            {
                                "dataset": "isolet",
                                "method": name,
                                "metric": "error",
                                "mean": float(err) / 100.0,
                                "std": float("nan"),
                                "n": 1,
                                "best": False,
                                "tied": False,
                            }
                        ]
                    ),
                ],
                ignore_index=True,
            )
    md.index.name = tex.index.name = "method"
    proto = PROTOCOL.get(dataset, dataset).format(folds=folds)
    if per_class is not None and dataset != "isolet":
        proto += f", at most {per_class} samples per class"
    caption = (
        f"Multi-class comparison on {proto}: mean (std) over trials of the test error, the "
        "log loss of the probabilistic methods, the seconds of the final fit and of the "
        "whole CV search; sigma and lambda (C) chosen by CV on each training part. "
        "The paper's ISOLET row (Roth 2001, Table 1) is shown for reference."
    )
    return summary, md, tex, caption
