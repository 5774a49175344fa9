"""The F-measure's Bayes decision (GFM) against brute force over every label vector, and
the Gibbs estimate of its inputs against enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kclf.corrlog import belief_propagation as bp
from kclf.corrlog._f_measure import f1_decision, size_marginals_exact, size_marginals_gibbs


def _model(m, n, seed, strength=1.0):
    rng = np.random.default_rng(seed)
    unary = rng.normal(scale=strength, size=(n, m)) - 0.5
    a = rng.normal(scale=0.5 * strength, size=(m, m))
    coupling = np.triu(a, 1) + np.triu(a, 1).T
    return unary, coupling


def _joint(unary, coupling):
    configs = bp.all_label_vectors(unary.shape[1])
    s = bp.scores(unary, coupling, configs)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (configs > 0).astype(int), p / p.sum(axis=1, keepdims=True)


def _f1(y, h):
    both, total = (y & h).sum(), y.sum() + h.sum()
    return 1.0 if total == 0 else 2.0 * both / total


@pytest.mark.parametrize("m,seed", [(1, 0), (2, 1), (3, 2), (5, 3), (8, 4)])
def test_gfm_maximises_the_expected_f1_of_every_label_vector(m, seed):
    unary, coupling = _model(m, 6, seed)
    Y, P = _joint(unary, coupling)
    H, value = f1_decision(*size_marginals_exact(unary, coupling))
    candidates = np.array(list(itertools.product((0, 1), repeat=m)))
    for r in range(len(unary)):
        expected = np.array([sum(p * _f1(y, h) for y, p in zip(Y, P[r])) for h in candidates])
        mine = sum(p * _f1(y, H[r]) for y, p in zip(Y, P[r]))
        assert mine == pytest.approx(expected.max(), abs=1e-12)
        assert value[r] == pytest.approx(mine, abs=1e-12)


def test_size_marginals_by_enumeration_are_their_definition():
    unary, coupling = _model(4, 3, 7)
    Y, P = _joint(unary, coupling)
    p0, delta = size_marginals_exact(unary, coupling)
    size = Y.sum(axis=1)
    for r in range(3):
        assert p0[r] == pytest.approx(P[r][size == 0].sum(), abs=1e-14)
        for j, s in itertools.product(range(4), range(1, 5)):
            want = P[r][(Y[:, j] == 1) & (size == s)].sum()
            assert delta[r, j, s - 1] == pytest.approx(want, abs=1e-14)
    # Delta sums to the marginals over sizes, and with P(y = 0) to one over (j, s) / s
    assert np.allclose(delta.sum(axis=2), bp.exact_marginals(unary, coupling))
    total = p0 + (delta / np.arange(1, 5)[None, None, :]).sum(axis=(1, 2))
    assert np.allclose(total, 1.0)


def test_gibbs_estimates_converge_to_the_enumerated_ones():
    unary, coupling = _model(6, 4, 11)
    p0, delta = size_marginals_exact(unary, coupling)
    n_sweeps = 20000
    g0, gdelta = size_marginals_gibbs(unary, coupling, n_sweeps=n_sweeps, random_state=0)
    # a mean of n 0/1 draws: standard error <= 0.5 / sqrt(n_eff); with n_eff >= n / 10
    # (single-site Gibbs on this weakly coupled model), 5 standard errors
    tol = 5 * 0.5 / np.sqrt(n_sweeps / 10)
    assert np.abs(g0 - p0).max() < tol
    assert np.abs(gdelta - delta).max() < tol
    again = size_marginals_gibbs(unary, coupling, n_sweeps=50, random_state=0)
    assert np.array_equal(again[1], size_marginals_gibbs(unary, coupling, 50, random_state=0)[1])


def test_empty_prediction_when_no_label_is_likely():
    unary = np.full((1, 3), -4.0)
    H, value = f1_decision(*size_marginals_exact(unary, np.zeros((3, 3))))
    assert H.tolist() == [[0, 0, 0]] and value[0] > 0.9
