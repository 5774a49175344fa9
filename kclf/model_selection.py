"""The grids the CV searches walk, and the rule that picks one setting of a grid.

:class:`kclf.LSPCCV` and :class:`kclf.KernelLogisticRegressionCV` search a Gaussian
width ``sigma`` and a regularisation ``lambda`` together; their defaults are defined here
once: :data:`DEFAULT_SIGMA_FACTORS` (times the median pairwise distance of the training
inputs, :func:`sigma_grid`) and :data:`DEFAULT_LAMS`.  :func:`best_index` is the choice
both make from the mean CV scores, ties going to the smoother model; a search over
another width (a precomputed kernel's, one search per width) chooses with it too.
"""

from __future__ import annotations

import numpy as np

from ._validation import positive_grid
from .kernels import median_sigma

# The grid the papers' families walked.  A 7 x 5 grid (widths 2^-4..2^2, lambdas
# 1e-3..10) was tried as the default: better on the seeded tuning half of the 43 KEEL sets,
# worse on the other half (benchmarks/bench_defaults.py, docs/user_guide/benchmark.md),
# so not adopted.
#: Nine widths from 1/8 to 2 times the median pairwise distance, by factors of sqrt(2).
DEFAULT_SIGMA_FACTORS = 2.0 ** np.linspace(-3, 1, 9)
#: Nine lambdas from 1e-3 to 10, by factors of sqrt(10).
DEFAULT_LAMS = np.logspace(-3, 1, 9)
#: Mean CV scores closer than this (relative to the larger of the best score's magnitude
#: and 1) are ties, one part in a million: far above the round-off of a mean of fold
#: scores (a few eps per fold), below 1/n, the smallest difference of two unweighted error
#: rates of n validation rows, for any n under a million (so no unweighted error decides
#: otherwise than by exact ties), and far below the sampling error of a mean log loss or
#: AUC (of order 1 / sqrt(n)).  Weighted rows are where it matters: with class weights
#: 1000 : 0.0001 (scikit-learn's class-weight check) settings that differ only in light
#: rows differ by ~1e-8 of the validation weight; such differences are ties, and the
#: smoother setting wins rather than the one a few of the rows the weights declare
#: nearly irrelevant happen to favour.
TIE_RTOL = 1e-6


def sigma_grid(X, factors=None, *, sample_weight=None):
    """Gaussian widths relative to the data: ``factors`` times the median pairwise
    distance of ``X`` (:func:`kclf.kernels.median_sigma`).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    factors : array-like of positive floats or None, default=None
        None: :data:`DEFAULT_SIGMA_FACTORS`.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Row weights: the median of the pairwise distances of the rows repeated by their
        weights (:func:`kclf.kernels.median_sigma`).

    Returns
    -------
    sigmas : ndarray of shape (n_factors,)
    """
    factors = DEFAULT_SIGMA_FACTORS if factors is None else positive_grid(factors, "sigma_factors")
    return median_sigma(X, sample_weight=sample_weight) * factors


def best_index(scores, scoring, sigma, lam):
    """Index of the best setting, NaN scores ignored; ties go to the smoother model.

    Scores within :data:`TIE_RTOL` (one part in a million, relative to the larger of
    the best score's magnitude and 1) of the best tie; among them the largest ``sigma``
    wins, then the largest ``lam``: the smoothest fit the data do not argue against.
    Below a million unweighted validation rows two different error rates never tie;
    weighted rows whose weights are below a millionth of the validation weight cannot
    decide alone.

    Parameters
    ----------
    scores : array-like of shape (n_settings,)
        Mean CV scores of the settings.
    scoring : {"error", "log_loss", "auc"}
        Lower is better for "error" and "log_loss", higher for "auc".
    sigma, lam : array-like of shape (n_settings,)
        The settings' widths (NaN for a kernel without one) and lambdas.

    Returns
    -------
    index : int
    """
    s = np.asarray(scores, dtype=float)
    if scoring == "auc":
        s = -s  # higher is better
    s = np.where(np.isnan(s), np.inf, s)
    best = s.min()
    tie = s == best if not np.isfinite(best) else s <= best + TIE_RTOL * max(abs(best), 1.0)
    cand = np.flatnonzero(tie)
    sig = np.nan_to_num(np.asarray(sigma, dtype=float)[cand], nan=0.0)
    return int(cand[np.lexsort((np.asarray(lam, dtype=float)[cand], sig))[-1]])


__all__ = ["DEFAULT_LAMS", "DEFAULT_SIGMA_FACTORS", "TIE_RTOL", "best_index", "sigma_grid"]
