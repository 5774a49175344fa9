"""One trial of a multi-task binary AUC experiment (LSPC-new paper, Sec. 4).

Used by the PASCAL VOC (20 classes), MULAN scene (6 labels) and audio-tagging (tags)
experiments: T binary tasks that share the inputs (features, or a precomputed kernel),
a random training/test split per trial, hyper-parameters by K-fold CV on the training
part only, AUC per task on the test part.

Methods (the registry's "auc" family, :mod:`kclf_workflow.methods.auc`): ``lspc_new``
(LSPC-new) and ``lspc`` (LSPC) via :class:`kclf.LSPCCV`, ``klr`` via
:class:`kclf.KernelLogisticRegressionCV` (each searches sigma x lambda for all tasks at
once), and ``svc``: scikit-learn's SVC with (C, gamma) by ``GridSearchCV`` on ROC AUC per
task, then Platt scaling by :class:`kclf.PlattScaled` for probabilities.  A multi-task
fit's time is shared equally by its tasks in the records' ``fit_seconds``.  A task whose
training part holds one class gets the training prevalence as its constant prediction
(no fit); a task whose test part holds one class has no AUC, and that (task, trial) is
left out of the records.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from kclf import PlattScaled
from kclf.model_selection import DEFAULT_LAMS, DEFAULT_SIGMA_FACTORS, best_index

from ..methods import family_methods, spec, specs
from ..progress import Progress
from ..records import calibration_records, record
from ..seeding import rng_for, seed_for

logger = logging.getLogger(__name__)

METHODS = family_methods("auc")


@dataclass(frozen=True)
class TrialOptions:
    """How a multi-task trial fits and scores its methods.

    ``kernel``: "rbf" (``X`` features) or "precomputed" (``X`` a kernel); ``cv`` the folds of
    every search; ``sigma_factors`` the Gaussian widths as multiples of the median pairwise
    distance of the trial's training inputs (None: the papers' families' grid,
    :data:`kclf.model_selection.DEFAULT_SIGMA_FACTORS`); ``lams`` the kernel methods'
    lambdas (None: :data:`kclf.model_selection.DEFAULT_LAMS`); ``scoring`` their CV
    criterion; ``svc_Cs`` the SVC's ``C`` grid (None:
    :data:`kclf_workflow.methods.auc.DEFAULT_SVC_CS`); ``n_basis``
    LSPC's low-rank basis (LSPC-new and LSPC only; None: the exact model); ``n_bins`` the
    reliability bins of the calibration records; ``taus`` the widths of a kernel given per
    width (``X`` then a stack, one kernel per width: :func:`fit_predict`); ``variants``
    ``{slug: {parameter: value}}``, further parameters of a kernel method's search (e.g.
    ``{"lspc_new": {"basis": "classwise"}}``).
    """

    kernel: str = "rbf"
    cv: object = 2
    sigma_factors: tuple | None = None
    lams: tuple | None = None
    scoring: str = "auc"
    svc_Cs: tuple | None = None
    n_basis: int | None = None
    n_bins: int = 10
    taus: tuple | None = None
    variants: dict = field(default_factory=dict)


def make_splits(n_samples, n_train, trials, seed, dataset):
    """Seeded random (train, test) index splits, one stream per (dataset, trial)."""
    if not 1 <= n_train < n_samples:
        raise ValueError(
            f"n_train must be between 1 and n_samples - 1 = {n_samples - 1} for dataset "
            f"{dataset!r}, got {n_train}"
        )
    out = []
    for t in range(trials):
        perm = rng_for(seed, dataset, "split", t).permutation(n_samples)
        out.append((np.sort(perm[:n_train]), np.sort(perm[n_train:])))
    return out


def _split(X, train, test, kernel):
    if kernel == "precomputed" and X.ndim == 3:  # one kernel per width (tau search)
        return X[:, train][:, :, train], X[:, test][:, :, train]
    if kernel == "precomputed":
        return X[np.ix_(train, train)], X[np.ix_(test, train)]
    return X[train], X[test]


def _with_family_grid(options):
    """``options`` with the papers' families' grid where they give none: the widths
    :data:`kclf.model_selection.DEFAULT_SIGMA_FACTORS` times the median distance, the lambdas
    :data:`kclf.model_selection.DEFAULT_LAMS`."""
    factors, lams = options.sigma_factors, options.lams
    return replace(
        options,
        sigma_factors=DEFAULT_SIGMA_FACTORS if factors is None else factors,
        lams=DEFAULT_LAMS if lams is None else lams,
    )


def _per_task_fit_predict(method_spec, Xtr, ytr, Xte, options, random_state):
    """A per-task method (the SVC) on one task: its search (``(C, gamma)`` by
    ``GridSearchCV`` on ROC AUC, ``gamma`` of the widths
    :func:`kclf.model_selection.sigma_grid` of ``Xtr``), then Platt scaling of the chosen
    model."""
    search = method_spec.build(Xtr, options, random_state).fit(Xtr, ytr)
    best = clone(search.estimator).set_params(**search.best_params_)
    model = PlattScaled(best, cv=options.cv, random_state=random_state).fit(Xtr, ytr)
    return model.predict_proba(Xte)[:, 1], method_spec.chosen(search), float(search.best_score_)


def _fit_predict_one(method, Xtr, Ytr, Xte, options, random_state):
    """:func:`fit_predict` at one kernel; also returns each task's best mean CV score
    (T,) (NaN for a task not searched)."""
    method_spec = spec("auc", method)
    T = Ytr.shape[1]
    P = np.empty((Xte.shape[0], T))
    params = [{} for _ in range(T)]
    best = np.full(T, np.nan)
    prevalence = Ytr.mean(axis=0)
    fit = [t for t in range(T) if 0 < prevalence[t] < 1]
    for t in set(range(T)) - set(fit):
        P[:, t] = prevalence[t]
        params[t] = {"constant": float(prevalence[t])}
    if not fit:
        return P, 0.0, params, best
    options = _with_family_grid(options)
    t0 = time.perf_counter()
    if method_spec.options.get("per_task"):
        for t in fit:
            P[:, t], params[t], best[t] = _per_task_fit_predict(
                method_spec, Xtr, Ytr[:, t], Xte, options, random_state
            )
        return P, time.perf_counter() - t0, params, best
    extra = {}
    if options.n_basis is not None and method_spec.low_rank:
        extra = {"n_basis": options.n_basis}
    variant = options.variants.get(method, {})
    extra.update(variant)
    model = method_spec.build(Xtr, options, random_state, **extra)
    Yfit = Ytr[:, fit]
    if len(fit) == 1:  # the multi-task path needs >= 2 columns
        model.fit(Xtr, Yfit[:, 0])
        P[:, fit[0]] = model.predict_proba(Xte)[:, 1]
    else:
        model.fit(Xtr, Yfit)
        P[:, fit] = model.predict_proba(Xte)
    best[fit] = model.best_score_
    for t, (s, lam) in zip(fit, method_spec.chosen(model)):
        params[t] = {
            "sigma": None if s is None or np.isnan(s) else float(s),
            "lam": float(lam),
            **variant,  # the variant that ran (basis, class_weight), in the records
        }
    return P, time.perf_counter() - t0, params, best


def fit_predict(method, Xtr, Ytr, Xte, options=TrialOptions(), random_state=None):
    """Fit ``method`` on the (n_train, T) 0/1 matrix ``Ytr`` as ``options``
    (:class:`TrialOptions`) say, its folds seeded by ``random_state``; return (P of shape
    (n_test, T), seconds, list of per-task chosen parameters).

    ``options.taus`` (with ``kernel="precomputed"``): the widths of a kernel given per
    width, ``Xtr`` (n_taus, n_train, n_train) and ``Xte`` (n_taus, n_test, n_train), e.g.
    the HMM kernel ``exp(-D / tau)`` PSD-projected per tau.  The width is then searched
    jointly with lambda on the same folds: the method's search runs once per width (for
    LSPC one eigendecomposition per (tau, fold), every lambda and task on top), and each
    task takes the width whose best lambda scores best in CV (ties: the larger width,
    the smoother kernel, the library's tie rule :func:`kclf.model_selection.best_index`),
    with that width's model.  The parameters then hold ``tau``; the seconds are the whole
    search's.
    """
    if options.taus is None:
        return _fit_predict_one(method, Xtr, Ytr, Xte, options, random_state)[:3]
    taus = np.asarray(options.taus, dtype=float)
    if Xtr.ndim != 3 or Xtr.shape[0] != taus.size or Xte.shape[0] != taus.size:
        raise ValueError(f"taus: {taus.size} widths need one kernel each, got {Xtr.shape}")
    runs = [
        _fit_predict_one(method, Xtr[k], Ytr, Xte[k], options, random_state)
        for k in range(taus.size)
    ]
    # the SVC's grid search scores ROC AUC whatever ``scoring`` says
    rule = spec("auc", method).options.get("scoring", options.scoring)
    P = np.empty_like(runs[0][0])
    params = []
    for t in range(P.shape[1]):
        scores = np.array([run[3][t] for run in runs])
        if np.isnan(scores).all():  # not searched: the constant prediction
            P[:, t] = runs[0][0][:, t]
            params.append(runs[0][2][t])
            continue
        k = best_index(scores, rule, taus, np.zeros_like(taus))
        P[:, t] = runs[k][0][:, t]
        params.append({**runs[k][2][t], "tau": float(taus[k])})
    return P, sum(run[1] for run in runs), params


def multitask_trial(
    X, Y, train, test, methods, *, dataset, trial, seed, task_names=None, options=TrialOptions()
):
    """Run every method on one split as ``options`` (:class:`TrialOptions`) say; return
    tidy records (AUC and calibration metrics per task, see
    :func:`kclf_workflow.records.calibration_records`)."""
    Y = np.asarray(Y).astype(int)
    if Y.ndim != 2:
        raise ValueError(f"Y must be a (n_samples, n_tasks) 0/1 matrix, got shape {Y.shape}")
    task_names = list(task_names) if task_names is not None else [str(t) for t in range(Y.shape[1])]
    Xtr, Xte = _split(np.asarray(X, dtype=float), train, test, options.kernel)
    Ytr, Yte = Y[train], Y[test]
    rows = []
    for method in methods:
        rs = seed_for(seed, dataset, "cv", trial)
        P, secs, params = fit_predict(method, Xtr, Ytr, Xte, options, random_state=rs)
        per_task = secs / Y.shape[1]
        name = METHODS[method]
        for t, task in enumerate(task_names):
            if np.unique(Yte[:, t]).size < 2:
                continue
            auc = roc_auc_score(Yte[:, t], P[:, t])
            rows.append(record(dataset, task, name, trial, "auc", auc, per_task, params[t]))
            rows += calibration_records(
                Yte[:, t],
                np.clip(P[:, t], 0.0, 1.0),
                labels=[0, 1],
                dataset=dataset,
                task=task,
                method=name,
                trial=trial,
                n_bins=options.n_bins,
                fit_seconds=per_task,
                params=params[t],
            )
    return rows


def method_variants(experiment):
    """``{slug: parameters}`` of the methods' variants an experiment config sets: its
    ``lspc_new`` block (``basis``, ``class_weight`` of LSPC-new's search)."""
    variants = {key: s.variant_of(experiment) for key, s in specs("auc").items()}
    return {key: v for key, v in variants.items() if v}


def feature_trials(
    X,
    Y,
    classes,
    trials,
    method,
    *,
    dataset,
    family,
    seed,
    experiment,
    n_bins=10,
    own_n_train=None,
    source=None,
):
    """Records of ``method`` on ``trials`` of a feature data set (PASCAL VOC, MULAN scene).

    Trial ``t`` is the seeded split :func:`make_splits` of ``experiment["n_train"]``
    training samples, or, when the data set has its own split (``own_n_train``: its first
    ``own_n_train`` samples train), that split for trial 0 and seeded re-splits of the same
    training size after it.  The sigma grid is ``median_sigma(X[train]) *
    experiment["sigma_factors"]`` (None: :data:`kclf.model_selection.DEFAULT_SIGMA_FACTORS`);
    ``lams``
    or ``svc_Cs`` as the experiment gives them, ``n_basis`` (LSPC-new, LSPC) when it
    gives one.  ``family`` names the config block in the
    error messages; ``source`` the data file.
    """
    n = len(X)
    n_train = experiment["n_train"] if own_n_train is None else own_n_train
    if n_train >= n:
        raise ValueError(
            f"{family}.experiment.n_train = {n_train} leaves no test sample: {source} holds "
            f"{n} samples"
        )
    splits = make_splits(n, n_train, max(trials) + 1, seed, dataset)
    if own_n_train is not None:
        splits[0] = (np.arange(n_train), np.arange(n_train, n))
    options = TrialOptions(
        cv=experiment["folds"],
        sigma_factors=experiment["sigma_factors"],
        lams=experiment.get("lams"),
        svc_Cs=experiment.get("svc_Cs"),
        n_basis=experiment.get("n_basis"),
        n_bins=n_bins,
        variants=method_variants(experiment),
    )
    rows = []
    progress = Progress(logger, f"{method} trials", len(trials), every=0.0)
    for trial in trials:
        train, test = splits[trial]
        got = multitask_trial(
            X,
            Y,
            train,
            test,
            [method],
            dataset=dataset,
            trial=trial,
            seed=seed,
            task_names=classes,
            options=options,
        )
        scored = {r["task"] for r in got if r["metric"] == "auc"}
        if not scored:
            raise ValueError(
                f"trial {trial}: no class has positives and negatives among the {test.size} "
                f"test samples ({family}.experiment.n_train = {n_train} of {n} samples)"
            )
        missing = [c for c in classes if c not in scored]
        if missing:
            logger.warning(
                "trial %d: no AUC for %s (one class only in the test part)", trial, missing
            )
        rows += got
        progress.step(f"trial {trial}: {train.size} train, {test.size} test")
    return rows


def kernel_trials(
    K,
    Y,
    tags,
    trials,
    method,
    *,
    dataset,
    seed,
    experiment,
    n_bins=10,
    source=None,
    factor=False,
    taus=None,
    variants=None,
):
    """Records of ``method`` on ``trials`` of a precomputed kernel ``K`` (audio tagging).

    ``taus``: ``K`` is (n_taus, n, n), the kernel at each width, and every trial
    searches the width jointly with lambda on the same folds (:func:`fit_predict`);
    not with ``factor``.  ``variants``: the methods' further parameters
    (:class:`TrialOptions`; None: the experiment's).

    With ``factor=True`` ``K`` is an (n, r) factor ``Phi`` of the kernel ``Phi Phi^T``
    (Nystroem features of the landmark HMM kernel); a trial then forms only its
    (train + test)-square block, never the n x n matrix.

    Trial ``t`` is the seeded split :func:`make_splits` of ``experiment["n_train"]`` clips,
    its test part cut to ``experiment["n_test"]`` clips by a seeded draw; with fewer clips
    than asked the train:test ratio is kept.  A tag is scored in a trial only with
    ``experiment["min_positives"]`` positives and negatives in both parts; ``lams`` (and the
    SVC's ``C = 1 / lam``) as the experiment gives them.  ``source`` (the kernel file) is
    named in the error messages.
    """
    if taus is not None and (factor or K.ndim != 3):
        raise ValueError("taus needs a stack of full kernels (n_taus, n, n), not a factor")
    n = K.shape[-1] if taus is not None else K.shape[0]
    n_train, n_test = experiment["n_train"], experiment["n_test"]
    if n_train >= n - 1:
        raise ValueError(
            f"audio.experiment.n_train = {n_train} leaves fewer than 2 test clips: the kernel "
            f"has {n} usable clips ({source})"
        )
    if n_train + n_test > n:  # fewer clips than asked: keep the train:test ratio
        n_train = max(4, min(n - 2, round(n * n_train / (n_train + n_test))))
        n_test = n - n_train
        logger.warning("only %d clips: %d train / %d test per trial", n, n_train, n_test)
    splits = make_splits(n, n_train, max(trials) + 1, seed, dataset)
    lams, m = experiment["lams"], experiment["min_positives"]
    options = TrialOptions(
        kernel="precomputed",
        cv=experiment["folds"],
        lams=lams,
        svc_Cs=None if lams is None else [1.0 / v for v in lams],
        n_bins=n_bins,
        taus=taus,
        variants=method_variants(experiment) if variants is None else variants,
    )
    rows = []
    progress = Progress(logger, f"{method} trials", len(trials), every=0.0)
    for trial in trials:
        train, test = splits[trial]
        if test.size > n_test:
            test = np.sort(
                rng_for(seed, dataset, "test", trial).choice(test, n_test, replace=False)
            )
        ok = [
            k
            for k in range(Y.shape[1])
            if min(Y[train, k].sum(), (1 - Y[train, k]).sum()) >= m
            and min(Y[test, k].sum(), (1 - Y[test, k]).sum()) >= m
        ]
        if not ok:
            raise ValueError(
                f"trial {trial}: no tag has {m} positives and negatives in both the "
                f"{train.size} training and {test.size} test clips "
                "(audio.experiment.min_positives, n_train)"
            )
        if len(ok) < Y.shape[1]:
            logger.warning(
                "trial %d: tags without %d positives and negatives on both sides, not scored: %s",
                trial,
                m,
                [tags[k] for k in range(Y.shape[1]) if k not in ok],
            )
        G, Yk, tr, te = K, Y[:, ok], train, test
        if factor:  # the trial's block of Phi Phi^T; its clips renumbered train first
            idx = np.concatenate([train, test])
            G, Yk = K[idx] @ K[idx].T, Yk[idx]
            tr, te = np.arange(train.size), np.arange(train.size, idx.size)
        rows += multitask_trial(
            G,
            Yk,
            tr,
            te,
            [method],
            dataset=dataset,
            trial=trial,
            seed=seed,
            task_names=[tags[k] for k in ok],
            options=options,
        )
        progress.step(
            f"trial {trial}: {train.size} train, {test.size} test, {len(ok)} of {len(tags)} tags"
        )
    return rows


__all__ = [
    "METHODS",
    "TrialOptions",
    "make_splits",
    "fit_predict",
    "multitask_trial",
    "feature_trials",
    "kernel_trials",
]
