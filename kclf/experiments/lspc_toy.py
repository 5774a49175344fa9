"""One trial of the LSPC toy experiment (LSPC-new paper, Section 3.1, Figure 1)."""

from __future__ import annotations

import time

import numpy as np

from ..datasets import lspc_toy
from ..lspc_cv import LSPCCV
from ..records import record
from ..seeding import rng_for, seed_for

METHODS = {"LSPC-new": "outputs", "LSPC": "parameters", "LSPC'": "none"}
GRID = np.linspace(-5.0, 5.0, 1001)
KL_EPS = 1e-6


def posterior_distances(P_hat, P_true, eps=KL_EPS):
    """L1 = mean over the grid of sum_y |p^(y|x) - p(y|x)|; KL = mean of
    sum_y p(y|x) log(p(y|x) / p^(y|x)), with p^ clipped to [eps, 1] (LSPC-new's exact
    zeros and LSPC''s negative outputs would otherwise make KL infinite)."""
    l1 = float(np.mean(np.abs(P_hat - P_true).sum(axis=1)))
    q = np.clip(P_hat, eps, 1.0)
    kl = float(np.mean((P_true * np.log(P_true / q)).sum(axis=1)))
    return l1, kl


def run_trial(
    seed, trial, n_train_per_class=250, n_test_per_class=250, cv=2, sigmas=None, lams=None
):
    """Fit LSPC-new, LSPC and LSPC' with (sigma, lambda) by ``cv``-fold CV on fresh samples.

    Returns ``(records, curves)``: tidy records (accuracy, L1 and KL distance to the true
    posterior on a grid over [-5, 5]) and, per method, the estimated p(y=1|x) on the grid
    and the unrounded alpha~_1 at the sorted training inputs (Figure 1 (a), (b)).
    """
    rng = rng_for(seed, "lspc_toy", "trial", trial)
    X, y = lspc_toy.sample(n_train_per_class, rng)
    Xt, yt = lspc_toy.sample(n_test_per_class, rng)
    P_true = lspc_toy.true_posterior(GRID)
    order = np.argsort(X[:, 0])
    rows, curves = [], {"grid": GRID, "true": P_true[:, 0], "x_sorted": X[order, 0]}
    for method, rounding in METHODS.items():
        t0 = time.perf_counter()
        model = LSPCCV(
            sigmas=sigmas,
            lams=lams,
            cv=cv,
            rounding=rounding,
            random_state=seed_for(seed, "lspc_toy", "cv", trial),
        ).fit(X, y)
        secs = time.perf_counter() - t0
        params = {"sigma": model.sigma_, "lam": model.lam_}
        acc = float(np.mean(model.predict(Xt) == yt))
        P_hat = model.predict_proba(GRID[:, None])
        l1, kl = posterior_distances(P_hat, P_true)
        for metric, value in (("accuracy", acc), ("l1_posterior", l1), ("kl_posterior", kl)):
            rows.append(record("lspc_toy", "y", method, trial, metric, value, secs, params))
        curves[method] = P_hat[:, 0]
        curves[f"{method}/alpha1"] = model.best_estimator_.alpha_[order, 0]
    return rows, curves
