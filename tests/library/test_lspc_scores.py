"""LSPC's decision_function (issue 43, item 1): ranked as the posteriors, their ties at 0
and 1 broken by the unrounded outputs, on a scale a sigmoid can be fitted to."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.metrics import get_scorer, log_loss, roc_auc_score

from kclf import LSPC, LSPCCV
from kclf.lspc._solver import decision_scores

EPS = np.finfo(float).eps


def split(seed=0, n=600, train=400):
    X, y = make_classification(n, 20, random_state=seed)
    return X[:train], y[:train], X[train:], y[train:]


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    rounding=st.sampled_from(["outputs", "parameters", "none"]),
    lam=st.sampled_from([1e-3, 0.1, 1.0]),
    width=st.sampled_from([0.3, 1.0, 3.0]),
)
def test_scores_are_ranked_as_the_posteriors_and_break_their_ties(seed, rounding, lam, width):
    """Where the posteriors differ (by more than the float spacing near -1) the scores
    differ the same way; rows of posterior exactly 1 score at least 1, ranked by how far
    the other class's unrounded output lies below 0 (0 and -1 alike); the sign says the
    predicted class."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(int)
    est = LSPC(sigma=width, lam=lam, rounding=rounding).fit(X, y)
    Xt = rng.normal(size=(200, 2)) * 2
    p = est.predict_proba(Xt)[:, 1]
    s = est.decision_function(Xt)
    i, j = np.meshgrid(np.arange(p.size), np.arange(p.size))
    apart = p[i] > p[j] + 2 * EPS
    assert np.all(s[i][apart] > s[j][apart])
    assert np.array_equal(s > 0, est.predict(Xt) == est.classes_[1])
    if rounding == "none":
        np.testing.assert_array_equal(s, 2 * p - 1)
        return
    f = Xt_outputs(est, Xt)
    one, zero = p == 1.0, p == 0.0
    np.testing.assert_array_equal(s[one], 1 - 2 * np.minimum(f[one, 0], 0))
    np.testing.assert_array_equal(s[zero], -1 + 2 * np.minimum(f[zero, 1], 0))
    inside = ~one & ~zero
    np.testing.assert_array_equal(s[inside], 2 * p[inside] - 1)


def Xt_outputs(est, Xt):
    """The unrounded outputs phi(x)^T alpha~ of Eq. (2)."""
    from kclf.kernels import rbf_kernel

    return rbf_kernel(Xt, est.X_fit_, est.sigma_) @ est.alpha_


def test_multiclass_scores_replace_the_rounded_posteriors_by_the_outputs():
    X, y = make_classification(120, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=1)
    est = LSPC(sigma=0.7, lam=0.01).fit(X[:80], y[:80])
    Xt = X[80:] * 1.5
    P, T = est.predict_proba(Xt), est.decision_function(Xt)
    F = Xt_outputs(est, Xt)
    assert np.array_equal(np.argmax(T, axis=1), np.argmax(P, axis=1))
    inside = (P > 0) & (P < 1)
    np.testing.assert_array_equal(T[inside], P[inside])
    np.testing.assert_array_equal(T[P == 0], np.minimum(F, 0)[P == 0])
    assert (P == 0).any()
    # the helper on a row of posterior 1: 1 minus the largest competing output below 0
    R = np.array([[0.5, -0.2, -0.1]])
    np.testing.assert_array_equal(decision_scores(R, R, "outputs"), [[1.1, -0.2, -0.1]])


@pytest.mark.parametrize(
    "make",
    [lambda: LSPC(), lambda: LSPCCV(random_state=0), lambda: LSPCCV()],
    ids=["LSPC", "LSPCCV-seeded", "LSPCCV"],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sigmoid_calibration_keeps_or_improves_the_log_loss(make, seed):
    """``CalibratedClassifierCV(method="sigmoid")``, scikit-learn's default calibration,
    fitted on the scores: it made LSPCCV's log loss 0.54 from 0.24 when a posterior of 0
    or 1 scored -+745 (issue 43); on these splits it now improves every one."""
    Xtr, ytr, Xte, yte = split(seed)
    raw = log_loss(yte, make().fit(Xtr, ytr).predict_proba(Xte))
    cal = CalibratedClassifierCV(make(), method="sigmoid").fit(Xtr, ytr)
    assert log_loss(yte, cal.predict_proba(Xte)) <= raw


@pytest.mark.parametrize("rounding", ["outputs", "parameters", "none"])
def test_the_roc_auc_scorer_ranks_as_the_posteriors(rounding):
    """scikit-learn's ``roc_auc`` scorer calls ``decision_function``: the AUC of the
    posteriors where they have no tie at 0 or 1 (the scores are a strictly increasing
    function of them), and where they do, the AUC with those ties broken by the outputs
    (the positive pairs of a tie counted as ordered, not half)."""
    Xtr, ytr, Xte, yte = split(0)
    est = LSPCCV(rounding=rounding, random_state=0).fit(Xtr, ytr)
    p = est.predict_proba(Xte)[:, 1]
    scored = get_scorer("roc_auc")(est, Xte, yte)
    assert scored == pytest.approx(roc_auc_score(yte, est.decision_function(Xte)), abs=1e-15)
    untied = (p > 0) & (p < 1)
    inside = roc_auc_score(yte[untied], p[untied])
    assert roc_auc_score(yte[untied], est.decision_function(Xte)[untied]) == pytest.approx(
        inside, abs=1e-15
    )
    if untied.all():
        assert scored == pytest.approx(roc_auc_score(yte, p), abs=1e-15)
    else:
        # breaking ties can only move the AUC by the tied pairs' half-credits
        tied_pairs = sum(np.sum(yte[p == v] == 1) * np.sum(yte[p == v] == 0) for v in (0.0, 1.0))
        bound = 0.5 * tied_pairs / (np.sum(yte == 1) * np.sum(yte == 0))
        assert abs(scored - roc_auc_score(yte, p)) <= bound + 1e-15
