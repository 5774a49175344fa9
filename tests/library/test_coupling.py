"""Pairwise coupling (klogreg paper Eq. 10-11): exactness, the score equations, the KL
optimum, and the scikit-learn contract."""

import warnings

import numpy as np
import pytest
from array_api_checks import xfail_float32_array_api
from scipy.optimize import minimize
from scipy.special import softmax
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from kclf.coupling import PairwiseCoupling, couple, couple_pairs
from kclf.kernels import rbf_kernel
from kclf.klr import KernelLogisticRegression


def consistent_R(P):
    """r_ij = p_i / (p_i + p_j) for every row of P (n, c)."""
    return P[:, :, None] / (P[:, :, None] + P[:, None, :])


def random_R(rng, n, c):
    # the diagonal is never read by couple(), but the score-equation test multiplies it by
    # a zero weight: it must not be np.empty's garbage (NaN * 0 = NaN made that test flaky)
    R = np.full((n, c, c), 0.5)
    iu = np.triu_indices(c, 1)
    r = rng.uniform(0.01, 0.99, size=(n, iu[0].size))
    R[:, iu[0], iu[1]] = r
    R[:, iu[1], iu[0]] = 1 - r
    return R


def kl(p, R, N):
    c = p.size
    total = 0.0
    for i in range(c):
        for j in range(i + 1, c):
            mu = p[i] / (p[i] + p[j])
            r = R[i, j]
            total += N[i, j] * (r * np.log(r / mu) + (1 - r) * np.log((1 - r) / (1 - mu)))
    return total


@pytest.mark.parametrize("c", [2, 3, 5, 26])
@pytest.mark.parametrize("weighted", [False, True])
def test_consistent_pairs_give_p_back(c, weighted):
    rng = np.random.default_rng(c)
    P = rng.dirichlet(np.ones(c), size=20)
    N = None
    if weighted:
        N = rng.integers(5, 50, size=(c, c)).astype(float)
        N = N + N.T
    for method in ("newton", "iteration"):
        out = couple(consistent_R(P), N, tol=1e-14, method=method, max_iter=100000)
        np.testing.assert_allclose(out, P, atol=1e-10, rtol=0)


def test_newton_and_the_papers_iteration_reach_the_same_minimiser():
    rng = np.random.default_rng(5)
    c = 8
    R = random_R(rng, 40, c)
    N = rng.integers(10, 100, size=(c, c)).astype(float)
    N = N + N.T
    a, it_newton = couple(R, N, tol=1e-13, return_n_iter=True)
    b, it_paper = couple(R, N, tol=1e-13, max_iter=100000, method="iteration", return_n_iter=True)
    np.testing.assert_allclose(a, b, atol=1e-9)
    assert it_newton < it_paper
    with pytest.raises(ValueError, match="method"):
        couple(R, N, method="fast")


def test_single_matrix_and_uniform():
    c = 4
    R = np.full((c, c), 0.5)
    np.testing.assert_allclose(couple(R), np.full(c, 0.25), atol=1e-15)


def test_rows_are_distributions_and_score_equations_hold():
    rng = np.random.default_rng(1)
    c = 6
    R = random_R(rng, 50, c)
    N = rng.integers(10, 100, size=(c, c)).astype(float)
    N = N + N.T
    P = couple(R, N, tol=1e-13)
    assert np.all(P >= 0)
    np.testing.assert_allclose(
        couple(R, N, method="iteration", tol=1e-13, max_iter=100000), P, atol=1e-9
    )
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-8)
    W = N.copy()
    np.fill_diagonal(W, 0.0)
    # 0/0 where both probabilities underflow to 0 (BLAS-dependent): such pairs carry no mass
    den = P[:, :, None] + P[:, None, :]
    mu = np.divide(
        np.broadcast_to(P[:, :, None], den.shape), den, out=np.zeros_like(den), where=den > 0
    )
    lhs = np.einsum("ij,nij->ni", W, mu)
    rhs = np.einsum("ij,nij->ni", W, R)
    np.testing.assert_allclose(lhs, rhs, atol=1e-8 * W.sum())


def test_coupling_minimises_the_kl_divergence():
    rng = np.random.default_rng(2)
    c = 5
    R = random_R(rng, 1, c)[0]
    N = np.ones((c, c))
    p = couple(R, N, tol=1e-14)
    res = minimize(
        lambda z: kl(softmax(np.r_[0.0, z]), R, N),
        np.zeros(c - 1),
        method="BFGS",
        options={"gtol": 1e-12},
    )
    q = softmax(np.r_[0.0, res.x])
    assert kl(p, R, N) <= kl(q, R, N) + 1e-12
    np.testing.assert_allclose(p, q, atol=1e-5)


@pytest.mark.parametrize("c", [3, 26])
def test_the_searches_coupling_from_the_pairs_alone_is_couple(c):
    """``couple_pairs`` (the searches' entry: the pairs' r_ij as (n, n_pairs), no (c, c)
    arrays) takes the same Newton steps as ``couple`` on the full matrices, so the same
    probabilities to round-off, and they satisfy the score equations (11)."""
    rng = np.random.default_rng(c)
    R = random_R(rng, 200, c)
    R[:7, 0, 1], R[:7, 1, 0] = 1e-17, 1.0  # clipped at R_EPS by both
    N = rng.integers(10, 100, size=(c, c)).astype(float)
    N = N + N.T
    iu, ju = np.triu_indices(c, 1)
    P = couple_pairs(R[:, iu, ju], N)
    np.testing.assert_allclose(P, couple(R, N), rtol=0, atol=1e-14)
    W = N.copy()
    np.fill_diagonal(W, 0.0)
    Rc = np.clip(R, 1e-15, 1 - 1e-15)
    mu = P[:, :, None] / (P[:, :, None] + P[:, None, :])
    lhs, rhs = np.einsum("ij,nij->ni", W, mu), np.einsum("ij,nij->ni", W, Rc)
    np.testing.assert_allclose(lhs, rhs, atol=1e-8 * W.sum())
    assert couple_pairs(np.empty((0, iu.size)), N).shape == (0, c)


def test_the_searches_coupling_from_a_neighbouring_solution_reaches_the_same_minimiser():
    """Eq. (10) is strictly convex in ``z`` up to its constant, so a search's coupling
    started from the previous lambda's probabilities ends at the same point as from Hastie
    and Tibshirani's start: the steps stop below ``tol = 1e-10`` and converge
    quadratically, so the two agree far inside 1e-9."""
    c = 26
    rng = np.random.default_rng(5)
    R = random_R(rng, 300, c)
    N = rng.integers(10, 100, size=(c, c)).astype(float)
    N = N + N.T
    iu, ju = np.triu_indices(c, 1)
    r = R[:, iu, ju]
    neighbour = np.clip(r + rng.normal(scale=0.05, size=r.shape), 0.01, 0.99)
    start = couple_pairs(neighbour, N)
    np.testing.assert_allclose(couple_pairs(r, N, start=start), couple_pairs(r, N), atol=1e-9)


@pytest.mark.parametrize("spread", [1.0, 30.0, 600.0])
def test_the_newton_steps_from_the_classes_equal_those_from_the_pairs(spread):
    """The objective and the step from ``q = exp(z - max z)`` (one ``exp`` per class, one
    ``log`` per pair) equal those from the pairs' ``d_ij = z_i - z_j`` (``exp`` and
    ``log1p`` per pair), the form kept for rows where ``q`` underflows: ``mu_ij`` to a few
    ulps of ``d_ij``, the divergence's terms to ``eps`` times their size (``n_ij (|z| + 1)``
    each), the step to the damped and capped Newton step.  The step is compared where the
    Hessian is well conditioned (at a spread of 600 some classes' curvature ``mu (1 - mu)``
    underflows and it is singular)."""
    from kclf.coupling import CouplingProblem

    c, n = 26, 40
    rng = np.random.default_rng(int(spread))
    iu, ju = np.triu_indices(c, 1)
    r = np.clip(rng.uniform(size=(n, iu.size)) ** 3, 1e-15, 1 - 1e-15)
    w = rng.integers(10, 1000, size=iu.size).astype(float)
    problem = CouplingProblem(np, r, w, c)
    x = rng.uniform(-spread, 0.0, size=(c, n))
    cols = np.arange(n)
    assert not problem._scaled(x)[2]
    objective, mu, mu_rest = problem._by_differences(x, cols)
    size = np.finfo(float).eps * (w.sum() * (spread + 1.0) + problem.rest.sum(axis=1))
    np.testing.assert_array_less(np.abs(problem.objective(x, x, cols) - objective), 8 * size)
    q = np.exp(x.T - x.T.max(axis=1, keepdims=True))
    np.testing.assert_allclose(
        q[:, iu] / (q[:, iu] + q[:, ju]), mu, rtol=8 * np.finfo(float).eps * spread, atol=1e-300
    )
    if spread > 100:
        return
    step = problem.direction(x, x, cols)[0]
    h = w * (mu * mu_rest)
    H = np.zeros((n, c, c))
    H[:, iu, ju] = H[:, ju, iu] = -h
    H[:, np.arange(c), np.arange(c)] = -H.sum(axis=2) + problem.damping
    G = (w * (mu - r)) @ problem.incidence
    expected = -np.linalg.solve(H + 1.0 / c, G[:, :, None])[:, :, 0].T
    expected *= np.minimum(1.0, problem.MAX_STEP / np.abs(expected).max(axis=0))
    np.testing.assert_allclose(step, expected, rtol=1e-9, atol=1e-12 * np.abs(expected).max())


def test_rows_with_a_class_exp_700_below_the_most_probable_are_computed_from_the_pairs():
    """Where some ``z - max z`` is below -700 (its ``exp`` near underflow) the objective
    and the step are those from the pairs' differences, finite."""
    from kclf.coupling import CouplingProblem

    c, n = 5, 6
    rng = np.random.default_rng(4)
    iu, _ = np.triu_indices(c, 1)
    r = rng.uniform(0.01, 0.99, size=(n, iu.size))
    problem = CouplingProblem(np, r, np.full(iu.size, 20.0), c)
    x = rng.normal(size=(c, n))
    x[2, 1] = -800.0
    cols = np.arange(n)
    assert problem._scaled(x)[2]
    objective = problem.objective(x, x, cols)
    assert np.all(np.isfinite(objective))
    np.testing.assert_array_equal(objective, problem._by_differences(x, cols)[0])
    assert np.all(np.isfinite(problem.direction(x, x, cols)[0]))


@pytest.mark.parametrize("tiny", [None, 1e-310])
def test_a_start_far_from_the_minimiser_still_reaches_it(tiny):
    """From the coupling of a decisive total order (every ``r_ij = 1`` for ``i < j``:
    probabilities down to 1e-254, a spread of 583 in ``z``) for pairs that say otherwise,
    or from a start with a probability of 1e-310 (``exp`` of its ``z - max z``
    subnormal), Newton's steps are huge where the pairs' curvature ``mu (1 - mu)`` has all
    but vanished: capped and halved they moved no probability by 1e-10 while the row was
    far from the minimiser, which the old test of convergence took for the end (1 step,
    probabilities off by 0.97).  Only a full step ends a row: the same minimiser as from
    Hastie and Tibshirani's start."""
    c = 26
    iu, ju = np.triu_indices(c, 1)
    R = np.full((c, c), 0.5)
    R[iu, ju], R[ju, iu] = 1.0, 0.0
    decisive = couple(R)
    assert np.ptp(np.log(decisive)) > 500
    rng = np.random.default_rng(0)
    r = rng.uniform(0.05, 0.95, size=(6, iu.size))
    N = np.full((c, c), 600.0)
    start = np.repeat(decisive[None], 6, axis=0)
    if tiny is not None:
        start = rng.dirichlet(np.ones(c), size=6)
        start[:, 3] = tiny
        start /= start.sum(axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        np.testing.assert_allclose(
            couple_pairs(r, N, start=start), couple_pairs(r, N), rtol=0, atol=1e-12
        )


def test_rows_coupled_in_blocks_equal_all_rows_at_once(monkeypatch):
    """The rows are independent problems: coupled in blocks of 7 (NumPy's cache-sized
    blocks) they take the same steps as all 50 at once, so the same probabilities to
    round-off, the same step count of the slowest row, and rows still moving at
    ``max_iter`` are counted over every block."""
    import kclf.coupling as coupling

    c = 5
    rng = np.random.default_rng(8)
    R = random_R(rng, 50, c)
    N = rng.integers(10, 100, size=(c, c)).astype(float)
    N = N + N.T
    whole, it_whole = couple(R, N, return_n_iter=True)
    monkeypatch.setattr(coupling, "BLOCK_ENTRIES", 7 * 10)
    assert coupling.block_rows(10) == 7
    blocks, it_blocks = couple(R, N, return_n_iter=True)
    np.testing.assert_allclose(blocks, whole, rtol=0, atol=1e-15)
    assert it_blocks == it_whole
    with pytest.warns(ConvergenceWarning, match="50 of 50 rows"):
        couple(R, N, max_iter=1)


def test_couple_rejects_bad_input():
    with pytest.raises(ValueError, match="shape"):
        couple(np.ones((3, 4)))
    with pytest.raises(ValueError, match="probabilities"):
        couple(np.array([[0.5, 1.5], [-0.5, 0.5]]))
    with pytest.raises(ValueError, match="N must have shape"):
        couple(np.full((3, 3), 0.5), np.ones((2, 2)))


def test_pairwise_coupling_fits_pairs_on_their_own_samples():
    X, y = load_iris(return_X_y=True)
    clf = PairwiseCoupling(LogisticRegression(C=10.0)).fit(X, y)
    assert len(clf.estimators_) == 3
    counts = np.bincount(y)
    for (i, j), est, idx in zip(clf.pairs_, clf.estimators_, clf.pair_index_):
        assert idx.size == counts[i] + counts[j] == clf.pair_counts_[i, j]
        np.testing.assert_array_equal(np.sort(np.unique(y[idx])), [i, j])
        assert est.n_features_in_ == 4
    P = clf.predict_proba(X)
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-8)
    # the coupled posteriors reproduce each pair's conditional where they are consistent
    R = clf.pairwise_proba(X)
    np.testing.assert_allclose(couple(R, clf.pair_counts_), P)
    assert np.mean(clf.predict(X) == y) > 0.95


def test_precomputed_kernel_is_sliced_per_pair():
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(0)
    test = rng.choice(150, 30, replace=False)
    train = np.setdiff1d(np.arange(150), test)
    sigma = 1.0
    a = PairwiseCoupling(KernelLogisticRegression(sigma=sigma, lam=0.01)).fit(X[train], y[train])
    b = PairwiseCoupling(KernelLogisticRegression(kernel="precomputed", lam=0.01))
    b.fit(rbf_kernel(X[train], sigma=sigma), y[train])
    Pa = a.predict_proba(X[test])
    Pb = b.predict_proba(rbf_kernel(X[test], X[train], sigma=sigma))
    np.testing.assert_allclose(Pa, Pb, atol=1e-8)
    with pytest.raises(ValueError, match="120"):
        b.predict_proba(rbf_kernel(X[test], X[train[:-1]], sigma=sigma))


def test_pairwise_coupling_errors():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="at least two classes in y, got one class"):
        PairwiseCoupling(LogisticRegression()).fit(X, np.zeros(150))
    with pytest.raises(ValueError, match="predict_proba"):
        from sklearn.svm import LinearSVC

        PairwiseCoupling(LinearSVC()).fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        PairwiseCoupling(LogisticRegression()).fit(Xn, y)


@parametrize_with_checks(
    [
        PairwiseCoupling(KernelLogisticRegression()),
        PairwiseCoupling(LogisticRegression()),
        PairwiseCoupling(KernelLogisticRegression(solver="cg")),  # pair by pair
    ]
)
def test_sklearn_compatible(estimator, check):
    xfail_float32_array_api(check)  # KLR's float32: fitted in float64, float32 returned
    check(estimator)


@pytest.mark.parametrize("method", ["iteration", "newton"])
def test_couple_warns_when_rows_still_move_at_max_iter(method):
    # inconsistent pairwise probabilities: the minimiser is not reached in one sweep
    rng = np.random.default_rng(3)
    R = rng.uniform(0.05, 0.95, size=(20, 5, 5))
    with pytest.warns(ConvergenceWarning, match=r"rows still moved .* max_iter=1 "):
        couple(R, max_iter=1, method=method)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        P = couple(R, method=method)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
