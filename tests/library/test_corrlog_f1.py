"""CorrLog's decoder for the example-based F1: on fitted models it is the label vector of
largest expected F1 under the model's own joint (brute force over all label vectors), and
beyond the enumeration limit the seeded Gibbs estimate of its inputs converges to the
enumerated numbers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kclf.corrlog import CorrLog
from kclf.corrlog import _decoding as decoding
from kclf.corrlog import belief_propagation as bp
from kclf.corrlog._f_measure import size_marginals_exact


def _fitted(m, seed, n=150):
    """A CorrLog fitted on correlated labels (each label's score moves with another's)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X @ rng.normal(size=(4, m)) + 0.7 * rng.normal(size=(n, m))
    Y = np.zeros((n, m), dtype=int)
    for i in range(m):
        s = score[:, i] + (1.5 * (2 * Y[:, i - 1] - 1) if i else 0.0)
        Y[:, i] = s > 0.8
    clf = CorrLog(0.0, 1e-2, decode="f1").fit(X, Y)
    return clf, rng.normal(size=(12, 4))


def _brute_force_f1(clf, X):
    """For each row, the largest expected F1 over all 2^m label vectors under the model."""
    idx, U, A = clf._active_unary(X)
    configs = bp.all_label_vectors(len(idx))
    s = bp.scores(U, A, configs)
    P = np.exp(s - s.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    Y = (configs > 0).astype(int)
    H = np.array(list(itertools.product((0, 1), repeat=len(idx))))
    both = H @ Y.T  # (h, y)
    total = H.sum(axis=1)[:, None] + Y.sum(axis=1)[None, :]
    F = np.where(total == 0, 1.0, 2.0 * both / np.maximum(total, 1))
    expected = P @ F.T  # (rows, h)
    return expected, H


def _expected_f1(clf, X, Yhat):
    idx, U, A = clf._active_unary(X)
    configs = bp.all_label_vectors(len(idx))
    s = bp.scores(U, A, configs)
    P = np.exp(s - s.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    Y = (configs > 0).astype(int)
    both = Yhat[:, idx] @ Y.T
    total = Yhat[:, idx].sum(axis=1)[:, None] + Y.sum(axis=1)[None, :]
    F = np.where(total == 0, 1.0, 2.0 * both / np.maximum(total, 1))
    return np.sum(P * F, axis=1)


@pytest.mark.parametrize("m,seed", [(2, 0), (4, 1), (6, 2), (8, 3)])
def test_f1_decision_maximises_the_expected_f1_over_all_label_vectors(m, seed):
    clf, X = _fitted(m, seed)
    assert np.abs(clf.couplings_).max() > 0.1  # a coupled model, not independent labels
    expected, H = _brute_force_f1(clf, X)
    Yhat = clf.predict(X)
    np.testing.assert_allclose(_expected_f1(clf, X, Yhat), expected.max(axis=1), atol=1e-12)
    # so the MAP and the thresholded marginals never do better in expectation
    others = [clf.decode_labels(X, d) for d in ("map", "marginal")]
    gain = [expected.max(axis=1) - _expected_f1(clf, X, o) for o in others]
    assert min(g.min() for g in gain) >= -1e-12


def test_f1_decision_without_couplings_is_exact_by_convolution():
    clf, X = _fitted(5, 4)
    clf.couplings_ = np.zeros_like(clf.couplings_)
    idx, U, A = clf._active_unary(X)
    p0, delta = decoding._size_marginals_independent(U)
    q0, gamma = size_marginals_exact(U, A)
    np.testing.assert_allclose(p0, q0, atol=1e-13)
    np.testing.assert_allclose(delta, gamma, atol=1e-13)
    expected, _ = _brute_force_f1(clf, X)
    np.testing.assert_allclose(_expected_f1(clf, X, clf.predict(X)), expected.max(axis=1))


def test_gibbs_beyond_the_limit_converges_to_the_exact_numbers(monkeypatch):
    clf, X = _fitted(6, 5)
    idx, U, A = clf._active_unary(X)
    p0, delta = size_marginals_exact(U, A)
    exact = clf.predict(X)
    monkeypatch.setattr(decoding, "MAX_EXACT_F1_LABELS", 3)  # force the sampler
    calls = []
    real = decoding.size_marginals_gibbs

    def spy(*args, **kwargs):
        calls.append(kwargs["random_state"])
        return real(*args, **kwargs)

    monkeypatch.setattr(decoding, "size_marginals_gibbs", spy)
    errors = []
    for sweeps in (200, 20000):
        clf.set_params(gibbs_sweeps=sweeps)
        g0, gdelta = real(U, A, sweeps, sweeps // 10, random_state=0)
        errors.append(max(np.abs(g0 - p0).max(), np.abs(gdelta - delta).max()))
    # 5 standard errors of a mean of 20000 draws with n_eff >= n / 10
    assert errors[1] < 5 * 0.5 / np.sqrt(20000 / 10)
    assert errors[1] < errors[0]
    sampled = clf.predict(X)
    assert calls == [clf.random_state]  # the estimator used the sampler, seeded
    # the sampled decision is the exact one, up to near-ties of the expected F1
    expected, _ = _brute_force_f1(clf, X)
    loss = expected.max(axis=1) - _expected_f1(clf, X, sampled)
    assert loss.max() < 0.01
    assert np.mean(np.all(sampled == exact, axis=1)) >= 0.9
    # seeded by random_state: the same decisions again
    np.testing.assert_array_equal(clf.predict(X), sampled)


def test_f1_decode_is_a_decoder_and_cv_criterion():
    clf, X = _fitted(3, 6)
    a = clf.decode_labels(X, "f1")
    np.testing.assert_array_equal(a, clf.set_params(decode="map").decode_labels(X, "f1"))
    with pytest.raises(ValueError, match="decode must be one of"):
        clf.decode_labels(X, "jaccard")
    rng = np.random.default_rng(7)
    Xt = rng.normal(size=(120, 3))
    Y = (Xt[:, :2] + 0.5 * rng.normal(size=(120, 2)) > 0).astype(int)
    cv = CorrLog(decode="f1", rho1_grid=[0.0], rho2_grid=[1.0, 1e-2]).fit(Xt, Y)
    # the CV scored each setting by the example F1 of the F1 decision
    assert set(cv.cv_results_) >= {"mean_score", "split0_score"}
    assert cv.cv_results_["mean_score"].max() <= 1.0
    assert cv.rho2_ == cv.cv_results_["rho2"][np.argmax(np.round(cv.cv_results_["mean_score"], 12))]
