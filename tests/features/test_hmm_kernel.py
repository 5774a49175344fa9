"""The HMM kernel: batched forward pass vs hmmlearn, divergence, tau, PSD projection."""

import numpy as np
import pytest
from hmm_reference import naive_cross_loglik
from hmmlearn.hmm import GaussianHMM
from scipy.special import logsumexp

from kclf.features.hmm_kernel import (
    HMMBank,
    check_symmetric,
    cross_loglik,
    fit_clip_hmm,
    hmm_divergence,
    hmm_kernel,
    load_bank,
    log_emissions,
    median_tau,
    project_psd,
    save_bank,
)
from kclf_workflow.shards import row_shards


def _random_bank(rng, M, S, d):
    start = rng.dirichlet(np.ones(S), size=M)
    trans = rng.dirichlet(np.ones(S), size=(M, S))
    means = rng.normal(0, 2, size=(M, S, d))
    var = rng.uniform(0.2, 3.0, size=(M, S, d))
    return HMMBank(start, trans, means, var)


def _brute_force_loglik(X, start, trans, means, var):
    """log p(X | HMM) by summing over all state paths (tiny T and S only)."""
    import itertools

    T, S = X.shape[0], start.size
    logB = np.array(
        [
            [
                -0.5 * np.sum(np.log(2 * np.pi * var[s]) + (x - means[s]) ** 2 / var[s])
                for s in range(S)
            ]
            for x in X
        ]
    )
    terms = []
    for path in itertools.product(range(S), repeat=T):
        lp = np.log(start[path[0]]) + logB[0, path[0]]
        for t in range(1, T):
            lp += np.log(trans[path[t - 1], path[t]]) + logB[t, path[t]]
        terms.append(lp)
    return logsumexp(terms)


def test_batched_equals_brute_force_path_sum():
    rng = np.random.default_rng(0)
    bank = _random_bank(rng, M=3, S=3, d=2)
    seqs = [rng.normal(size=(T, 2)) for T in (1, 3, 5)]
    L = cross_loglik(seqs, bank)
    for i, X in enumerate(seqs):
        for m in range(3):
            ref = _brute_force_loglik(
                X, bank.startprob[m], bank.transmat[m], bank.means[m], bank.variances[m]
            )
            assert L[i, m] == pytest.approx(ref, rel=1e-12)


def test_batched_equals_hmmlearn_score_on_fitted_models():
    rng = np.random.default_rng(1)
    seqs = [
        rng.normal(size=(int(rng.integers(20, 150)), 5)) + rng.normal(size=5) for _ in range(12)
    ]
    models = [fit_clip_hmm(X, n_states=3, random_state=k, n_iter=10) for k, X in enumerate(seqs)]
    bank = HMMBank.from_models(models)
    # a small memory budget forces several batches of different lengths
    L = cross_loglik(seqs, bank, max_bytes=200_000)
    L0 = naive_cross_loglik(seqs, models)
    np.testing.assert_allclose(L, L0, rtol=1e-8)
    # the bank's model() rebuilds an hmmlearn model with the same scores
    assert bank.model(4).score(seqs[2]) == pytest.approx(L0[2, 4], rel=1e-12)


def test_log_emissions_match_scipy_normal():
    from scipy.stats import multivariate_normal

    rng = np.random.default_rng(2)
    bank = _random_bank(rng, M=2, S=2, d=3)
    X = rng.normal(size=(4, 3))
    E = log_emissions(X, bank)
    for m in range(2):
        for s in range(2):
            ref = multivariate_normal(bank.means[m, s], np.diag(bank.variances[m, s])).logpdf(X)
            np.testing.assert_allclose(E[:, m, s], ref, rtol=1e-12)


def test_underflowing_rescaled_pass_falls_back_to_log_space():
    # State 0 is absorbing and where the chain starts; the frames sit on state 1's mean,
    # about 1e4 nats better than state 0, so exp(logB - max) underflows to 0 for the only
    # reachable state.  The likelihood is finite and must still be exact.
    S, d = 2, 1
    bank = HMMBank(
        startprob=np.array([[1.0, 0.0]]),
        transmat=np.array([[[1.0, 0.0], [0.0, 1.0]]]),
        means=np.array([[[0.0], [150.0]]]),
        variances=np.ones((1, S, d)),
    )
    X = np.full((6, 1), 150.0)
    L = cross_loglik([X], bank)
    expected = 6 * (-0.5 * np.log(2 * np.pi) - 0.5 * 150.0**2)
    assert np.isfinite(L[0, 0])
    assert L[0, 0] == pytest.approx(expected, rel=1e-12)
    assert L[0, 0] == pytest.approx(bank.model(0).score(X), rel=1e-12)


def test_row_shards_assemble_to_the_full_matrix():
    rng = np.random.default_rng(3)
    bank = _random_bank(rng, M=7, S=2, d=2)
    seqs = [rng.normal(size=(int(rng.integers(3, 30)), 2)) for _ in range(7)]
    full = cross_loglik(seqs, bank)
    shards = row_shards(7, 3)
    assert np.array_equal(np.concatenate(shards), np.arange(7))
    parts = [cross_loglik([seqs[i] for i in rows], bank) for rows in shards]
    np.testing.assert_allclose(np.vstack(parts), full, rtol=1e-13)
    sizes = [len(s) for s in row_shards(2, 4)]
    assert sum(sizes) == 2 and max(sizes) == 1
    with pytest.raises(ValueError, match="n_shards"):
        row_shards(5, 0)


def test_divergence_formula_and_kernel():
    L = np.array([[-10.0, -16.0, -30.0], [-21.0, -12.0, -18.0], [-40.0, -20.0, -8.0]])
    T = np.array([2.0, 3.0, 4.0])
    D = hmm_divergence(L, T)
    # D(0,1) = 1/2[(-10 + 16)/2 + (-12 + 21)/3] = 1/2[3 + 3] = 3
    assert D[0, 1] == pytest.approx(3.0)
    # D(0,2) = 1/2[(-10 + 30)/2 + (-8 + 40)/4] = 1/2[10 + 8] = 9
    assert D[0, 2] == pytest.approx(9.0)
    # D(1,2) = 1/2[(-12 + 18)/3 + (-8 + 20)/4] = 1/2[2 + 3] = 2.5
    assert D[1, 2] == pytest.approx(2.5)
    np.testing.assert_array_equal(D, D.T)
    np.testing.assert_array_equal(np.diag(D), 0.0)
    assert median_tau(D) == pytest.approx(3.0)
    K, tau = hmm_kernel(D)
    assert tau == pytest.approx(3.0)
    assert K[0, 2] == pytest.approx(np.exp(-3.0))
    K2, tau2 = hmm_kernel(D, tau=1.5)
    assert tau2 == 1.5 and K2[0, 1] == pytest.approx(np.exp(-2.0))
    with pytest.raises(ValueError, match="tau"):
        hmm_kernel(D, tau=0.0)
    with pytest.raises(ValueError, match="square"):
        hmm_divergence(L[:2], T)
    with pytest.raises(ValueError, match="non-finite"):
        hmm_divergence(np.where(np.eye(3, dtype=bool), L, -np.inf), T)


def test_project_psd_closed_form():
    K = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1
    Kp, clipped = project_psd(K)
    np.testing.assert_allclose(Kp, 1.5 * np.ones((2, 2)), atol=1e-14)
    assert clipped == pytest.approx(1.0 / 4.0)
    P = np.array([[2.0, 1.0], [1.0, 2.0]])
    Pp, c0 = project_psd(P)
    assert c0 == 0.0
    np.testing.assert_allclose(Pp, P)
    with pytest.raises(ValueError, match="symmetric"):
        project_psd(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        check_symmetric(np.ones((2, 3)))


def test_project_psd_is_the_nearest_psd_matrix():
    # no PSD matrix is closer in Frobenius norm than the projection (random PSD probes)
    rng = np.random.default_rng(4)
    A = rng.normal(size=(6, 6))
    K = 0.5 * (A + A.T)
    Kp, clipped = project_psd(K)
    assert np.linalg.eigvalsh(Kp).min() > -1e-12
    assert 0 < clipped < 1
    best = np.linalg.norm(K - Kp)
    for scale in (0.01, 0.1, 1.0):
        for _ in range(100):
            B = rng.normal(size=(6, 3))
            Q = Kp + scale * B @ B.T  # nearby PSD matrices
            assert np.linalg.norm(K - Q) >= best - 1e-12
            C = rng.normal(size=(6, 6))
            assert np.linalg.norm(K - scale * C @ C.T) >= best - 1e-12


def test_bank_round_trip_and_validation(tmp_path):
    rng = np.random.default_rng(5)
    bank = _random_bank(rng, M=3, S=2, d=4)
    save_bank(tmp_path / "b.npz", bank, ["a", "b", "c"], [10, 20, 30])
    b2, ids, lengths = load_bank(tmp_path / "b.npz")
    assert ids.tolist() == ["a", "b", "c"] and lengths.tolist() == [10, 20, 30]
    for f in ("startprob", "transmat", "means", "variances"):
        np.testing.assert_array_equal(getattr(b2, f), getattr(bank, f))
    both = HMMBank.concatenate([bank.subset([0]), bank.subset([1, 2])])
    np.testing.assert_array_equal(both.means, bank.means)
    with pytest.raises(ValueError, match="transmat"):
        HMMBank(bank.startprob, bank.transmat[:, :1], bank.means, bank.variances)
    with pytest.raises(ValueError, match="variances must be positive"):
        HMMBank(bank.startprob, bank.transmat, bank.means, -bank.variances)
    with pytest.raises(ValueError, match="one entry per model"):
        save_bank(tmp_path / "c.npz", bank, ["a"], [1])
    with pytest.raises(ValueError, match=r"shape \(T >= 1, 4\)"):
        cross_loglik([np.zeros((3, 2))], bank)
    full = GaussianHMM(n_components=2, covariance_type="full")
    with pytest.raises(ValueError, match="diag"):
        HMMBank.from_models([full])


def test_fit_clip_hmm_seeded_and_checked():
    rng = np.random.default_rng(6)
    X = np.vstack([rng.normal(0, 1, (40, 3)), rng.normal(5, 1, (40, 3))])
    a = fit_clip_hmm(X, n_states=2, random_state=11)
    b = fit_clip_hmm(X, n_states=2, random_state=11)
    np.testing.assert_array_equal(a.means_, b.means_)
    assert sorted(np.round(a.means_[:, 0]).tolist()) == [0.0, 5.0]
    np.testing.assert_allclose(a.transmat_.sum(1), 1.0)
    with pytest.raises(ValueError, match="too short"):
        fit_clip_hmm(X[:2], n_states=4)
    with pytest.raises(ValueError, match="2-D"):
        fit_clip_hmm(X[:, 0])
    with pytest.raises(ValueError, match="NaN"):
        fit_clip_hmm(np.where(X > 4, np.nan, X))
