"""Sparse features stay sparse in CorrLog's solver (centring never formed): the fit, the
CV path and the predictions equal those of the same data held dense."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from kclf.corrlog import CorrLog
from kclf.corrlog import _solver as solver


def _text(seed=0, n=240, d=150, m=5):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.05) * rng.poisson(2.0, (n, d)).astype(float)
    Y = (X[:, :m] * 2 + X[:, m : 2 * m] - 0.6 + 0.5 * rng.normal(size=(n, m)) > 0).astype(int)
    Y[:, 1] |= Y[:, 0]
    return X, Y


@pytest.mark.parametrize("scaling", ["standardize", None])
def test_sparse_fit_equals_the_dense_fit(monkeypatch, scaling):
    X, Y = _text()
    kw = {"rho1_grid": [1e-2, 1e-3], "rho2_grid": [0.1, 1e-2], "scaling": scaling}
    kw.update(tol=1e-12, cv_tol=1e-10)
    sparse = CorrLog(**kw).fit(sp.csr_matrix(X), Y)
    also = CorrLog(**kw).fit(X, Y)  # 5 % non-zero: solved sparse too
    monkeypatch.setattr(solver, "SPARSE_DENSITY", 0.0)
    dense = CorrLog(**kw).fit(X, Y)
    assert (sparse.rho1_, sparse.rho2_) == (dense.rho1_, dense.rho2_)
    np.testing.assert_allclose(sparse.cv_results_["mean_score"], dense.cv_results_["mean_score"])
    for name in ("coef_", "intercept_", "couplings_"):
        np.testing.assert_allclose(getattr(sparse, name), getattr(dense, name), atol=1e-9)
        np.testing.assert_array_equal(getattr(sparse, name), getattr(also, name))
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))
    np.testing.assert_allclose(sparse.predict_proba(sp.csc_matrix(X)), dense.predict_proba(X))


def test_centred_sparse_products_are_the_centred_matrix():
    rng = np.random.default_rng(1)
    X = sp.random(30, 12, density=0.2, random_state=2, format="csr")
    mean = rng.normal(size=12)
    C = solver.CentredSparse(X, mean)
    D = X.toarray() - mean
    W, G, keep = rng.normal(size=(12, 4)), rng.normal(size=(30, 4)), rng.random(12) < 0.5
    np.testing.assert_allclose(C @ W, D @ W)
    np.testing.assert_allclose(C.T @ G, D.T @ G)
    np.testing.assert_allclose(C[:, keep] @ W[keep], D[:, keep] @ W[keep])
    data_s = solver.Data(X, 2.0 * (rng.random((30, 3)) < 0.5) - 1.0, True)
    data_d = solver.Data(X.toarray(), data_s.S, True)
    assert data_s.lipschitz == pytest.approx(data_d.lipschitz, rel=1e-5)
