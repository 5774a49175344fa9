"""Multilabel experiments of the CorrLog paper: the toy example (Sec. V) and real data.

A data set is one ``.npz`` with ``X_<t>, Y_<t>, Xt_<t>, Yt_<t>`` per trial ``t`` (training
and test parts). Every method picks its hyper-parameters by CV on the training part only.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.multioutput import ClassifierChain, MultiOutputClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from ..corrlog import CorrLog
from ..datasets.corrlog_toy import make_corrlog_toy
from ..multilabel_metrics import multilabel_scores
from ..records import record
from ..seeding import rng_for, seed_for

#: method key -> display name
METHODS = {
    "corrlog": "CorrLog",
    "ilr": "ILR",
    "cc": "ClassifierChain (LR)",
    "mo_svc": "MultiOutput (SVC)",
}
C_GRID = (0.01, 0.1, 1.0, 10.0)


def make_toy(seed, trials, n_train, n_test, shift=0.5):
    """The toy data of every trial, each trial from its own seed stream."""
    out = {}
    for t in range(trials):
        rng = rng_for(seed, "multilabel", "toy", "trial", t)
        out[f"X_{t}"], out[f"Y_{t}"] = make_corrlog_toy(n_train, rng, shift)
        out[f"Xt_{t}"], out[f"Yt_{t}"] = make_corrlog_toy(n_test, rng, shift)
    return out


def n_trials(data):
    return len([k for k in data if k.startswith("X_")])


def make_estimator(method, cfg, seed):
    """The estimator of ``method`` with its CV over the training part built in."""
    folds = KFold(cfg["folds"], shuffle=True, random_state=seed)
    if method in ("corrlog", "ilr"):
        return CorrLog(
            couplings=method == "corrlog",
            inference=cfg["inference"],
            scaling=cfg["scaling"],
            cv=cfg["folds"],
            rho1_grid=cfg["rho1_grid"],
            rho2_grid=cfg["rho2_grid"],
            random_state=seed,
        )
    if method == "cc":
        lr = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        chain = ClassifierChain(lr, order=None, random_state=seed)
        grid = {"estimator__logisticregression__C": list(C_GRID)}
        return GridSearchCV(chain, grid, cv=folds, scoring="accuracy")
    if method == "mo_svc":
        svc = MultiOutputClassifier(make_pipeline(StandardScaler(), SVC()))
        grid = {"estimator__svc__C": list(C_GRID[1:])}
        return GridSearchCV(svc, grid, cv=folds, scoring="accuracy")
    raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")


def _chosen(est):
    if isinstance(est, CorrLog):
        return {"rho1": est.rho1_, "rho2": est.rho2_}
    return {k.rsplit("__", 1)[-1]: v for k, v in est.best_params_.items()}


def fit_method(data, dataset, method, cfg, seed):
    """Fit ``method`` on every trial; return (records, predictions of every trial)."""
    rows, preds = [], {}
    for t in range(n_trials(data)):
        est = make_estimator(method, cfg, seed_for(seed, "multilabel", dataset, "cv", t))
        start = time.perf_counter()
        est.fit(data[f"X_{t}"], data[f"Y_{t}"])
        seconds = time.perf_counter() - start
        Y_pred = np.asarray(est.predict(data[f"Xt_{t}"])).astype(int)
        preds[f"Yp_{t}"] = Y_pred
        params = _chosen(est)
        for metric, value in multilabel_scores(data[f"Yt_{t}"], Y_pred).items():
            rows.append(record(dataset, "all", method, t, metric, value, seconds, params))
    return rows, preds


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


def write_table(records, dataset, csv_path):
    """``multilabel_<dataset>.{csv,md,tex}``: metrics x methods, mean (std) in %."""
    import pandas as pd

    from ..multilabel_metrics import METRICS
    from ..reporting import summarize, wide_table
    from ..reporting import write_table as _write

    parts = []
    for metric, higher in METRICS.items():
        s = summarize(records, metric, row="dataset", higher_is_better=higher, average=False)
        s["task"] = METRIC_NAMES[metric]
        parts.append(s)
    summary = pd.concat(parts, ignore_index=True)
    summary["method"] = summary["method"].map(lambda m: METHODS.get(m, m))
    methods = [METHODS[m] for m in METHODS if METHODS[m] in set(summary["method"])]
    md = wide_table(summary, row="task", methods=methods, scale=100, markup="md")
    tex = wide_table(summary, row="task", methods=methods, scale=100, markup="tex")
    n = int(records["trial"].nunique())
    caption = f"Multilabel classification on {dataset} (%, mean (std) over {n} trial(s))."
    if n == 1:
        caption += " One split only: the 'not significantly worse' marks carry no information."
    return _write(str(csv_path)[: -len(".csv")], summary, md, tex, caption)


LABEL_PAIRS = {(1, 1): "++", (1, 0): "+-", (0, 1): "-+", (0, 0): "--"}


def toy_figure(X, Y_true, Y_ilr, Y_corrlog, shift, path):
    """Fig. 1 of the paper: the test points coloured by label pair, truth / ILR / CorrLog."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..reporting import save_figure

    colours = {"++": "tab:red", "+-": "tab:orange", "-+": "tab:blue", "--": "tab:green"}
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.2), sharex=True, sharey=True)
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
