"""The MGPC paper's experiment (Fradi et al., Sec. 4) on public images.

The paper's 2042 defect images are not public; the binary tasks here are scikit-learn's
bundled digits (UCI optdigits, 8x8 images; e.g. "3v8": 3 negative, 8 positive) with the
three image representations of the paper's Table 1, and the six labels of MULAN scene
(294 precomputed colour/texture features, so only the ``"features"`` representation).
Every task is split at random into training and test halves (stratified) ``trials`` times;
each method is fitted on the training half and scored on the test half by

* FN: positives classified negative / positives, FP: negatives classified positive /
  negatives, CE: misclassified / all (the paper's error rates), AUC;
* the quality of the test-set probabilities (``predict_proba``: MLA's erf-mixture
  logistic-Gaussian integral, MEP's probit Eq. 8, the ridge baselines' sigmoid, scikit-learn
  GPC's own) by :func:`kclf_workflow.records.calibration_records` (log loss, Brier score, ECE and
  reliability bins);
* the test scores (for ROC curves) and, for the ridge baselines, the test FN/FP/CE of
  every lambda of the grid (the paper's Figure 1).

The peers are scikit-learn's ``GaussianProcessClassifier`` (Laplace) and GPy's EP classifier
(:class:`kclf_workflow.estimators.GPyEPClassifier`; GPy is an optional extra, ``pip
install GPy``): without GPy the
``gpy_ep`` method is skipped, its curves file says why and the table's caption notes it.
"""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

from kclf.features.image_repr import represent

from ..datasets import user_data
from ..datasets.mulan import load_scene
from ..methods import family_methods, spec
from ..methods.mgpc import DEFAULT_LAMS
from ..progress import Progress
from ..records import calibration_records, record
from ..seeding import rng_for, seed_for
from ..text import plain

logger = logging.getLogger(__name__)

#: method key -> label used in tables and figures (the registry's "mgpc" family)
METHODS = family_methods("mgpc")
IMAGE_REPRESENTATIONS = ("gradient", "gabor", "binarization")


def digits_task(task):
    """Images ``(n, 8, 8)`` and 0/1 labels of the digits task ``"<neg>v<pos>"`` (e.g. "3v8")."""
    try:
        neg, pos = (int(d) for d in task.split("v"))
    except ValueError:
        raise ValueError(f"digits task must look like '3v8', got {task!r}") from None
    if neg == pos or not (0 <= neg <= 9 and 0 <= pos <= 9):
        raise ValueError(f"digits task needs two different digits 0-9, got {task!r}")
    d = load_digits()
    keep = np.isin(d.target, (neg, pos))
    return d.images[keep], (d.target[keep] == pos).astype(int)


def scene_task(root, label):
    """MULAN scene (train and test files pooled) and the 0/1 indicator of ``label``."""
    s = load_scene(root)
    if label not in s["label_names"]:
        raise ValueError(f"scene label must be one of {s['label_names']}, got {label!r}")
    j = s["label_names"].index(label)
    X = np.vstack([s["X_train"], s["X_test"]])
    y = np.concatenate([s["Y_train"][:, j], s["Y_test"][:, j]]).astype(int)
    return X, y


def make_splits(y, trials, seed, name, train_fraction=0.5, max_train=None):
    """Boolean ``(len(trials), n)`` training masks of the trials ``trials`` (a count or a
    list of trial indices): stratified random splits, each trial from its own seed stream
    ``(seed, "mgpc", name, "split", trial)``; ``max_train`` caps the size of the training
    part (the rest is test)."""
    y = np.asarray(y)
    trials = range(trials) if isinstance(trials, (int, np.integer)) else list(trials)
    masks = np.zeros((len(trials), y.size), dtype=bool)
    for row, t in enumerate(trials):
        rng = rng_for(seed, "mgpc", name, "split", t)
        for c in np.unique(y):
            idx = rng.permutation(np.flatnonzero(y == c))
            k = int(round(train_fraction * idx.size))
            if max_train is not None:
                k = min(k, int(round(max_train * idx.size / y.size)))
            masks[row, idx[: max(k, 1)]] = True
    return masks


def user_task(dataset, task):
    """Inputs and 0/1 labels of one task of the user's data set (a
    :class:`kclf_workflow.datasets.user_data.UserDataset`), train and test files pooled as
    scene's are: a binary set's task is the class taken as positive, a multi-label set's
    one of its labels.  ``standardize: true`` z-scores the pooled features."""
    d = user_data.require_task(dataset, ("binary", "multilabel"), "mgpc.datasets")
    if task not in d.classes:
        kind = "labels" if d.task == "multilabel" else "classes"
        raise ValueError(
            f"mgpc.datasets.{d.name}.tasks: {task!r} is not one of its {kind} "
            f"{plain(list(d.classes))}"
        )
    X = d.X if not d.fixed_split else np.vstack([d.X, d.X_test])
    Y = d.y if not d.fixed_split else np.concatenate([d.y, d.y_test])
    j = d.classes.index(task)
    y = (Y[:, j] if d.task == "multilabel" else (Y == j)).astype(int)
    if d.standardize:
        X = user_data.standardize_split(X, X[:1])[0]
    return {"X": X, "y": y, "image_shape": np.array([0, 0])}


def load_task(dataset, task, scene_root=None):
    """Raw inputs, labels and image shape (``[0, 0]`` without images) of one task."""
    if dataset == "digits":
        images, y = digits_task(task)
        X, shape = images.reshape(len(y), -1), np.array(images.shape[1:])
    elif dataset == "scene":
        X, y = scene_task(scene_root, task)
        shape = np.array([0, 0])
    else:
        raise ValueError(f"dataset must be 'digits' or 'scene', got {dataset!r}")
    return {"X": X, "y": y, "image_shape": shape}


def prepare(dataset, task, seed, trials, train_fraction=0.5, max_train=None, scene_root=None):
    """Raw inputs, labels and training masks of one task, as a dict of arrays."""
    data = load_task(dataset, task, scene_root)
    data["train"] = make_splits(
        data["y"], trials, seed, f"{dataset}/{task}", train_fraction, max_train
    )
    return data


def features(data, representation, gabor_options=None):
    """The representation of ``data["X"]`` (``"features"``: the inputs as they are)."""
    if representation == "features":
        return np.asarray(data["X"], dtype=float)
    shape = tuple(int(s) for s in data["image_shape"])
    if not all(shape):
        raise ValueError(f"representation {representation!r} needs images; this task has none")
    opts = dict(gabor_options or {}) if representation == "gabor" else {}
    return represent(data["X"], representation, shape, **opts)


def error_rates(y_true, y_pred):
    """FN rate (among positives), FP rate (among negatives), classification error."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    pos, neg = y_true == 1, y_true == 0
    fn = float(np.mean(y_pred[pos] == 0)) if pos.any() else float("nan")
    fp = float(np.mean(y_pred[neg] == 1)) if neg.any() else float("nan")
    return fn, fp, float(np.mean(y_pred != y_true))


def _fit(method, X, y, cfg, random_state):
    """Fitted estimator of ``method`` on ``(X, y)`` and its chosen hyper-parameters."""
    method_spec = spec("mgpc", method)
    est = method_spec.build(X, y, cfg, random_state).fit(X, y)
    return est, method_spec.chosen(est)


def _score(est, X):
    if hasattr(est, "decision_function"):
        return est.decision_function(X)
    return est.predict_proba(X)[:, 1]


def run(data, X, method, seed, cfg, dataset, task, representation, *, n_bins=10, trials=None):
    """Fit ``method`` on every trial's training half of ``(X, data["y"])``; ``trials`` are
    the indices of the rows of ``data["train"]`` (default 0, 1, ...).

    Returns ``(records, curves)`` (no records and ``curves = {"skipped": reason}`` for
    ``gpy_ep`` without GPy): tidy records of FN, FP, CE, accuracy and AUC per trial
    and the probability metrics of :func:`kclf_workflow.records.calibration_records` (``n_bins``
    equal-width reliability bins) of the test-set ``predict_proba``; and arrays for the
    figures: ``y_test_<t>``, ``score_<t>`` (test scores; larger means positive) and, for
    the ridge methods, ``lams`` and ``lam_errors`` of shape ``(trials, n_lams, 3)`` (test
    FN, FP, CE at every lambda).
    """
    method_spec = spec("mgpc", method)
    why = method_spec.unavailable()
    if why:
        return [], {"skipped": np.array(why)}
    y = np.asarray(data["y"])
    masks = np.asarray(data["train"], dtype=bool)
    name = f"{dataset}-{representation}"
    rows, curves = [], {}
    lam_curve = method_spec.options.get("lam_curve", False)
    lams = np.asarray(cfg.get("lams") or DEFAULT_LAMS, dtype=float)
    lam_errors = np.full((len(masks), lams.size, 3), np.nan)
    trials = range(len(masks)) if trials is None else list(trials)
    if len(trials) != len(masks):
        raise ValueError(f"{len(masks)} training masks but {len(trials)} trial indices")
    progress = Progress(logger, f"{METHODS[method]} trials", len(trials))
    for row, (t, train) in enumerate(zip(trials, masks)):
        rs = seed_for(seed, "mgpc", dataset, task, representation, method, t)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            scaler = StandardScaler().fit(X[train]) if cfg.get("standardize", False) else None
            Xtr = scaler.transform(X[train]) if scaler else X[train]
            Xte = scaler.transform(X[~train]) if scaler else X[~train]
            t0 = time.perf_counter()
            est, params = _fit(method, Xtr, y[train], cfg, rs)
            secs = time.perf_counter() - t0
            pred = est.predict(Xte)
            score = _score(est, Xte)
            proba = est.predict_proba(Xte)
            if lam_curve:
                for k, lam in enumerate(lams):
                    p = method_spec.refit({"lam": float(lam)}, cfg).fit(Xtr, y[train]).predict(Xte)
                    lam_errors[row, k] = error_rates(y[~train], p)
        fn, fp, ce = error_rates(y[~train], pred)
        auc = float(roc_auc_score(y[~train], score))
        progress.step(f"trial {t}: accuracy {100 * (1 - ce):.2f} %, fit {secs:.1f} s")
        values = {"fn": fn, "fp": fp, "ce": ce, "accuracy": 1.0 - ce, "auc": auc}
        for metric, value in values.items():
            rows.append(record(name, task, METHODS[method], t, metric, value, secs, params))
        rows += calibration_records(
            y[~train],
            np.clip(proba, 0.0, 1.0),
            labels=est.classes_,
            dataset=name,
            task=task,
            method=METHODS[method],
            trial=t,
            n_bins=n_bins,
            fit_seconds=secs,
            params=params,
        )
        curves[f"y_test_{t}"] = y[~train]
        curves[f"score_{t}"] = np.asarray(score, dtype=float)
    if lam_curve:
        curves["lams"] = lams
        curves["lam_errors"] = lam_errors
    return rows, curves
