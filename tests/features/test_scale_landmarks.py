"""HMM kernel with landmarks (the maths only, no workflow wiring)."""

import numpy as np
import pytest

from kclf.features.hmm_kernel import (
    HMMBank,
    cross_loglik,
    hmm_divergence,
    hmm_kernel,
    median_tau,
)
from kclf.features.landmarks import (
    choose_landmarks,
    landmark_divergence,
    landmark_tau,
    nystroem_features,
)


def _bank_and_clips(seed=0, n=12, S=3, d=2):
    rng = np.random.default_rng(seed)
    bank = HMMBank(
        rng.dirichlet(np.ones(S), size=n),
        rng.dirichlet(np.ones(S), size=(n, S)),
        rng.normal(0, 2, size=(n, S, d)),
        rng.uniform(0.3, 2.0, size=(n, S, d)),
    )
    clips = [rng.normal(0, 2, size=(int(rng.integers(8, 30)), d)) for _ in range(n)]
    return bank, clips


def test_landmark_columns_equal_the_full_kernel():
    bank, clips = _bank_and_clips()
    n = len(clips)
    lengths = np.array([c.shape[0] for c in clips])
    K_full, tau = hmm_kernel(hmm_divergence(cross_loglik(clips, bank), lengths))
    J = choose_landmarks(n, 4, random_state=0)
    # only 2 n m + n forward passes: clips x landmark models, landmark clips x models,
    # and each clip under its own model
    to_l = cross_loglik(clips, bank.subset(J))
    from_l = cross_loglik([clips[j] for j in J], bank)
    own = np.array([cross_loglik([c], bank.subset([i]))[0, 0] for i, c in enumerate(clips)])
    D_nm = landmark_divergence(to_l, from_l, own, lengths, J)
    K_nm = np.exp(-D_nm / tau)
    # the same forward passes in another batch: equal up to their round-off
    np.testing.assert_allclose(K_nm, K_full[:, J], rtol=1e-10, atol=0)
    # with all clips as landmarks the median heuristic is the full kernel's
    D_all = landmark_divergence(
        cross_loglik(clips, bank), cross_loglik(clips, bank), own, lengths, np.arange(n)
    )
    assert landmark_tau(D_all, np.arange(n)) == pytest.approx(median_tau(D_all), rel=1e-12)


def test_nystroem_features_reproduce_the_landmark_columns():
    """On a positive definite kernel (the features need K[J, J] >= 0; an HMM kernel of
    models not fitted to their clips can be indefinite, whose negative part is dropped)."""
    from kclf.kernels import rbf_kernel

    X = np.random.default_rng(1).normal(size=(30, 2))
    K = rbf_kernel(X, None, 1.0)
    J = choose_landmarks(30, 6, random_state=3)
    Phi = nystroem_features(K[:, J], J)
    # Phi Phi^T = K_nJ K_JJ^{-1} K_Jn: exact in the landmark columns, up to round-off
    # times the condition number of K_JJ
    cond = np.linalg.cond(K[np.ix_(J, J)])
    np.testing.assert_allclose(Phi @ Phi[J].T, K[:, J], atol=1e-13 * cond)
    assert np.all(np.diag(Phi @ Phi.T) <= 1.0 + 1e-9)  # a projection: never above K_ii


def test_choose_landmarks_is_seeded():
    a = choose_landmarks(100, 10, 5)
    assert np.array_equal(a, choose_landmarks(100, 10, 5)) and np.all(np.diff(a) > 0)
    assert not np.array_equal(a, choose_landmarks(100, 10, 6))
    assert np.array_equal(choose_landmarks(7, 10, 0), np.arange(7))
    with pytest.raises(ValueError, match="landmarks"):
        choose_landmarks(10, 0, 0)
