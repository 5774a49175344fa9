"""The validation scores of every cross-validation inside the library (private): error
rate, log loss and ROC AUC of class posteriors, each optionally weighted by the
validation rows' ``sample_weight``.  Below the estimators: it imports none of them.

Weighted, a score is the weighted mean of its per-row terms, ``sum_i w_i e_i / sum_i
w_i`` (error, log loss; NaN where the weights sum to 0), and the AUC the weighted
Mann-Whitney statistic ``sum_{i pos, j neg} w_i w_j ([s_i > s_j] + [s_i = s_j] / 2) /
(W_pos W_neg)``, which is what ``sklearn.metrics.roc_auc_score(sample_weight=w)``
computes.  Unweighted (``sample_weight`` None) every function keeps its unweighted
arithmetic (counts, mid-ranks), so integer weights of one give the same scores to
round-off and None gives them bit for bit.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from .metrics import EPS

SCORINGS = ("error", "log_loss", "auc")


def _weighted_mean(terms, w, axis):
    """``sum_i w_i terms_i / sum_i w_i`` along ``axis`` (``w`` (n,) on that axis); NaN
    where the weights sum to 0."""
    shape = [1] * terms.ndim
    shape[axis] = w.size
    total = w.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sum(terms * w.reshape(shape), axis=axis) / total


def score_proba(P, yi, scoring, sample_weight=None):
    """Score class posteriors ``P`` (n, c) against class indices ``yi``; lower is better
    for "error" and "log_loss", higher for "auc" (binary, column 1 positive).
    ``sample_weight`` (n,): the weighted scores of the module's docstring."""
    if scoring == "auc":
        return rank_auc(yi, P[:, 1], sample_weight)
    if scoring == "error":
        wrong = np.argmax(P, axis=1) != yi
        if sample_weight is None:
            return float(np.mean(wrong))
        return float(_weighted_mean(wrong, np.asarray(sample_weight, dtype=float), 0))
    logp = np.log(np.clip(P[np.arange(yi.size), yi], EPS, 1.0))
    if sample_weight is None:
        return float(-np.mean(logp))
    return float(-_weighted_mean(logp, np.asarray(sample_weight, dtype=float), 0))


def fold_scores(P, y, scoring, sample_weight=None):
    """:func:`score_proba` of many settings and tasks at once.

    ``P`` (n_settings, n, n_tasks, c) posteriors, ``y`` (n, n_tasks) class indices,
    ``sample_weight`` None or (n,); returns (n_settings, n_tasks) scores (NaN where AUC
    is undefined).
    """
    if scoring == "auc":
        return rank_auc_columns(y[:, None, :], P[..., 1].transpose(1, 0, 2), sample_weight)
    if scoring == "error":
        terms = np.argmax(P, axis=-1) != y
    else:
        p = np.take_along_axis(P, np.broadcast_to(y[..., None], P.shape[:-1] + (1,)), -1)
        terms = np.log(np.clip(p[..., 0], EPS, 1.0))
    if sample_weight is None:
        mean = np.mean(terms, axis=1)
    else:
        mean = _weighted_mean(terms, np.asarray(sample_weight, dtype=float), 1)
    return mean if scoring == "error" else -mean


class BinaryFoldScores:
    """:func:`binary_fold_scores` over the validation rows given in blocks.

    ``add(F0, F1, y)`` takes the next rows' raw outputs (rows, n_settings, n_tasks) of the
    negative and positive class and their 0/1 labels (rows, n_tasks); ``scores()``
    returns the (n_settings, n_tasks) scores of all rows added.  Error and log loss keep
    running sums (the blocks' posteriors are never stored; a block of a few thousand
    rows stays in cache), AUC keeps the positive posteriors and ranks them at the end.
    Element by element the arithmetic of the posteriors is that of
    ``round_outputs`` (:func:`binary_fold_scores`); the error of rounded outputs compares
    ``max(F1, 0)`` with ``max(F0, 0)``, the order of the posteriors before their common
    division (the same decision but where that division rounds two outputs a few ulps
    apart to one posterior).  ``sample_weight`` (n,): the weights of the ``n`` rows in
    the order they are added (the weighted scores of the module's docstring).
    """

    def __init__(self, n, n_settings, n_tasks, rounding, scoring, sample_weight=None):
        self.n, self.rounding, self.scoring = n, rounding, scoring
        self.w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self.seen = 0
        if scoring == "auc":
            self.p1 = np.empty((n, n_settings, n_tasks))
            self.y = np.empty((n, n_tasks), dtype=int)
        else:
            self.total = np.zeros((n_settings, n_tasks))

    def _sum(self, terms, lo):
        """The (weighted) sum over the rows of ``terms`` (rows, n_settings, n_tasks)."""
        if self.w is None:
            if terms.dtype == bool:
                return np.count_nonzero(terms, axis=0)
            return np.sum(terms, axis=0)
        w = self.w[lo : lo + terms.shape[0]]
        return np.tensordot(w, terms, axes=(0, 0))

    def add(self, F0, F1, y):
        lo = self.seen
        if self.scoring == "error" and self.rounding != "none":
            # p1 > p0 <=> max(F1, 0) > max(F0, 0): both share the normaliser Z > 0 (or
            # are both 1/2), so the error needs no division
            wrong = (np.maximum(F1, 0.0) > np.maximum(F0, 0.0)) != y[:, None, :]
            self.total += self._sum(wrong, lo)
            self.seen += F1.shape[0]
            return
        if self.rounding == "none":
            Z = F0 + F1
            ok = Z != 0
        else:
            F0, F1 = np.maximum(F0, 0.0), np.maximum(F1, 0.0)
            Z = F0 + F1
            ok = Z > 0
        p1 = np.divide(F1, Z, out=np.full_like(F1, 0.5), where=ok)
        self.seen += F1.shape[0]
        if self.scoring == "auc":
            self.p1[lo : self.seen] = p1
            self.y[lo : self.seen] = y
            return
        p0 = np.divide(F0, Z, out=np.full_like(F0, 0.5), where=ok)
        y = y[:, None, :]
        if self.scoring == "error":
            self.total += self._sum((p1 > p0) != y, lo)
        else:
            p = np.where(y == 1, p1, p0)
            self.total += self._sum(np.log(np.clip(p, EPS, 1.0)), lo)

    def scores(self):
        if self.scoring == "auc":
            return rank_auc_columns(self.y[:, None, :], self.p1, self.w)
        if self.w is None:
            mean = self.total / self.n
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = self.total / self.w.sum()
        return mean if self.scoring == "error" else -mean


def binary_fold_scores(F0, F1, y, rounding, scoring, sample_weight=None):
    """:func:`fold_scores` of ``round_outputs(stack([F0, F1], -1), rounding)`` for two
    classes without the stacked arrays: ``F0``, ``F1`` (n, n_settings, n_tasks) raw
    outputs of the negative and positive class, ``y`` (n, n_tasks) 0/1, ``sample_weight``
    None or (n,); returns (n_settings, n_tasks).  The same arithmetic element by element
    (sums of the log loss in another order)."""
    acc = BinaryFoldScores(F0.shape[0], F0.shape[1], F0.shape[2], rounding, scoring, sample_weight)
    acc.add(F0, F1, y)
    return acc.scores()


def rank_auc_columns(y, S, sample_weight=None):
    """ROC AUC of every column at once by the Mann-Whitney rank statistic (ties count one
    half; ``sklearn.metrics.roc_auc_score`` without its validation overhead): ``S`` (n, ...)
    scores, ``y`` 0/1 labels broadcasting against it; returns ``S.shape[1:]`` (NaN where a
    column of ``y`` has one class, or one class of weight 0).  Unweighted the mid-ranks
    are integers or half-integers, so every rank sum is exact; ``sample_weight`` (n,)
    gives the weighted statistic (:func:`weighted_auc_columns`)."""
    S = np.asarray(S, dtype=float)
    pos = np.broadcast_to(y, S.shape) == 1
    if sample_weight is not None:
        return weighted_auc_columns(pos, S, np.asarray(sample_weight, dtype=float))
    n_pos = pos.sum(axis=0)
    n_neg = S.shape[0] - n_pos
    rank_sum = np.sum(rankdata(S, axis=0), axis=0, where=pos)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = (rank_sum - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)
    return np.where((n_pos == 0) | (n_neg == 0), np.nan, auc)


def weighted_auc_columns(pos, S, w):
    """The weighted Mann-Whitney statistic of every column of ``S`` (n, ...): ``pos`` the
    positives (same shape), ``w`` (n,) the rows' weights.

    Per column the rows are sorted by score; a positive row ``i`` gains ``w_i`` times the
    negative weight strictly below its score plus half the negative weight tied with it
    (its tie group's, found from the cumulative negative weight at the group's first and
    last row).
    """
    shape = S.shape
    S2 = S.reshape(shape[0], -1)
    pos2 = pos.reshape(shape[0], -1)
    order = np.argsort(S2, axis=0, kind="stable")
    Ss = np.take_along_axis(S2, order, axis=0)
    ws = w[order]
    ps = np.take_along_axis(pos2, order, axis=0)
    wp = np.where(ps, ws, 0.0)
    wn = np.where(ps, 0.0, ws)
    Cn = np.cumsum(wn, axis=0)
    before = np.vstack([np.zeros((1, Cn.shape[1])), Cn[:-1]])
    change = Ss[1:] != Ss[:-1]
    ones = np.ones((1, Ss.shape[1]), dtype=bool)
    start = np.vstack([ones, change])
    end = np.vstack([change, ones])
    # forward fill the weight below each tie group, backward fill its end's cumulative
    # weight (both non-decreasing down a column)
    below = np.maximum.accumulate(np.where(start, before, -np.inf), axis=0)
    upto = np.minimum.accumulate(np.where(end, Cn, np.inf)[::-1], axis=0)[::-1]
    num = np.sum(wp * (below + 0.5 * (upto - below)), axis=0)
    w_pos, w_neg = wp.sum(axis=0), wn.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = num / (w_pos * w_neg)
    auc = np.where((w_pos > 0) & (w_neg > 0), auc, np.nan)
    return auc.reshape(shape[1:])


def rank_auc(y, score, sample_weight=None):
    """:func:`rank_auc_columns` of one column: a float."""
    return float(
        rank_auc_columns(np.asarray(y)[:, None], np.asarray(score)[:, None], sample_weight)[0]
    )
