"""The kernel width search of precomputed divergence kernels (K = exp(-D / tau))."""

import numpy as np
import pytest

from kclf._folds import cv_folds
from kclf._scoring import score_proba
from kclf.features.hmm_kernel import project_psd
from kclf.lspc import LSPC
from kclf_workflow.experiments.multitask_auc import TrialOptions, fit_predict


def smoothest_best(means, taus, lams):
    """(tau, lambda) of the best mean AUC (tau-major); among settings within 1e-12 of the
    best, the largest tau, then the largest lambda."""
    means = -np.asarray(means)
    ties = [k for k, v in enumerate(means) if v <= means.min() + 1e-12]
    return max((taus[k // len(lams)], lams[k % len(lams)]) for k in ties)


def divergence_problem(n=70, seed=0):
    """A symmetric non-metric divergence of random points (its kernels indefinite before
    the projection) and two tasks."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    D = D + 0.3 * np.abs(X[:, [0]] - X[:, 0]) * (X[:, [1]] > 0)
    D = 0.5 * (D + D.T)
    np.fill_diagonal(D, 0.0)
    Y = np.c_[X[:, 0] + 0.5 * rng.normal(size=n) > 0, X[:, 1] * X[:, 2] > 0].astype(int)
    return D, Y


@pytest.mark.parametrize("options", [None, {"lspc_new": {"basis": "classwise"}}])
def test_tau_search_equals_naive_per_tau_refits(options):
    D, Y = divergence_problem()
    med = np.median(D[~np.eye(len(D), dtype=bool)])
    taus = med * np.array([0.125, 0.5, 2.0])
    # the workflow's kernels: exp(-D / tau) of all clips, PSD-projected per tau
    Ks = np.stack([project_psd(np.exp(-D / tau))[0] for tau in taus])
    train, test = np.arange(50), np.arange(50, 70)
    lams = [1e-3, 1e-2, 0.1, 1.0]
    P, _, params = fit_predict(
        "lspc_new",
        Ks[:, train][:, :, train],
        Y[train],
        Ks[:, test][:, :, train],
        TrialOptions(kernel="precomputed", taus=taus, lams=lams, cv=2, variants=options or {}),
        random_state=4,
    )
    extra = (options or {}).get("lspc_new", {})
    folds = cv_folds(Y[train], 2, 4)
    for t in range(Y.shape[1]):
        y = Y[train, t]
        means = []
        for K in Ks:
            Ktr = K[np.ix_(train, train)]
            for lam in lams:
                sc = [
                    score_proba(
                        LSPC(lam=lam, kernel="precomputed", **extra)
                        .fit(Ktr[np.ix_(tr, tr)], y[tr])
                        .predict_proba(Ktr[np.ix_(va, tr)]),
                        y[va],
                        "auc",
                    )
                    for tr, va in folds
                ]
                means.append(np.mean(sc))
        tau, lam = smoothest_best(means, taus, lams)
        assert params[t]["tau"] == tau and params[t]["lam"] == lam
        k = int(np.flatnonzero(taus == tau)[0])
        ref = LSPC(lam=lam, kernel="precomputed", **extra).fit(Ks[k][np.ix_(train, train)], y)
        np.testing.assert_allclose(
            P[:, t], ref.predict_proba(Ks[k][np.ix_(test, train)])[:, 1], atol=1e-10
        )
    # the search can choose different widths for different tasks, and not only the median
    assert {p["tau"] for p in params} <= set(taus)


def test_tau_search_runs_for_every_method_and_reports_tau():
    D, Y = divergence_problem(n=50, seed=1)
    taus = np.median(D) * np.array([0.25, 1.0])
    Ks = np.stack([project_psd(np.exp(-D / tau))[0] for tau in taus])
    tr, te = np.arange(36), np.arange(36, 50)
    for method in ("lspc", "klr", "svc"):
        P, secs, params = fit_predict(
            method,
            Ks[:, tr][:, :, tr],
            Y[tr],
            Ks[:, te][:, :, tr],
            TrialOptions(
                kernel="precomputed", taus=taus, lams=[0.01, 1.0], svc_Cs=[1.0, 100.0], cv=2
            ),
            random_state=0,
        )
        assert P.shape == (14, 2) and secs > 0
        assert all(p["tau"] in taus for p in params)
    with pytest.raises(ValueError, match="taus"):
        fit_predict(
            "lspc_new",
            Ks[0][np.ix_(tr, tr)],
            Y[tr],
            Ks[0][np.ix_(te, tr)],
            TrialOptions(kernel="precomputed", taus=taus),
        )
