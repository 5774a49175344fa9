"""Squared distances and every Gaussian-kernel estimator are invariant to an offset of the
inputs (the plain expansion ||x||^2 + ||y||^2 - 2 x.y loses everything at an offset of 1e8)
and the kernels to their scale (1e-300 to 1e300); sparse inputs give the dense kernels; the
weighted median distance is that of the repeated rows."""

import numpy as np
import pytest
import scipy.sparse as sp

from kclf import (
    LSPC,
    LSPCCV,
    MAPLP,
    KernelLogisticRegression,
    KernelLogisticRegressionCV,
    ManifoldGPC,
)
from kclf.kernels import (
    gram,
    grams,
    median_sigma,
    rbf_kernel,
    scaled_squared_distances,
    squared_distances,
)

OFFSET = 1e8
EPS = np.finfo(float).eps


def test_squared_distances_at_an_offset_of_1e8():
    rng = np.random.default_rng(0)
    p = 5
    X = rng.normal(size=(40, p)) + OFFSET
    Y = rng.normal(size=(30, p)) + OFFSET
    # reference: the differences themselves; x - y of two floats within a factor of 2 of
    # each other is exact (Sterbenz), so only the p squares and the sum round:
    # |ref - D| <= (p + 1) eps D
    ref = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=2)
    D = squared_distances(X, Y)
    # after the shift by the median c of Y (exact, Sterbenz again), the expansion
    # ||u||^2 + ||v||^2 - 2 u.v of u = x - c, v = y - c rounds each of its three terms
    # by at most (p + 2) eps times ||u||^2 + ||v||^2 (the inner product by Cauchy-
    # Schwarz), so |D - exact| <= 3 (p + 2) eps (||u||^2 + ||v||^2)
    c = np.median(Y, axis=0)
    uu = ((X - c) ** 2).sum(axis=1)[:, None]
    vv = ((Y - c) ** 2).sum(axis=1)[None, :]
    bound = 3 * (p + 2) * EPS * (uu + vv) + (p + 1) * EPS * ref
    assert np.all(np.abs(D - ref) <= bound)
    # (the old expansion without the shift had an error of order eps ||x||^2 ~ 2e0 * p,
    # as large as the distances themselves)
    assert bound.max() < 1e-10
    np.testing.assert_allclose(np.diag(squared_distances(X)), 0.0)
    np.testing.assert_allclose(
        squared_distances(X), ((X[:, None] - X[None]) ** 2).sum(-1), rtol=1e-12, atol=1e-12
    )


def _dyadic_clusters(n_classes=2):
    """Four well-separated clusters of 16 points with coordinates on the grid 2^-10.

    Every value, and every value + 1e8, is exact in float64 (1e8 < 2^27, so 2^-10 needs
    37 bits), and so are the medians (the mean of two grid values) and the k-means
    centres (sums over 16 or 64 grid values, divided by a power of two).  A shift by 1e8
    is then exact everywhere, and an offset-invariant implementation must return the
    same bits: the tolerance is zero.
    """
    rng = np.random.default_rng(1)
    centres = np.array([[0, 0, 0], [6, 0, 0], [0, 6, 0], [0, 0, 6]], dtype=float)
    X = np.repeat(centres, 16, axis=0) + rng.normal(size=(64, 3))
    X = np.round(X * 1024) / 1024
    y = (X[:, 0] - X[:, 1] + 0.5 * X[:, 2] + rng.normal(size=64) > 1).astype(int)
    if n_classes == 3:
        y = np.where(X[:, 2] > 3, 2, y)
    Xt = np.round((rng.uniform(-2, 8, size=(25, 3))) * 1024) / 1024
    assert np.array_equal((X + OFFSET) - OFFSET, X)
    return X, y, Xt


ESTIMATORS = [
    ("lspc", lambda: LSPC(), 2),
    ("lspc_3class_classwise", lambda: LSPC(basis="classwise"), 3),
    ("lspccv", lambda: LSPCCV(lams=[0.01, 0.1], random_state=0), 2),
    ("klr", lambda: KernelLogisticRegression(lam=0.01), 2),
    ("klr_pairwise", lambda: KernelLogisticRegression(lam=0.01), 3),
    ("klr_nystroem", lambda: KernelLogisticRegression(n_components=20, random_state=0), 2),
    ("klrcv", lambda: KernelLogisticRegressionCV(lams=[0.01, 1.0], random_state=0), 2),
    ("maplp", lambda: MAPLP(), 2),
    ("maplp_bias", lambda: MAPLP(bias=True), 2),
    ("mgpc_laplace", lambda: ManifoldGPC(n_centers=4, random_state=0), 2),
    ("mgpc_ep", lambda: ManifoldGPC(n_centers=4, inference="ep", random_state=0), 2),
    ("gpc_identity", lambda: ManifoldGPC(n_centers=None, amplitude=4.0), 2),
]


@pytest.mark.parametrize(("name", "make", "n_classes"), ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_gaussian_kernel_estimators_are_offset_invariant(name, make, n_classes):
    X, y, Xt = _dyadic_clusters(n_classes)
    a = make().fit(X, y)
    b = make().fit(X + OFFSET, y)
    np.testing.assert_array_equal(b.predict_proba(Xt + OFFSET), a.predict_proba(Xt))
    np.testing.assert_array_equal(b.predict(Xt + OFFSET), a.predict(Xt))
    assert median_sigma(X + OFFSET) == median_sigma(X)


def test_multitask_lspccv_is_offset_invariant():
    X, y, Xt = _dyadic_clusters()
    Y = np.c_[y, X[:, 0] > 3].astype(int)
    a = LSPCCV(lams=[0.01, 0.1], random_state=0).fit(X, Y)
    b = LSPCCV(lams=[0.01, 0.1], random_state=0).fit(X + OFFSET, Y)
    np.testing.assert_array_equal(b.predict_proba(Xt + OFFSET), a.predict_proba(Xt))


#: powers of two (exact scalings) and decimal factors at both ends of float64's range
EXACT_SCALES = (2.0**-1000, 2.0**-40, 2.0**40, 2.0**1000)
SCALES = (1e-300, 1e-150, 1e150, 1e300)


@pytest.mark.parametrize("c", EXACT_SCALES)
def test_kernels_of_exactly_scaled_inputs_are_the_same_bits(c):
    """Dividing by a power of two commutes with every product and sum: scaled inputs
    and width give the same kernel bits, where the plain squares of 2^-1000 (2^-2000)
    underflow and those of 2^1000 overflow."""
    X, _, Xt = _dyadic_clusters()
    s = median_sigma(X)
    assert median_sigma(X * c) == s * c
    K = rbf_kernel(X, Xt, s)
    np.testing.assert_array_equal(rbf_kernel(X * c, Xt * c, s * c), K)
    D, u = scaled_squared_distances(X * c, Xt * c)
    np.testing.assert_array_equal(D * (u / c) ** 2, squared_distances(X, Xt))
    for _, Kc in grams("rbf", X * c, [s * c]):
        np.testing.assert_array_equal(Kc, rbf_kernel(X, None, s))


@pytest.mark.parametrize("c", SCALES)
def test_kernels_of_scaled_inputs_equal_the_unscaled_to_round_off(c):
    X, _, Xt = _dyadic_clusters()
    s = median_sigma(X)
    assert median_sigma(X * c) == pytest.approx(s * c, rel=8 * EPS)
    # the scaling rounds each coordinate by eps/2: a distance d moves by about eps d,
    # a kernel value exp(-d^2 / 2s^2) by about eps d^2 / s^2 (below 100 eps here)
    np.testing.assert_allclose(rbf_kernel(X * c, Xt * c, s * c), rbf_kernel(X, Xt, s), atol=1e-13)


def test_a_width_far_below_the_distances_gives_the_kernels_limit():
    """``(sigma / u)^2`` underflows: 1 at distance 0, 0 elsewhere (not NaN)."""
    X = np.array([[0.0], [1e300], [1e300]])
    K = rbf_kernel(X, None, 1.0)
    np.testing.assert_array_equal(K, [[1, 0, 0], [0, 1, 1], [0, 1, 1]])


def test_the_weighted_median_is_that_of_the_repeated_rows():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    w = rng.integers(0, 4, 30)
    rep = np.repeat(np.arange(30), w)
    # the same pairs; their distances to round-off (the translation, the median of the
    # rows, differs)
    tol = dict(rel=16 * EPS)
    assert median_sigma(X, sample_weight=w) == pytest.approx(median_sigma(X[rep]), **tol)
    # weights of one, and a zero weight as the row dropped
    assert median_sigma(X, sample_weight=np.ones(30)) == median_sigma(X)
    w1 = np.ones(30)
    w1[[3, 7]] = 0
    dropped = median_sigma(np.delete(X, [3, 7], axis=0))
    assert median_sigma(X, sample_weight=w1) == pytest.approx(dropped, **tol)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_inputs_give_the_dense_kernels_to_round_off(fmt):
    """The rbf and linear kernels, the distances and the median of a sparse matrix equal
    the dense array's to round-off: ``eps (||x||^2 + ||y||^2)`` for a distance (the
    sparse path does not translate), the data here of norm about 1."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 30)) * (rng.uniform(size=(40, 30)) < 0.2)
    Y = rng.normal(size=(15, 30)) * (rng.uniform(size=(15, 30)) < 0.2)
    Xs, Ys = sp.csr_matrix(X).asformat(fmt), sp.csr_matrix(Y).asformat(fmt)
    for a, b in ((Xs, Ys), (Xs, Y), (X, Ys), (Xs, None)):
        dense_b = None if b is None else Y
        np.testing.assert_allclose(
            squared_distances(a, b), squared_distances(X, dense_b), rtol=0, atol=1e-13
        )
        np.testing.assert_allclose(
            gram("rbf", a, b, 1.5), gram("rbf", X, dense_b, 1.5), rtol=0, atol=1e-14
        )
        np.testing.assert_allclose(
            gram("linear", a, b), gram("linear", X, dense_b), rtol=0, atol=1e-14
        )
    assert median_sigma(Xs) == pytest.approx(median_sigma(X), rel=1e-14)
