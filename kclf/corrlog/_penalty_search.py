"""The cross-validated choice of :class:`kclf.CorrLog`'s penalties (private).

The grids, the CV criteria the estimator's decoding gives the path, and the choice from
the folds' scores.  Each fold's ``rho2 x rho1`` grid is solved as one warm-started path by
:func:`kclf.corrlog._solver.fold_path`; the folds run in parallel threads (``n_jobs``), each
on one BLAS thread, so the result does not depend on ``n_jobs``.  The shared ``(rho1,
rho2)`` maximises the mean fold score of the decoder's criterion (subset accuracy for the
MAP (21), 1 - Hamming loss for the marginals, example-based F1 for the F1 decision).  Ties
go to the smoother model: the first maximum to 12 digits, grids strongest first.

With ``penalty="per_label"`` each label's weights then get their own setting, chosen on a
second warm-started path per fold (:func:`kclf.corrlog._solver.fold_weight_path`) with
the couplings' penalty held at the shared choice and every label's weights moving over
the grid: the structure the final model has.  On the first path a label's score at a
setting comes from a fit with the couplings at that setting too, so labels were credited
with gains the final model cannot keep (on CAL500 the per-label model missed the
per-label logistic regressions' Hamming loss, 0.1332 against 0.1331; a test shows the
second path's scores equal direct fits of the final structure).  The labels' criterion
(:func:`label_scorer`, ``"auto"``) is the held-out log-likelihood of the label's
marginal ``P(y_j = 1 | x)`` where the marginals are exact (up to
:data:`kclf.corrlog._decoding.MAX_EXACT_LABELS` labels), the quantity behind the
Hamming-optimal decision; beyond, the held-out conditional log-likelihood given the other
labels, Eq. (11) (Li et al., IEEE TIP 2016), the term of the pseudo-likelihood (12) the
label's weights control.  Measured on the MULAN test sets (Hamming on marginals,
per-label first path / second path with (11) / second path with the marginal): scene
0.0953 / 0.1040 / 0.0927, medical 0.0075 / 0.0079 / 0.0082, CAL500 0.1332 / 0.1322 /
0.1320; (11) rewards leaning on couplings the marginals do not have (scene), and the
marginals beyond 12 labels need belief propagation at every setting and fold (CAL500:
296 s against 33 s with (11)).
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from .._progress import SILENT
from ._decoding import (
    MAX_EXACT_LABELS,
    _conditional_log_likelihood,
    _decode,
    _map_subset_accuracy,
    _marginals,
    _score,
)
from ._solver import fold_path, fold_weight_path

#: Default CV grids (used when ``rho1`` / ``rho2`` are None), strongest first.
RHO1_GRID = (1e-2, 1e-3, 1e-4, 0.0)
RHO2_GRID = (1.0, 0.3, 0.1, 0.03, 0.01, 1e-3)


def penalty_grids(rho1, rho2, rho1_grid, rho2_grid):
    """``(rho1s, rho2s)``, each sorted strongest first without repeats: the given value, or
    the grid (None or empty: :data:`RHO1_GRID`, :data:`RHO2_GRID`)."""

    def grid(value, given, default):
        if value is not None:
            return [value]
        return list(default if given is None or len(given) == 0 else given)

    rho1s = grid(rho1, rho1_grid, RHO1_GRID)
    rho2s = grid(rho2, rho2_grid, RHO2_GRID)
    return (
        sorted({float(r) for r in rho1s}, reverse=True),
        sorted({float(r) for r in rho2s}, reverse=True),
    )


def cv_criteria(decode, inference, bp_max_iter, bp_damping, gibbs, per_label):
    """The functions :func:`kclf.corrlog._solver.fold_path` scores a fold with:
    ``(decode, score, fast_score, label_score)`` for the decoder ``decode`` (the MAP's
    subset accuracy without decoding every row, :func:`_map_subset_accuracy`; with
    ``per_label``, each label's conditional log-likelihood (11))."""

    def decode_fn(U, A):
        return _decode(U, A, decode, inference, bp_max_iter, bp_damping, gibbs)[0]

    def score(Y_true, Y_pred, w=None):
        return _score(Y_true, Y_pred, decode, w)

    fast_score = None
    if decode == "map":

        def fast_score(U, A, Y_true, rows_ok, w=None):
            return _map_subset_accuracy(
                U, A, Y_true, rows_ok, inference, bp_max_iter, bp_damping, w
            )

    label_score = _conditional_log_likelihood if per_label else None
    return decode_fn, score, fast_score, label_score


#: The labels' criteria on the second path of ``penalty="per_label"``: ``"auto"`` (the
#: default) is the held-out log-likelihood of the label's marginal ``P(y_j = 1 | x)`` where
#: the marginals are exact (enumeration: ``m <= MAX_EXACT_LABELS`` or
#: ``inference="exact"``) and the conditional log-likelihood (11) beyond;
#: ``"conditional"`` and ``"marginal"`` use one of the two for every label count (the
#: ablation of ``benchmarks/bench_corrlog.py --per-label-criterion``).
LABEL_CRITERIA = ("auto", "conditional", "marginal")
#: Marginals are clipped to [eps, 1 - eps] in the log-likelihood.
MARGINAL_EPS = 1e-12


def label_scorer(name, inference, bp_max_iter, bp_damping):
    """Each label's held-out score ``f(U, A, Y_true) -> (m,)`` (higher is better) on the
    second path of ``penalty="per_label"``, by the criterion ``name`` of
    :data:`LABEL_CRITERIA`."""
    if name not in LABEL_CRITERIA:
        raise ValueError(f"per-label criterion must be one of {LABEL_CRITERIA}, got {name!r}")

    def score(U, A, Y_true, w=None):
        exact = inference == "exact" or U.shape[1] <= MAX_EXACT_LABELS
        if name == "conditional" or (name == "auto" and not exact):
            return _conditional_log_likelihood(U, A, Y_true, w)
        P = _marginals(U, A, inference, bp_max_iter, bp_damping)[0]
        P = np.clip(P, MARGINAL_EPS, 1.0 - MARGINAL_EPS)
        return np.average(Y_true * np.log(P) + (1 - Y_true) * np.log1p(-P), axis=0, weights=w)

    return score


def _first_max(values):
    """Index of the first maximum to 12 digits (summation order cannot break a tie)."""
    return np.unravel_index(np.argmax(np.round(values, 12)), values.shape)


def _reported(path, progress, what, k, n_folds):
    """``path`` (:func:`kclf.corrlog._solver.fold_path` or ``fold_weight_path``) that
    writes a ``progress`` line when fold ``k`` is done: its best mean score on the grid."""

    def run(*args):
        out = path(*args)
        scores = out[0] if out[0].ndim == 2 else out[0].mean(axis=-1)
        progress(
            f"{what}, fold {k + 1}/{n_folds}: best score {np.max(scores):.4g} over "
            f"{scores.size} (rho1, rho2)"
        )
        return out

    return run


def cv_select(
    params,
    X,
    Y,
    folds,
    rho1s,
    rho2s,
    criteria,
    n_jobs=None,
    per_label=False,
    second_score=None,
    progress=SILENT,
    sample_weight=None,
):
    """Choose ``(rho1, rho2)`` on the grid ``rho2s x rho1s`` (each strongest first) by the
    mean of the folds' scores (:func:`kclf.corrlog._solver.fold_path` with ``criteria``
    from :func:`cv_criteria`).

    Returns ``(rho1, rho2, cv_results, starts, label_rho)``, ``starts`` the folds' raw
    solutions at the choice for :func:`kclf.corrlog._solver.warm_start`.  With
    ``per_label``, ``label_rho = (rho1s, rho2s)`` (arrays over the labels) holds each
    label's own choice, by the mean over the folds of its score ``second_score``
    (:func:`label_scorer`; None: the conditional log-likelihood (11)) on a second
    path per fold (:func:`kclf.corrlog._solver.fold_weight_path`) with the
    couplings' penalty held at ``(rho1, rho2)`` and the weights' over the grid;
    ``cv_results`` then adds ``"mean_label_score_shared_couplings"`` and
    ``"split<k>_label_score_shared_couplings"`` (grid, m), row ``k`` every label's weights
    at ``(rho1[k], rho2[k])``, and ``"mean_n_iter_shared_couplings"``; ``starts`` take each
    label's weights and intercept from the second paths' solutions at its own choice
    (unless every label chose ``(rho1, rho2)``: the shared model).  Without, ``label_rho``
    is None.  ``cv_results`` also holds ``"seconds_solve"`` (FISTA), ``"seconds_screen"``
    (strong rules and KKT checks) and ``"seconds_decode"`` (decoding and scoring the test
    folds), summed over the folds and paths.  ``progress``
    (:class:`kclf._progress.SearchProgress`) gets a line per fold of each path.
    ``sample_weight`` (n,) or None weighs the rows of every fold's fit and score.
    """
    decode, score, fast_score, label_score = criteria
    label_score = label_score if per_label else None
    scoring = (decode, score, fast_score, label_score, sample_weight)
    with threadpool_limits(limits=1, user_api="blas"):
        out = Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(_reported(fold_path, progress, "path", k, len(folds)))(
                params, X, Y, train, test, rho1s, rho2s, *scoring
            )
            for k, (train, test) in enumerate(folds)
        )
    scores = np.mean([o[0] for o in out], axis=0)
    a, b = _first_max(scores)
    grid2, grid1 = np.meshgrid(rho2s, rho1s, indexing="ij")
    results = {"rho1": grid1.ravel(), "rho2": grid2.ravel(), "mean_score": scores.ravel()}
    for k, o in enumerate(out):
        results[f"split{k}_score"] = o[0].ravel()
    results["mean_n_iter"] = np.mean([o[1] for o in out], axis=0).ravel()
    label_scores = np.mean([o[4] for o in out], axis=0)  # (n_rho2, n_rho1, m)
    results["mean_label_score"] = label_scores.reshape(-1, Y.shape[1])
    for key in ("solve", "screen", "decode"):
        results[f"seconds_{key}"] = float(sum(o[5][key] for o in out))
    starts = [(o[2][(a, b)], o[3]) for o in out if (a, b) in o[2]]
    if not per_label:
        return rho1s[b], rho2s[a], results, starts, None
    second_score = label_score if second_score is None else second_score
    second = _weight_paths(
        params,
        X,
        Y,
        folds,
        rho1s,
        rho2s,
        (a, b),
        out,
        second_score,
        n_jobs,
        progress,
        sample_weight,
    )
    label_scores = np.mean([o[0] for o in second], axis=0)  # (n_rho2, n_rho1, m)
    key = "label_score_shared_couplings"
    results[f"mean_{key}"] = label_scores.reshape(-1, Y.shape[1])
    for k, o in enumerate(second):
        results[f"split{k}_{key}"] = o[0].reshape(-1, Y.shape[1])
    results["mean_n_iter_shared_couplings"] = np.mean([o[1] for o in second], axis=0).ravel()
    for key in ("solve", "screen", "decode"):
        results[f"seconds_{key}"] += float(sum(o[3][key] for o in second))
    choice = [_first_max(label_scores[:, :, j]) for j in range(Y.shape[1])]
    label_rho = (
        np.array([rho1s[bj] for _, bj in choice]),
        np.array([rho2s[aj] for aj, _ in choice]),
    )
    if all(c == (a, b) for c in choice):
        return rho1s[b], rho2s[a], results, starts, label_rho  # the shared model exactly
    starts = []
    for o, first in zip(second, out):
        if (a, b) not in o[2]:
            continue
        coef, intercept, A = (np.array(v) for v in o[2][(a, b)])
        for k, j in enumerate(np.flatnonzero(first[3])):
            coef[k], intercept[k] = (v[k] for v in o[2][choice[j]][:2])
        starts.append(((coef, intercept, A), first[3]))
    return rho1s[b], rho2s[a], results, starts, label_rho


def _weight_paths(
    params, X, Y, folds, rho1s, rho2s, at, out, label_score, n_jobs, progress, sample_weight=None
):
    """Each fold's second path (:func:`kclf.corrlog._solver.fold_weight_path`): the
    couplings' penalty held at the shared choice ``at = (a, b)``, the weights' moving over
    the grid, started from the fold's first-path solutions (``out``) at the strongest
    setting and at the choice."""
    a, b = at
    with threadpool_limits(limits=1, user_api="blas"):
        return Parallel(n_jobs=n_jobs, prefer="threads")(
            delayed(_reported(fold_weight_path, progress, "per-label path", k, len(folds)))(
                params,
                X,
                Y,
                train,
                test,
                rho1s,
                rho2s,
                rho1s[b],
                rho2s[a],
                label_score,
                [(p, o[2][p]) for p in sorted({(0, 0), (a, b)}) if p in o[2]],
                sample_weight,
            )
            for k, ((train, test), o) in enumerate(zip(folds, out))
        )
