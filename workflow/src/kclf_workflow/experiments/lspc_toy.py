"""The LSPC toy experiment (LSPC-new paper, Section 3.1, Figure 1)."""

from __future__ import annotations

import copy
import time

import numpy as np

from ..datasets import lspc_toy
from ..methods import family_methods, spec
from ..records import calibration_records, record
from ..seeding import rng_for, seed_for

#: slug -> display name (the registry's "lspc_toy" family)
METHODS = family_methods("lspc_toy")
GRID = np.linspace(-5.0, 5.0, 1001)
KL_EPS = 1e-6


def posterior_distances(P_hat, P_true, eps=KL_EPS):
    """L1 = mean over the grid of ``sum_y |p^(y|x) - p(y|x)|``; KL = mean of
    ``sum_y p(y|x) log(p(y|x) / p^(y|x))``, with ``p^`` clipped to ``[eps, 1]`` (LSPC-new's
    exact zeros and LSPC''s negative outputs would otherwise make KL infinite)."""
    l1 = float(np.mean(np.abs(P_hat - P_true).sum(axis=1)))
    q = np.clip(P_hat, eps, 1.0)
    kl = float(np.mean((P_true * np.log(P_true / q)).sum(axis=1)))
    return l1, kl


def calibration_proba(model, X):
    """Test-set probabilities that the calibration metrics score.

    LSPC-new and LSPC: ``predict_proba`` as is.  LSPC' (``rounding="none"``, Eq. 5) can
    give negative estimates and estimates above one, which are not probabilities; they
    are scored after the minimal repair, LSPC-new's rounding (Eq. 6) of LSPC''s raw
    outputs: clipped at 0 and renormalised, uniform where all are <= 0.  (LSPC''s
    repaired outputs are therefore LSPC-new's model at LSPC''s CV choice of sigma and
    lambda.)

    Returns
    -------
    P : ndarray of shape (n, 2)
        Rows on the simplex, columns in ``classes_`` order.
    n_repaired : int
        Rows that the repair changed (0 for LSPC-new and LSPC).
    """
    P = model.predict_proba(X)
    if model.rounding != "none":
        return P, 0
    # LSPC-new's rounding reads the same unrounded alpha~ (Eq. 6 rounds the outputs, not
    # the parameters): the fitted model with rounding="outputs" predicts it
    repaired = copy.copy(model.best_estimator_).set_params(rounding="outputs")
    fixed = repaired.predict_proba(X)
    return fixed, int(np.count_nonzero(np.abs(fixed - P).max(axis=1) > 1e-12))


def make_samples(seed, trials, n_train_per_class=250, n_test_per_class=250):
    """Training and test samples of each trial (a count or a list of trial indices),
    each trial from its own seed stream."""
    out = {}
    for t in range(trials) if isinstance(trials, int) else trials:
        rng = rng_for(seed, "lspc_toy", "trial", t)
        out[f"X_{t}"], out[f"y_{t}"] = lspc_toy.sample(n_train_per_class, rng)
        out[f"Xt_{t}"], out[f"yt_{t}"] = lspc_toy.sample(n_test_per_class, rng)
    return out


def fit_method(samples, method, seed, cv=2, sigmas=None, lams=None, n_bins=10, variant=None):
    """Fit one method on every trial with (sigma, lambda) by ``cv``-fold CV over ``sigmas``
    x ``lams`` (None: the papers' families' grid, :data:`kclf.model_selection.DEFAULT_LAMS`
    and the widths :data:`kclf.model_selection.DEFAULT_SIGMA_FACTORS` times the median
    distance).

    Returns ``(records, curves)``: records of accuracy, L1 and KL distance to the true
    posterior on a grid over [-5, 5], and the probability metrics on the test set
    (:func:`kclf_workflow.records.calibration_records` with ``n_bins`` reliability bins, of
    :func:`calibration_proba`; plus ``n_repaired``, the test rows LSPC' needed repaired);
    curves of trial 0: p^(y=1|x) on the grid and the unrounded alpha~_1 at the sorted
    training inputs (Figure 1 (a), (b)).  ``variant``: further parameters of the search
    (LSPC-new's ``basis``, ``class_weight``), named in the records' params.
    """
    method_spec = spec("lspc_toy", method)
    name = method_spec.name
    trials = sorted(int(k[2:]) for k in samples if k.startswith("X_"))
    P_true = lspc_toy.true_posterior(GRID)
    rows, curves = [], {}
    for t in trials:
        X, y, Xt, yt = (samples[f"{k}_{t}"] for k in ("X", "y", "Xt", "yt"))
        t0 = time.perf_counter()
        rs = seed_for(seed, "lspc_toy", "cv", t)
        model = method_spec.build(sigmas, lams, cv, rs, variant).fit(X, y)
        secs = time.perf_counter() - t0
        params = {**method_spec.chosen(model), **(variant or {})}
        acc = float(np.mean(model.predict(Xt) == yt))
        P_hat = model.predict_proba(GRID[:, None])
        l1, kl = posterior_distances(P_hat, P_true)
        for metric, value in (("accuracy", acc), ("l1_posterior", l1), ("kl_posterior", kl)):
            rows.append(record("lspc_toy", "y", name, t, metric, value, secs, params))
        P_test, n_repaired = calibration_proba(model, Xt)
        rows += calibration_records(
            yt,
            P_test,
            labels=model.classes_,
            dataset="lspc_toy",
            task="y",
            method=name,
            trial=t,
            n_bins=n_bins,
            fit_seconds=secs,
            params=params,
        )
        rows.append(record("lspc_toy", "y", name, t, "n_repaired", n_repaired, secs, params))
        if t == trials[0]:
            order = np.argsort(X[:, 0])
            curves = {
                "grid": GRID,
                "p1": P_hat[:, 0],
                "x_sorted": X[order, 0],
                "alpha1": model.best_estimator_.alpha_[order, 0],
            }
    return rows, curves


def run_trial(
    seed,
    trial,
    n_train_per_class=250,
    n_test_per_class=250,
    cv=2,
    sigmas=None,
    lams=None,
    n_bins=10,
):
    """All three methods on one trial (the tests' entry point)."""
    samples = make_samples(seed, [trial], n_train_per_class, n_test_per_class)
    rows = []
    for method in METHODS:
        rows += fit_method(samples, method, seed, cv, sigmas, lams, n_bins)[0]
    return rows, None
