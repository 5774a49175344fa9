"""The searches' vectorised scoring (kclf._scoring): every column's AUC from one rank
pass, and the row-block accumulation of the binary fold scores, against the per-column
and one-shot computations; weighted, against scikit-learn's ``sample_weight`` and the
repeated rows."""

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from kclf._scoring import (
    BinaryFoldScores,
    binary_fold_scores,
    fold_scores,
    rank_auc,
    rank_auc_columns,
    score_proba,
)
from kclf.lspc._solver import round_outputs
from kclf.metrics import EPS


def test_rank_auc_columns_equals_sklearn_per_column_with_ties():
    rng = np.random.default_rng(0)
    n = 301
    # scores with many ties (rounded), some columns constant, labels per task
    S = np.round(rng.normal(size=(n, 4, 5)), 1)
    S[:, 0, 0] = 0.25
    Y = (rng.random((n, 5)) < np.linspace(0.1, 0.6, 5)).astype(int)
    auc = rank_auc_columns(Y[:, None, :], S)
    assert auc.shape == (4, 5)
    for k in range(4):
        for t in range(5):
            ref = roc_auc_score(Y[:, t], S[:, k, t])
            assert abs(auc[k, t] - ref) < 1e-12
            # the rank statistic itself: the same ranks and sums, hence the same bits
            assert auc[k, t] == rank_auc(Y[:, t], S[:, k, t])
    assert auc[0, 0] == 0.5
    one_class = rank_auc_columns(np.ones((n, 1), int), S[:, 0, :1])
    assert np.isnan(one_class).all()


def test_rank_auc_columns_mid_ranks_are_rankdata():
    rng = np.random.default_rng(1)
    s = rng.integers(0, 7, size=50).astype(float)
    y = np.zeros(50, int)
    y[rng.permutation(50)[:20]] = 1
    pos_rank_sum = rankdata(s)[y == 1].sum()
    auc = rank_auc_columns(y[:, None], s[:, None])[0]
    assert auc == (pos_rank_sum - 20 * 21 / 2) / (20 * 30)


@pytest.mark.parametrize("rounding", ["outputs", "parameters", "none"])
@pytest.mark.parametrize("scoring", ["error", "log_loss", "auc"])
def test_blocks_equal_the_posteriors_scored_at_once(rounding, scoring):
    rng = np.random.default_rng(2)
    n, L, T = 1000, 3, 4
    F0 = rng.normal(0.5, 0.6, size=(n, L, T))
    F1 = rng.normal(0.5, 0.6, size=(n, L, T))
    F0[:7] = 0.0
    F1[:7] = 0.0  # Z = 0: both posteriors 1/2
    F1[7:20] = -F0[7:20]  # Z = 0 for rounding="none"
    y = (rng.random((n, T)) < 0.4).astype(int)
    acc = BinaryFoldScores(n, L, T, rounding, scoring)
    for lo in range(0, n, 137):
        acc.add(F0[lo : lo + 137], F1[lo : lo + 137], y[lo : lo + 137])
    got = acc.scores()
    # reference: the posteriors of round_outputs, scored per (setting, task)
    P = round_outputs(np.stack([F0, F1], axis=-1).reshape(n, -1, 2), rounding)
    P = P.reshape(n, L, T, 2)
    for k in range(L):
        for t in range(T):
            p = P[:, k, t]
            if scoring == "error":
                ref = np.mean(np.argmax(p, axis=1) != y[:, t])
            elif scoring == "log_loss":
                ref = -np.mean(np.log(np.clip(p[np.arange(n), y[:, t]], EPS, 1.0)))
            else:
                ref = roc_auc_score(y[:, t], p[:, 1])
            assert abs(got[k, t] - ref) <= 1e-12 * max(1.0, abs(ref))


def _weighted_case(seed=3, n=80, m=6):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    S = np.round(rng.normal(size=(n, m)) + y[:, None], 1)  # many ties
    w = rng.integers(0, 4, n).astype(float)
    w[:3] = [0.5, 2.25, 0.0]  # not only integers
    return y, S, w


def test_weighted_auc_equals_sklearn_roc_auc_score_with_sample_weight():
    y, S, w = _weighted_case()
    got = rank_auc_columns(y[:, None], S, sample_weight=w)
    want = [roc_auc_score(y, S[:, j], sample_weight=w) for j in range(S.shape[1])]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert rank_auc(y, S[:, 0], w) == pytest.approx(want[0], rel=1e-13)
    # the positives' weights all zero: undefined
    assert np.isnan(rank_auc(y, S[:, 0], np.where(y == 1, 0.0, 1.0)))


def test_integer_weights_score_as_the_repeated_rows():
    y, S, w = _weighted_case()
    w = np.round(w)
    rep = np.repeat(np.arange(y.size), w.astype(int))
    P = np.stack([1 - 1 / (1 + np.exp(-S)), 1 / (1 + np.exp(-S))], -1).transpose(1, 0, 2)
    P = P[:, :, None, :]  # (settings, n, tasks, classes)
    for scoring in ("error", "log_loss", "auc"):
        got = fold_scores(P, y[:, None], scoring, sample_weight=w)
        want = fold_scores(P[:, rep], y[rep, None], scoring)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
        for j in range(3):
            assert score_proba(P[j, :, 0], y, scoring, w) == pytest.approx(
                score_proba(P[j, rep, 0], y[rep], scoring), rel=1e-12, abs=1e-15
            )


@pytest.mark.parametrize("scoring", ["error", "log_loss", "auc"])
@pytest.mark.parametrize("rounding", ["outputs", "none"])
def test_weighted_blocks_equal_the_weighted_scores_at_once(rounding, scoring):
    rng = np.random.default_rng(5)
    n, L, T = 300, 4, 2
    F0, F1 = rng.normal(0.5, 0.4, (2, n, L, T))
    y = rng.integers(0, 2, (n, T))
    w = rng.uniform(0, 3, n)
    acc = BinaryFoldScores(n, L, T, rounding, scoring, sample_weight=w)
    for lo in range(0, n, 70):
        acc.add(F0[lo : lo + 70], F1[lo : lo + 70], y[lo : lo + 70])
    P = round_outputs(np.stack([F0, F1], -1), rounding).transpose(1, 0, 2, 3)
    np.testing.assert_allclose(acc.scores(), fold_scores(P, y, scoring, w), rtol=1e-12)
    # weights of one: the unweighted scores
    ones = binary_fold_scores(F0, F1, y, rounding, scoring, np.ones(n))
    np.testing.assert_allclose(ones, binary_fold_scores(F0, F1, y, rounding, scoring), rtol=1e-13)
