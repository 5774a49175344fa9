"""The klogreg paper's multi-class comparison (Roth 2001, Section 4 and Table 1).

Per dataset, every trial is a (train, test) split: ISOLET's own UCI split (one trial), or
seeded stratified K-fold splits where a dataset has no standard split (the isolet1
mirror, scikit-learn's digits).  Per trial and method, sigma and lambda (C for the SVC)
are chosen by K-fold CV on the training part, the chosen model is refitted (timed) and
scored on the test part: test error, the probability metrics of the probabilistic
methods (log loss, Brier score, calibration error and reliability bins,
:func:`kclf_workflow.records.calibration_records`; scikit-learn's SVC gives no probabilities) and
seconds.  Its tables and the cost figure: :mod:`kclf_workflow.reports.multiclass`.

The cost experiment (Section 3) times one fit of pairwise-coupled and one-vs-rest kernel
logistic regression at fixed hyper-parameters on the first ``c`` classes, ``N_c`` samples
each, for a range of ``c``.
"""

from __future__ import annotations

import logging
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import StratifiedKFold

from kclf import KernelLogisticRegression
from kclf.kernels import median_sigma

from ..datasets import user_data
from ..datasets.isolet import load_isolet_mat, read_isolet
from ..methods import family_methods, spec
from ..progress import Progress
from ..readers import load_npz, reading
from ..records import calibration_records, record
from ..seeding import seed_for
from ..text import plain

METHODS = family_methods("multiclass")
DATASETS = ("digits", "isolet1", "isolet")
logger = logging.getLogger(__name__)


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
    :class:`kclf_workflow.datasets.user_data.UserDataset`): ``X`` and ``y`` (class codes);
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


def load_trials(path, dataset, trials, seed, folds):
    """``X``, ``y`` and the ``(train, test)`` indices of ``trials`` (dicts by trial) from
    the data rule's npz ``path``: its fixed split (``train_0`` / ``test_0``, as isolet's
    UCI split: one trial, so only the chunk of trial 0), else :func:`trial_split`."""
    f = load_npz(path)
    with reading(path, "data archive"):
        data = {"X": f["X"], "y": f["y"], "train": {}, "test": {}}
    if "train_0" in f:
        if list(trials) != [0]:
            raise ValueError(f"{path} has one fixed split: trial chunk must be 0-0")
        with reading(path, "data archive"):
            data["train"][0], data["test"][0] = f["train_0"], f["test_0"]
        return data
    for t in trials:
        data["train"][t], data["test"][t] = trial_split(data["y"], dataset, seed, folds, t)
    return data


def run_trials(data, trials, method, seed, dataset, cfg, n_bins=10):
    """The records of :func:`run_trial` for every trial of ``trials``; ``cfg`` holds
    ``sigma_factors``, ``cv`` and ``grid``, the method's own grid (its spec's grid key:
    the lambdas of KLR or LSPC-new, the C values of the SVC), and for LSPC-new optionally
    ``lspc_new``, its variant (``basis``, ``class_weight``).  Logs each trial's last
    record."""
    variant = spec("multiclass", method).variant_of(cfg) or None
    rows = []
    progress = Progress(logger, f"{method} trials", len(trials), every=0.0)
    for trial in trials:
        rows += run_trial(
            data,
            trial,
            method,
            seed,
            dataset,
            cfg["sigma_factors"],
            cfg["grid"],
            cv=cfg["cv"],
            n_bins=n_bins,
            variant=variant,
        )
        progress.step(f"trial {trial}: {plain(rows[-1])}")
    return rows


def make_estimator(method, params, variant=None):
    """The estimator of ``method`` at the chosen ``params``."""
    return spec("multiclass", method).refit(params, variant)


def run_trial(data, trial, method, seed, dataset, sigma_factors, grid, cv, n_bins=10, variant=None):
    """Records of one trial: error, fit_seconds, search_seconds and, for the methods with
    ``predict_proba``, the probability metrics of the test part (log_loss, brier, ece,
    ece_mass, n_clipped, n_scored and ``n_bins`` reliability bins of the top-label
    confidence, :func:`kclf_workflow.records.calibration_records`); ``fit_seconds`` column =
    the final fit's seconds.  ``grid``: the method's own grid (the lambdas of KLR or
    LSPC-new, the SVC's C values); ``variant``: further parameters of the kernel method's
    search and fit (LSPC-new's ``basis``, ``class_weight``), named in the records' params."""
    method_spec = spec("multiclass", method)
    tr, te = data["train"][trial], data["test"][trial]
    X, y = data["X"], data["y"]
    sigmas = median_sigma(X[tr]) * np.asarray(sigma_factors, dtype=float)
    rs = seed_for(seed, "multiclass", dataset, "cv", trial)
    t0 = time.perf_counter()
    params = method_spec.chosen(method_spec.build(X[tr], y[tr], sigmas, grid, cv, rs, variant))
    search = time.perf_counter() - t0
    est = make_estimator(method, params, variant)
    params = {**params, **(variant or {})}
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
