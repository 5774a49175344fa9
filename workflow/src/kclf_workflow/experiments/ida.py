"""The IDA benchmark protocol of the MAPLP paper (section 5), for every method.

For each dataset and method: the hyper-parameters are chosen by 5-fold CV on each of the
first 5 realisations' training sets, the median (per parameter) of the five best values
is used for every realisation, and the test error is recorded per realisation.  This is
Rätsch et al.'s protocol for the IDA benchmarks, followed by the MAPLP paper.

Every realisation also records the quality of the test-set probabilities
(:func:`kclf_workflow.records.calibration_records`: log loss, Brier score, ECE, reliability bins).
``maplp_bias`` is MAPLP with a constant basis function per class (``MAPLP(bias=True)``):
an ablation, not in the paper, that explains the printed LP's failure on ringnorm.

KLR, LSPC-new and LSPC give posterior estimates; MAPLP's ``predict_proba`` is its
normalised surrogate ``w(x, y) / sum_y' w(x, y')`` (not a calibrated posterior, see
:class:`kclf.maplp.MAPLP`); the SVM has no probabilities of its own, so the selected SVC
is Platt-scaled (:class:`sklearn.calibration.CalibratedClassifierCV` with cross-validated
decision values on the training set, ``ensemble=False``).  These steps run after the
timed fit and prediction, so the ``seconds`` records are those of the error protocol.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np

from kclf import PlattScaled
from kclf.kernels import median_sigma

from ..datasets import breiman, user_data
from ..datasets import ida as data
from ..methods import family_methods, spec
from ..progress import Progress
from ..records import calibration_records, record
from ..seeding import seed_for

logger = logging.getLogger(__name__)

#: method key -> label used in tables (the registry's "ida" family)
METHODS = family_methods("ida")


def prepare(name, seed, mirror=None, benchmarks_mat=None, generate=(), n_realisations=None):
    """Pattern set and realisations of one dataset, from the best source available.

    Order: ``benchmarks_mat`` (the standard splits); ``wdbc`` from scikit-learn; Breiman's
    generator when ``name`` is in ``generate`` or the mirror lacks it; the mirror's pattern
    set, with realisation ``r`` from ``splits_asc`` where present and otherwise drawn by
    :func:`kclf_workflow.datasets.ida.stratified_splits`.  ``n_realisations``: keep the first R, or
    (a list) exactly those realisations; each depends on the seed and its index only.

    Returns
    -------
    dict with ``X``, ``y``, ``train``, ``test`` (R x n index arrays), ``origin`` (text) and
    ``from_asc`` (the 1-based realisations taken from the IDA split files).
    """
    which = None if n_realisations is None or isinstance(n_realisations, int) else n_realisations
    which = None if which is None else [int(r) for r in which]
    mirror_set = mirror is not None and (Path(mirror) / "unique_xt" / f"{name}.mat").is_file()
    if benchmarks_mat is not None and name in data.PUBLISHED:
        X, y, train, test = data.load_benchmarks_mat(benchmarks_mat, name)
        origin = "benchmarks.mat, standard realisations"
        if which is not None:
            if max(which) >= len(train):
                raise ValueError(f"{benchmarks_mat}: {name} has {len(train)} realisations")
            train, test = train[which], test[which]
        else:
            train, test = train[:n_realisations], test[:n_realisations]
        return {"X": X, "y": y, "train": train, "test": test, "origin": origin, "from_asc": []}
    if name == "wdbc":
        X, y = data.load_wdbc()
        origin = "scikit-learn breast cancer Wisconsin; seeded stratified realisations"
    elif name in breiman.GENERATORS and (name in generate or not mirror_set):
        X, y = data.generate(name, seed)
        origin = "Breiman's generator; seeded stratified realisations"
    elif mirror_set:
        X, y = data.load_pattern_set(name, mirror)
        origin = "mirror pattern set; seeded stratified realisations"
    else:
        raise ValueError(
            f"IDA dataset {name!r}: no source (not in benchmarks.mat, the mirror "
            f"{mirror!r} or the generators); diabetis and heart need benchmarks.mat"
        )
    train, test = data.stratified_splits(
        y, name, seed, n_realisations=n_realisations if which is None else which
    )
    from_asc = []
    if mirror is not None and name in data.PUBLISHED and "generator" not in origin:
        for row, r in enumerate(range(len(train)) if which is None else which):
            split = data.load_split_asc(name, mirror, r + 1)
            if split is None:
                continue
            used = set()
            train[row] = data.asc_split_indices(X, y, split[0], split[1], used)
            test[row] = data.asc_split_indices(X, y, split[2], split[3], used)
            from_asc.append(r + 1)
        if from_asc:
            origin += f" (realisation {', '.join(map(str, from_asc))} from the IDA split files)"
    return {"X": X, "y": y, "train": train, "test": test, "origin": origin, "from_asc": from_asc}


def prepare_user(dataset, seed, realisations, test_size, where="ida.datasets"):
    """:func:`prepare`'s dictionary for the user's binary data set (a
    :class:`kclf_workflow.datasets.user_data.UserDataset`): ``y = +1`` for its second class.

    A fixed split (``train:`` + ``test:``) is realisation 0, the only one; a ``path:`` set
    gets realisation ``r`` from
    :func:`kclf_workflow.datasets.user_data.stratified_realisation` (``test_size`` of the
    patterns for testing), the split the family draws for a pattern set of that name.
    ``standardize: true`` z-scores the features on the training part (fixed split) or the
    whole pattern set (as the IDA sets were prepared); left unset, they are used as given,
    as the IDA pattern sets are.
    """
    d = user_data.require_task(dataset, ("binary",), where)
    realisations = [int(r) for r in realisations]
    origin = user_data.describe(d)
    if d.fixed_split:
        if realisations != [0]:
            raise ValueError(
                f"datasets.{d.name}: a fixed train/test split is realisation 0 only, "
                f"asked for {realisations}"
            )
        X_train, X_test = d.X, d.X_test
        if d.standardize:
            X_train, X_test = user_data.standardize_split(X_train, X_test)
        X = np.vstack([X_train, X_test])
        codes = np.concatenate([d.y, d.y_test])
        n_train = len(X_train)
        train, test = np.arange(n_train)[None], np.arange(n_train, len(X))[None]
        origin += "; its train/test split (one realisation)"
    else:
        X, codes = d.X, d.y
        if d.standardize:
            X = user_data.standardize_split(X, X[:1])[0]
        parts = [
            user_data.stratified_realisation(codes, d.name, seed, r, test_size)
            for r in realisations
        ]
        train = np.stack([a for a, _ in parts])
        test = np.stack([b for _, b in parts])
        origin += f"; seeded stratified realisations, {test.shape[1]} test patterns"
    y = np.where(codes == 1, 1, -1)
    return {"X": X, "y": y, "train": train, "test": test, "origin": origin, "from_asc": []}


def sigma_grid(X, factors):
    """Gaussian widths ``median_sigma(X) * factors`` (one grid per dataset, from its whole
    pattern set, so the median of the five selected values is a grid value)."""
    return median_sigma(X) * np.asarray(factors, dtype=float)


def variant(method, grids):
    """The variant the config's block sets for ``method`` (LSPC-new's ``lspc_new``:
    ``basis``, ``class_weight``; ``{}`` for the others): its search and its final fits run
    it."""
    return spec("ida", method).variant_of(grids)


def make_estimator(method, params, grids=None):
    """The method's estimator with fixed (selected) hyper-parameters."""
    return spec("ida", method).refit(params, grids)


def select(X, y, train, method, grids, seed, dataset, n_select=5, n_folds=5):
    """CV on each of the first ``n_select`` realisations; the per-parameter median.

    Parameters
    ----------
    X, y : arrays
        The pattern set.
    train : ndarray of shape (R, n_train)
        Training indices of every realisation.
    grids : dict
        ``sigma_factors`` (times :func:`sigma_grid`'s median), ``svm_C``, ``lams``,
        optional ``maplp_solver_options``.
    seed : int
        Config seed; realisation ``r``'s folds use ``seed_for(seed, "ida", dataset,
        method, "cv", r)``.

    Returns
    -------
    dict with ``params`` (the medians), ``best`` (per realisation) and ``cv_seconds``.
    """
    method_spec = spec("ida", method)
    sigmas = sigma_grid(X, grids["sigma_factors"])
    best, secs = [], []
    for r in range(min(n_select, len(train))):
        idx = train[r]
        t0 = time.perf_counter()
        search = method_spec.build(
            sigmas, grids, n_folds, seed_for(seed, "ida", dataset, method, "cv", r)
        )
        search.fit(X[idx], y[idx])
        secs.append(time.perf_counter() - t0)
        best.append(method_spec.chosen(search))
    params = {k: float(np.median([b[k] for b in best])) for k in best[0]}
    return {"params": params, "best": best, "cv_seconds": secs}


def predicted_probabilities(method, est, X_train, y_train, X_test, folds=5, random_state=None):
    """Test-set class probabilities of a fitted estimator, columns in ``est.classes_`` order.

    A method whose spec says ``probability="platt"`` (the SVM, an ``SVC`` without
    probabilities) is Platt-scaled: a copy with the same hyper-parameters is wrapped in
    ``CalibratedClassifierCV(method="sigmoid", ensemble=False)`` on ``folds`` stratified
    folds of the training set (seeded by ``random_state``).  Every other method returns
    its own ``predict_proba``.
    """
    if spec("ida", method).probability == "platt":
        platt = PlattScaled(est, cv=folds, random_state=random_state)
        return platt.fit(X_train, y_train).predict_proba(X_test)  # classes sorted, as est's
    return est.predict_proba(X_test)


def evaluate(
    X,
    y,
    train,
    test,
    method,
    selection,
    dataset,
    grids=None,
    realisations=None,
    *,
    seed=0,
    n_bins=10,
):
    """Fit with the selected parameters on every realisation; records per realisation:
    ``error`` (test error, %), ``seconds`` (learning + classification), ``seconds_with_cv``
    (plus the mean CV time of one selection realisation) and the probability metrics of
    :func:`kclf_workflow.records.calibration_records` (``n_bins`` reliability bins) of the test-set
    probabilities (:func:`predicted_probabilities`; the SVM's Platt folds are seeded by
    ``seed_for(seed, "ida", dataset, method, "platt", r)``).  Only the fit and the test
    prediction are timed."""
    params = selection["params"]
    named = {**params, **variant(method, grids)}  # the records name the variant that ran
    cv_mean = float(np.mean(selection["cv_seconds"]))
    label = spec("ida", method).name
    folds = int((grids or {}).get("folds", 5))
    rows = []
    which = range(len(train)) if realisations is None else realisations
    progress = Progress(logger, f"{label} realisations", len(which))
    for r in which:
        Xtr, ytr, Xte, yte = X[train[r]], y[train[r]], X[test[r]], y[test[r]]
        t0 = time.perf_counter()
        est = make_estimator(method, params, grids).fit(Xtr, ytr)
        fit_s = time.perf_counter() - t0
        err = 100.0 * float(np.mean(est.predict(Xte) != yte))
        total = time.perf_counter() - t0
        for metric, value in (
            ("error", err),
            ("seconds", total),
            ("seconds_with_cv", total + cv_mean),
        ):
            rows.append(record(dataset, "binary", label, r, metric, value, fit_s, named))
        proba = predicted_probabilities(
            method, est, Xtr, ytr, Xte, folds, seed_for(seed, "ida", dataset, method, "platt", r)
        )
        rows += calibration_records(
            yte,
            np.clip(proba, 0.0, 1.0),
            labels=est.classes_,
            dataset=dataset,
            task="binary",
            method=label,
            trial=r,
            n_bins=n_bins,
            fit_seconds=fit_s,
            params=named,
        )
        progress.step(f"realisation {r}: error {err:.2f} %")
    return rows
