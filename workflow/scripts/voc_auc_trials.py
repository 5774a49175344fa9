"""Multi-task AUC trials shared by voc_fit.py and scene_fit.py (LSPC-new paper, Sec. 4.1).

One trial: a seeded split (n_train random training images, the rest for testing, or a
given split), sigma and lambda by K-fold CV on the training part (AUC criterion) for each
task, a refit per task with the chosen values (its time is the paper's "training time"),
and the test AUC of every task with both classes present on both parts.
"""

import time

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold
from sklearn.svm import SVC

from kclf.kernels import median_sigma, squared_distances
from kclf.klr import KernelLogisticRegression
from kclf.klr_cv import KernelLogisticRegressionCV
from kclf.lspc import LSPC
from kclf.lspc_cv import LSPCCV, SIGMA_FACTORS
from kclf.records import record
from kclf.seeding import rng_for, seed_for

ROUNDING = {"LSPC-new": "outputs", "LSPC": "parameters"}
DEFAULT_LAMS = np.logspace(-3, 1, 9)
SVC_CS = np.logspace(-1, 3, 5)


def split(seed, dataset, trial, n, n_train):
    perm = rng_for(seed, dataset, "split", trial).permutation(n)
    return perm[:n_train], perm[n_train:]


def _both(y):
    return np.unique(y).size == 2


def svc_cv(X, Y, sigmas, Cs, folds, cv_seed):
    """(sigma, C) per task by K-fold CV (validation AUC), one precomputed Gram matrix per
    sigma shared by all folds, Cs and tasks."""
    n_tasks = Y.shape[1]
    splits = list(KFold(folds, shuffle=True, random_state=cv_seed).split(X))
    score = np.zeros((n_tasks, len(sigmas), len(Cs)))
    D = squared_distances(X)
    for si, s in enumerate(sigmas):
        K = np.exp(-D / (2.0 * s**2))
        for tr, va in splits:
            for j in range(n_tasks):
                if not (_both(Y[tr, j]) and _both(Y[va, j])):
                    continue
                for ci, C in enumerate(Cs):
                    m = SVC(kernel="precomputed", C=C).fit(K[np.ix_(tr, tr)], Y[tr, j])
                    f = m.decision_function(K[np.ix_(va, tr)])
                    score[j, si, ci] += roc_auc_score(Y[va, j], f)
    best = [np.unravel_index(np.argmax(score[j]), score[j].shape) for j in range(n_tasks)]
    return [(float(sigmas[a]), float(Cs[b])) for a, b in best]


def fit_trial(Xtr, Ytr, Xte, Yte, method, sigmas, lams, folds, cv_seed):
    """Per task: (auc or None, train seconds, chosen params)."""
    out = []
    if method in ROUNDING:
        cv = LSPCCV(sigmas, lams, folds, ROUNDING[method], "auc", cv_seed).fit(Xtr, Ytr)
        chosen = list(zip(cv.sigma_, cv.lam_))
        make = lambda s, l: LSPC(sigma=s, lam=l, rounding=ROUNDING[method])  # noqa: E731
    elif method == "KLR":
        cv = KernelLogisticRegressionCV(sigmas, lams, folds, "auc", random_state=cv_seed)
        cv.fit(Xtr, Ytr)
        chosen = list(zip(cv.sigma_, cv.lam_))
        make = lambda s, l: KernelLogisticRegression(sigma=s, lam=l)  # noqa: E731
    else:
        svc_chosen = svc_cv(Xtr, Ytr, sigmas, SVC_CS, folds, cv_seed)
    for j in range(Ytr.shape[1]):
        if not (_both(Ytr[:, j]) and _both(Yte[:, j])):
            out.append((None, np.nan, {}))
            continue
        if method == "SVC":
            s, C = svc_chosen[j]
            params = {"sigma": float(s), "C": float(C)}
            t0 = time.perf_counter()
            model = SVC(gamma=0.5 / s**2, C=C).fit(Xtr, Ytr[:, j])
            secs = time.perf_counter() - t0
            score = model.decision_function(Xte)
        else:
            s, l = chosen[j]
            params = {"sigma": float(s), "lam": float(l)}
            t0 = time.perf_counter()
            model = make(float(s), float(l)).fit(Xtr, Ytr[:, j])
            secs = time.perf_counter() - t0
            score = model.predict_proba(Xte)[:, 1]
        out.append((float(roc_auc_score(Yte[:, j], score)), secs, params))
    return out


def run_trials(
    X,
    Y,
    tasks,
    method,
    trials,
    seed,
    dataset,
    n_train=None,
    folds=2,
    sigma_factors=None,
    lams=None,
    splits=None,
    log=print,
):
    """Records (metric "auc") of ``method`` on every task for each trial.

    ``splits``: optional callable ``trial -> (train_idx, test_idx)``; default a random
    ``n_train`` / rest split seeded by (seed, dataset, trial).
    """
    Y = np.asarray(Y).astype(int)
    lams = DEFAULT_LAMS if lams is None else np.asarray(lams, float)
    factors = SIGMA_FACTORS if sigma_factors is None else np.asarray(sigma_factors, float)
    rows = []
    for t in trials:
        tr, te = splits(t) if splits else split(seed, dataset, t, len(X), n_train)
        sigmas = median_sigma(X[tr]) * factors
        t0 = time.perf_counter()
        res = fit_trial(
            X[tr],
            Y[tr],
            X[te],
            Y[te],
            method,
            sigmas,
            lams,
            folds,
            seed_for(seed, dataset, "cv", t),
        )
        skipped = [tasks[j] for j, r in enumerate(res) if r[0] is None]
        for task, (auc, secs, params) in zip(tasks, res):
            if auc is not None:
                rows.append(record(dataset, task, method, t, "auc", auc, secs, params))
        log(
            f"{method} trial {t}: {time.perf_counter() - t0:.1f} s; "
            f"tasks without both classes (left out): {skipped}"
        )
    return rows
