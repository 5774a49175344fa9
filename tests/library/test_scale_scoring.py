"""The low-rank search's vectorised scoring: every column's AUC from one rank
pass, and the row-block accumulation of the binary fold scores, against the per-column
and one-shot computations."""

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import roc_auc_score

from kclf._search import BinaryFoldScores, rank_auc, rank_auc_columns
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
