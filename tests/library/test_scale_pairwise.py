"""Pairwise coupling of kernel logistic regression with all pairs' IRLS batched: equal to
one fit per pair."""

import pickle

import numpy as np
import pytest

from kclf.coupling import PairwiseCoupling
from kclf.kernels import rbf_kernel
from kclf.klr import KernelLogisticRegression
from kclf.klr import _solver as solver
from kclf.klr._solver import Design, IRLSPaths, irls, irls_primal, stack_pairs


class PerPairKLR(KernelLogisticRegression):
    """KernelLogisticRegression declining the batched pair fit (``PairBatching``):
    PairwiseCoupling falls back to its loop of one ``clone().fit`` per pair (the
    reference)."""

    def _fit_pairs(self, X, yi, pairs, pair_index):
        return None

    @classmethod
    def _pairs_decision(cls, estimators, X_train, X, pair_index):
        return None


def unbalanced(seed=0, sizes=(30, 22, 41, 15, 30), d=4):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(y.size, d)) + 0.9 * np.eye(len(sizes), d)[y] * 2
    return X, y


def test_stacked_irls_equals_irls_direct_per_problem():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3, 40, 3))
    K = np.stack([rbf_kernel(x, None, 1.0) + 1.0 for x in X])
    Y = (X[:, :, 0] + 0.5 * rng.normal(size=(3, 40)) > 0).astype(float)
    lam = np.array([1e-3, 0.1, 1.0])
    A, n_iter, conv = irls(K, Y.T, lam, tol=1e-10)
    for p in range(3):
        a, it, c = irls(K[p], Y[p][:, None], lam[p], tol=1e-10, solver="direct")
        # the same steps in the same order: only round-off of the stacked products differs
        assert it[0] == n_iter[p] and c[0] == conv[p]
        np.testing.assert_allclose(A[:, p], a[:, 0], rtol=0, atol=1e-8 * np.abs(a).max())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sigma": 1.5, "lam": 0.01},
        {"sigma": None, "lam": 0.1},  # each pair its own median width
        {"sigma": 2.0, "lam": 1e-3, "fit_intercept": False},
        {"sigma": 1.5, "lam": 0.05, "solver": "cg"},  # no batching: the loop
        {"kernel": "linear", "lam": 0.5},
    ],
)
def test_batched_pairs_equal_per_pair_fits(kwargs):
    X, y = unbalanced()
    Xt = X[::3] + 0.2
    fast = PairwiseCoupling(KernelLogisticRegression(**kwargs)).fit(X, y)
    slow = PairwiseCoupling(PerPairKLR(**kwargs)).fit(X, y)
    assert fast.converged_ and slow.converged_
    for a, b, idx in zip(fast.estimators_, slow.estimators_, fast.pair_index_, strict=True):
        # identical IRLS steps (same objective, step, halving and stopping rule), so the
        # solutions differ by round-off only, far inside the solver's tol = 1e-6
        np.testing.assert_array_equal(a.n_iter_, b.n_iter_)
        np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=0, atol=1e-8)
        np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=0, atol=1e-8)
        assert a.sigma_ == pytest.approx(b.sigma_, rel=1e-12) if b.sigma_ else a.sigma_ is None
        np.testing.assert_array_equal(a.X_fit_, X[idx])
        np.testing.assert_allclose(a.predict_proba(Xt), b.predict_proba(Xt), atol=1e-10)
    np.testing.assert_allclose(fast.predict_proba(Xt), slow.predict_proba(Xt), atol=1e-10)


def test_large_pairs_use_cg_like_the_per_pair_fit():
    """solver="auto": pairs of >= 128 samples are solved by CG, as their own fit does."""
    X, y = unbalanced(sizes=(70, 70, 20))
    fast = PairwiseCoupling(KernelLogisticRegression(sigma=1.0, lam=0.1)).fit(X, y)
    slow = PairwiseCoupling(PerPairKLR(sigma=1.0, lam=0.1)).fit(X, y)
    for a, b in zip(fast.estimators_, slow.estimators_, strict=True):
        np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=0, atol=1e-8)


def test_precomputed_kernel_pairs():
    X, y = unbalanced(seed=2)
    K = rbf_kernel(X, None, 1.3)
    Kt = rbf_kernel(X[:9] + 0.1, X, 1.3)
    fast = PairwiseCoupling(KernelLogisticRegression(kernel="precomputed", lam=0.02)).fit(K, y)
    ref = PairwiseCoupling(KernelLogisticRegression(sigma=1.3, lam=0.02)).fit(X, y)
    np.testing.assert_allclose(fast.predict_proba(Kt), ref.predict_proba(X[:9] + 0.1), atol=1e-9)


def test_klr_pairwise_mode_is_batched_and_owns_its_rows():
    X, y = unbalanced(seed=3)
    Xt = X[:12] - 0.1
    X_caller = X.copy()
    model = KernelLogisticRegression(sigma=1.2, lam=0.05).fit(X_caller, y)
    before = model.predict_proba(Xt)
    X_caller += 10.0  # the fitted pairs keep their own copy of the rows
    np.testing.assert_array_equal(model.predict_proba(Xt), before)
    ref = PairwiseCoupling(PerPairKLR(sigma=1.2, lam=0.05, multi_class="ovr")).fit(X, y)
    np.testing.assert_allclose(before, ref.predict_proba(Xt), atol=1e-10)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict_proba(Xt), before)


# --- Nystroem mode: the pairs share one basis (issue 45) ---------------------------------
# Each pair's fit stops when the relative change of its objective Phi is at most tol; in
# Newton's quadratic phase the gap to the maximum is below the last step's gain, so a fit
# is within tol |Phi| of it, and |Phi| <= n_pair log 2 (Phi lies between its value at
# alpha = 0, -n_pair log 2, and 0).  Phi is lam-strongly concave in the RKHS norm of f,
# so f is within sqrt(2 tol |Phi| / lam) of the maximiser in that norm, two fits within
# twice that; a prediction moves by at most that times sqrt(k(x, x) + 1) = sqrt(2) (the
# intercept's constant feature), a probability r_ij = sigmoid(f) by a quarter of it.
SHARED_TOL = 1e-12
EPS = np.finfo(float).eps


def pair_bound(n_pair, lam, tol=SHARED_TOL):
    """The largest difference of two fits' ``r_ij`` (comment above)."""
    return 0.25 * np.sqrt(2.0) * 2.0 * np.sqrt(2.0 * tol * n_pair * np.log(2.0) / lam)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"sigma": 1.5, "lam": 0.05},
        {"sigma": None, "lam": 0.1},  # each pair its own median width: a basis per width
        {"sigma": 2.0, "lam": 0.01, "fit_intercept": False},
        {"kernel": "linear", "lam": 0.5},
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
def test_shared_basis_of_every_row_equals_the_exact_pairs(kwargs, weighted):
    """With every training row a landmark the shared Nystroem basis is exact (``Phi
    Phi^T = K`` on every pair's rows, the prediction's ``phi(x)^T Phi^T = k(x, X)``), so
    each pair's primal fit is the exact kernel model of its rows."""
    X, y = unbalanced(sizes=(20, 14, 25, 11))
    rng = np.random.default_rng(3)
    w = {"sample_weight": rng.integers(0, 3, y.size).astype(float)} if weighted else {}
    X_test = rng.normal(size=(40, X.shape[1])) * 2.0
    exact = PairwiseCoupling(KernelLogisticRegression(tol=SHARED_TOL, **kwargs)).fit(X, y, **w)
    shared = PairwiseCoupling(
        KernelLogisticRegression(tol=SHARED_TOL, n_components=X.shape[0], random_state=0, **kwargs)
    ).fit(X, y, **w)
    assert shared.converged_
    maps = {id(e.nystroem_) for e in shared.estimators_}
    per_pair_width = "sigma" in kwargs and kwargs["sigma"] is None
    assert len(maps) == (len(shared.pairs_) if per_pair_width else 1)
    # |Phi| <= (the pair's summed weights) log 2
    bound = pair_bound(shared.pair_counts_.max(), kwargs["lam"])
    for Z in (X, X_test):
        diff = np.abs(shared.pairwise_proba(Z) - exact.pairwise_proba(Z)).max()
        assert diff <= bound, (diff, bound)
        np.testing.assert_array_equal(shared.predict(Z), exact.predict(Z))
    # the pairs' outputs from one test design per width equal each pair's own model's, to
    # the round-off of the products C (N^T w): m eps times those of their absolute values
    F = shared._pair_outputs(X_test)[1]
    for p, e in enumerate(shared.estimators_):
        design = e._design(X_test)
        scale = np.abs(design.C) @ (np.abs(design.N.T) @ np.abs(e.coef_))
        m = design.shape[1]
        assert np.all(np.abs(F[:, p] - e.decision_function(X_test)) <= 4 * m * EPS * scale)


def test_stacked_pairs_equal_one_fit_at_a_time():
    """Many pairs in one Newton loop (:func:`stack_pairs`: padded designs, rows of weight
    0, each pair in its row space or, where it has more rows than features, in the shared
    features) equal one fit per pair, alone and along a warm lambda path, within the
    strong-concavity bound above (in the weights: a prediction moves by ``||phi(x)||``
    times the weights' distance)."""
    rng = np.random.default_rng(5)
    n, m = 150, 24
    design = Design(rng.normal(size=(n, m)) / np.sqrt(m))
    sizes = (10, 17, 30, 24, 57, 8, 41, 23, 33)
    index = [np.sort(rng.choice(n, s, replace=False)) for s in sizes]
    targets = [rng.random(s) < 0.4 for s in sizes]
    weights = [None if p % 3 else rng.integers(0, 3, s).astype(float) for p, s in enumerate(sizes)]
    train, Y, c, basis = stack_pairs(design, index, targets, weights)
    assert basis is not None and train.shape == (max(sizes), m)
    lams = np.array([1.0, 0.1, 0.01])
    paths = IRLSPaths("rbf", "pairwise", "error", SHARED_TOL, 100, 1e-6, "auto", True)
    stacked = paths.primal_path(train, design, Y, lams, [], c, basis)
    coef, _, conv = irls_primal(train, Y, 0.05, SHARED_TOL, weights=c)
    assert conv.all()
    coef = basis @ coef
    norm = np.sqrt(np.max(np.sum(design.C**2, axis=1)))
    for p, idx in enumerate(index):
        sub, q = design.row_space(idx)
        y = targets[p].astype(float)[:, None]
        one = paths.primal_path(sub, design, y, lams, [], weights[p], q)[:, :, 0]
        top = (idx.size if weights[p] is None else weights[p].sum()) * np.log(2.0)
        gap = 2.0 * np.sqrt(2.0 * SHARED_TOL * top / lams)
        assert np.all(np.abs(stacked[:, :, p] - one) <= 0.25 * norm * gap[:, None])
        w1, _, _ = irls_primal(sub, y, 0.05, SHARED_TOL, weights=weights[p])
        w1 = w1[:, 0] if q is None else q @ w1[:, 0]
        assert np.linalg.norm(coef[:, p] - w1) <= 2.0 * np.sqrt(2.0 * SHARED_TOL * top / 0.05)


@pytest.mark.parametrize("weighted", [False, True])
def test_pairs_of_class_blocks_equal_one_fit_at_a_time(weighted):
    """Pairs with at least as many rows as features (:func:`stack_pairs` gives
    :class:`solver.PairDesigns`: each class's rows one block, read once per pass) fit what
    each pair fits alone, within the strong-concavity bound in the weights; their products
    are adjoint and their Hessians those of the pairs' own rows."""
    rng = np.random.default_rng(7)
    n, m, c = 240, 12, 5
    design = Design(rng.normal(size=(n, m)) / np.sqrt(m))
    yi = rng.permutation(np.arange(n) % c)
    yi[:10] = 0  # unequal classes: the blocks are padded to the largest
    sw = rng.integers(0, 3, n).astype(float) if weighted else None
    iu, ju = np.triu_indices(c, k=1)
    index = [np.flatnonzero((yi == i) | (yi == j)) for i, j in zip(iu, ju, strict=True)]
    targets = [yi[idx] == i for idx, i in zip(index, iu, strict=True)]
    weights = [None if sw is None else sw[idx] for idx in index]
    train, Y, cw, basis = stack_pairs(design, index, targets, weights)
    assert isinstance(train, solver.PairDesigns) and basis is None and len(train.blocks) == c
    T, cols = iu.size, np.arange(iu.size)
    V, R = rng.normal(size=(m, T)), rng.normal(size=(train.shape[0], T))
    F = train.forward(V, cols)
    assert np.isclose(np.sum(F * R), np.sum(V * train.backward(R, cols)), rtol=1e-12)
    some = np.array([1, 4, 8])
    np.testing.assert_allclose(train.forward(V[:, some], some), F[:, some], rtol=0, atol=1e-14)
    D = rng.random(size=(train.shape[0], T))
    G = train.gram(D, cols)
    for t, idx in enumerate(index):
        f = F[:, t][cw[:, t] > 0] if sw is None else None
        if f is not None:  # the pair's outputs, its rows in its classes' order
            rows = np.concatenate([idx[targets[t]], idx[~targets[t]]])
            np.testing.assert_allclose(f, design.C[rows] @ V[:, t], rtol=1e-12, atol=1e-14)
        d = np.concatenate([D[: targets[t].sum(), t], D[train.h :, t][: (~targets[t]).sum()]])
        rows = np.concatenate([idx[targets[t]], idx[~targets[t]]])
        H = design.C[rows].T @ (d[:, None] * design.C[rows])
        np.testing.assert_allclose(np.triu(G[t]), np.triu(H), rtol=1e-12, atol=1e-13)
    coef, _, conv = irls_primal(train, Y, 0.05, SHARED_TOL, weights=cw)
    assert conv.all()
    for p, idx in enumerate(index):
        y = targets[p].astype(float)[:, None]
        w1, _, _ = irls_primal(design.rows(idx), y, 0.05, SHARED_TOL, weights=weights[p])
        top = (idx.size if weights[p] is None else weights[p].sum()) * np.log(2.0)
        assert np.linalg.norm(coef[:, p] - w1[:, 0]) <= 2.0 * np.sqrt(2.0 * SHARED_TOL * top / 0.05)


def test_shared_basis_pairs_in_chunks(monkeypatch):
    """The pairs stacked in groups (a small memory cap) fit what one stack fits."""
    X, y = unbalanced(sizes=(20, 14, 25, 11))
    kw = {"sigma": 1.5, "lam": 0.05, "tol": SHARED_TOL, "n_components": 30, "random_state": 0}
    one = PairwiseCoupling(KernelLogisticRegression(**kw)).fit(X, y)
    sizes = np.array([idx.size for idx in one.pair_index_])
    monkeypatch.setattr(solver, "CHOLESKY_BATCH_ENTRIES", 2000)
    chunks = solver.pair_chunks(sizes, 31)
    assert len(chunks) > 2 and np.array_equal(np.sort(np.concatenate(chunks)), np.arange(6))
    split = PairwiseCoupling(KernelLogisticRegression(**kw)).fit(X, y)
    bound = pair_bound(one.pair_counts_.max(), kw["lam"])
    assert np.abs(split.pairwise_proba(X) - one.pairwise_proba(X)).max() <= bound
