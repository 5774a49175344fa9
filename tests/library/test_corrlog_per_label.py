"""Per-label strength of CorrLog's unary terms: each label's weights carry their own
elastic net (the couplings the shared one); the solution is optimal for that objective,
the choice per label comes from a second CV path with the couplings' penalty held at the
shared choice, and the paper's shared penalty is unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import approx_fprime, minimize

from kclf.corrlog import CorrLog
from kclf.corrlog import _solver as solver
from kclf.corrlog import belief_propagation as bp
from kclf.corrlog._decoding import _conditional_log_likelihood

PARAMS = {
    "couplings": True,
    "coupling_scale": 1.0,
    "scaling": None,
    "whiten_eps": 1e-2,
    "tol": 1e-15,
    "cv_tol": 1e-8,
    "max_iter": 20000,
    "monotone": True,
    "step": "backtracking",
}


def _problem(seed=0, n=160, d=3, m=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    score = X @ rng.normal(size=(d, m)) + rng.normal(size=(n, m))
    score[:, 1:] += 1.2 * (score[:, :-1] > 0)  # each label moves with the previous one
    return X, (score > 0.3).astype(int)


def _objective(theta, X, Y, r1, r2, rho1, rho2):
    """Eq. (12)/n written out label by label, each label's weights with its own elastic
    net ``(r1[i], r2[i])``, the couplings with ``(rho1, rho2)``."""
    n, d = X.shape
    m = Y.shape[1]
    B = theta[: m * d].reshape(m, d)
    b = theta[m * d : m * d + m]
    iu = np.triu_indices(m, 1)
    A = np.zeros((m, m))
    A[iu] = theta[m * d + m :]
    A = A + A.T
    S = 2 * Y - 1
    total = 0.0
    for i in range(m):
        f = X @ B[i] + b[i] + sum(A[i, j] * S[:, j] for j in range(m) if j != i)
        total += np.sum(np.logaddexp(0.0, -2.0 * S[:, i] * f)) / n
        total += r2[i] * B[i] @ B[i] + r1[i] * np.abs(B[i]).sum()
    a = A[iu]
    return total + rho2 * a @ a + rho1 * np.abs(a).sum()


def _theta(coef, intercept, A):
    return np.concatenate([coef.ravel(), intercept, A[np.triu_indices(len(A), 1)]])


def test_per_label_ridge_matches_a_generic_solver():
    X, Y = _problem()
    m, d = Y.shape[1], X.shape[1]
    r1, r2 = np.zeros(m), np.array([1e-1, 1e-3, 3e-2])
    active = np.ones(m, dtype=bool)
    coef, intercept, A, info = solver.fit_penalised(PARAMS, X, Y, active, 0.0, 1e-2, (), (r1, r2))
    assert info["converged"]
    ref = minimize(
        _objective,
        np.zeros(m * d + m + m * (m - 1) // 2),
        args=(X, Y, r1, r2, 0.0, 1e-2),
        method="L-BFGS-B",
        jac="3-point",
        options={"gtol": 1e-11, "ftol": 1e-15, "maxiter": 5000},
    )
    np.testing.assert_allclose(_theta(coef, intercept, A), ref.x, atol=1e-5)
    # the labels' strengths matter: the strongest-penalised label has the smallest weights
    norms = np.linalg.norm(coef, axis=1)
    assert norms[0] < norms[2] < norms[1]


def test_per_label_elastic_net_satisfies_subgradient_optimality():
    X, Y = _problem(seed=1)
    m, d = Y.shape[1], X.shape[1]
    r1, r2 = np.array([0.15, 0.0, 0.05]), np.array([1e-3, 1e-2, 1e-3])
    rho1, rho2 = 0.02, 1e-2
    active = np.ones(m, dtype=bool)
    coef, intercept, A, _ = solver.fit_penalised(PARAMS, X, Y, active, rho1, rho2, (), (r1, r2))
    theta = _theta(coef, intercept, A)
    # gradient of the smooth part (no l1 term) of the independent objective
    g = approx_fprime(theta, _objective, 1e-7, X, Y, np.zeros(m), r2, 0.0, rho2)
    l1 = np.concatenate([np.repeat(r1, d), np.zeros(m), np.full(m * (m - 1) // 2, rho1)])
    zero = (l1 > 0) & (theta == 0)
    assert zero.any(), "these penalties should zero some weights"
    assert np.all(np.abs(g[zero]) <= l1[zero] + 1e-5)
    nz = theta != 0
    np.testing.assert_allclose(g[nz], -l1[nz] * np.sign(theta[nz]), atol=1e-5)


def test_screening_with_per_label_thresholds_keeps_the_solution():
    # a path step from 1.25 r1 to r1: the strong rule sets aside the features whose
    # gradient is below 0.75 r1 for every label; the KKT check keeps the solution exact
    X, Y = _problem(seed=2, d=30)
    X[:, 3:] *= 0.2  # mostly weak features
    m = Y.shape[1]
    r1, r2 = np.array([0.08, 0.03, 0.05]), np.full(m, 1e-3)
    data = solver.Data(X - X.mean(0), 2.0 * Y - 1.0, True)
    opts = {"tol": 1e-13, "max_iter": 20000, "monotone": True, "step": "backtracking"}
    plain = dict(opts, screen=False)
    start, _, grad0, _ = solver.solve(
        data, 0.05, 1e-3, 1.0, data.initial(), plain, label_rho=(1.25 * r1, r2)
    )
    screened, _, _, info = solver.solve(
        data, 0.05, 1e-3, 1.0, start, opts, grad0, 1.25 * r1, (r1, r2)
    )
    cold, _, _, _ = solver.solve(data, 0.05, 1e-3, 1.0, start, plain, label_rho=(r1, r2))
    assert not info["kept"].all()  # something was set aside
    np.testing.assert_allclose(screened, cold, atol=1e-6)


@pytest.mark.parametrize("couplings", [True, False])
def test_shared_penalty_is_unchanged_bit_for_bit(couplings):
    # one setting on the grid: every label chooses it, and the per-label fit is the
    # shared fit exactly (the same code path: no per-label arithmetic)
    X, Y = _problem(seed=3, n=200)
    kw = {"couplings": couplings, "rho1_grid": [1e-3], "rho2_grid": [1e-2], "cv": 3}
    a = CorrLog(penalty="shared", **kw).fit(X, Y)
    b = CorrLog(penalty="per_label", **kw).fit(X, Y)
    for name in ("coef_", "intercept_", "couplings_", "objective_path_"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    np.testing.assert_array_equal(b.label_rho1_, np.full(Y.shape[1], 1e-3))


def test_per_label_choice_is_each_labels_best_on_the_path():
    rng = np.random.default_rng(4)
    n, d = 240, 25
    X = rng.normal(size=(n, d))
    # label 0: one strong feature (prefers strong l1); label 1: many weak ones (weak penalty)
    Y = np.column_stack(
        [
            X[:, 0] + 0.3 * rng.normal(size=n) > 0,
            X[:, 1:21] @ rng.normal(size=20) + 0.3 * rng.normal(size=n) > 0,
            rng.random(n) < 0.3,  # noise: best predicted by its frequency
        ]
    ).astype(int)
    grids = {"rho1_grid": [1e-1, 1e-2, 1e-3, 0.0], "rho2_grid": [1.0, 0.1, 0.01, 1e-3]}
    clf = CorrLog(penalty="per_label", decode="marginal", tol=1e-12, **grids).fit(X, Y)
    shared = CorrLog(penalty="shared", decode="marginal", **grids).fit(X, Y)
    res = clf.cv_results_
    assert np.array_equal(res["mean_score"], shared.cv_results_["mean_score"])  # same path
    assert (clf.rho1_, clf.rho2_) == (shared.rho1_, shared.rho2_)  # the couplings' choice
    for j in range(3):
        s = np.round(res["mean_label_score_shared_couplings"][:, j], 12)
        k = int(np.argmax(s))  # first maximum: the strongest penalty among the best
        assert (clf.label_rho1_[j], clf.label_rho2_[j]) == (res["rho1"][k], res["rho2"][k])
    assert len({(clf.label_rho1_[j], clf.label_rho2_[j]) for j in range(3)}) > 1
    # each label's weights solve its own penalty: refit from scratch with the choices
    active = np.ones(3, dtype=bool)
    params = clf._params()
    label_rho = (clf.label_rho1_, clf.label_rho2_)
    coef, *_ = solver.fit_penalised(params, X, Y, active, clf.rho1_, clf.rho2_, (), label_rho)
    np.testing.assert_allclose(clf.coef_, coef, atol=1e-4 * np.abs(coef).max())


def _marginal_log_likelihood(U, A, Y):
    P = bp.exact_marginals(U, A)
    return np.mean(Y * np.log(P) + (1 - Y) * np.log1p(-P), axis=0)


@pytest.mark.parametrize("criterion", ["auto", "conditional"])
def test_second_path_scores_the_model_the_per_label_fit_has(criterion):
    # one fold: the second path's score of every label at a weights' setting is the held-out
    # score of a direct fit with every label's weights at that setting and the couplings at
    # the shared choice (the structure finally fitted): the label's marginal log-likelihood
    # by default at m <= 12, the conditional (11) with criterion "conditional"; the first
    # path's conditional (11), with the couplings at the setting too, is not it
    X, Y = _problem(seed=5, n=240, d=12, m=4)
    idx = np.random.default_rng(0).permutation(len(X))
    train, test = np.sort(idx[:160]), np.sort(idx[160:])
    grids = {"rho1_grid": [1e-2, 1e-3, 0.0], "rho2_grid": [1.0, 0.1, 1e-2]}
    cv_tol = 1e-12
    kw = {"cv": [(train, test)], "cv_tol": cv_tol, "max_iter": 100000, **grids}
    clf = CorrLog(penalty="per_label", label_criterion=criterion, **kw)
    clf.fit(X, Y)
    res = clf.cv_results_
    params = dict(clf._params(), tol=1e-15)
    m = Y.shape[1]
    active = np.ones(m, dtype=bool)
    direct_score = (
        _conditional_log_likelihood if criterion == "conditional" else _marginal_log_likelihood
    )
    # FISTA stops with its last step at most sqrt(2 tol |P| / L) long (fista's docstring):
    # both fits are that close to the optimum up to curvature and row-norm constants of
    # order 1-10 here, and both scores are Lipschitz in the parameters on these rows
    atol = 100.0 * np.sqrt(cv_tol)
    first_gap = 0.0
    for k in range(len(res["rho1"])):
        label_rho = (np.full(m, res["rho1"][k]), np.full(m, res["rho2"][k]))
        coef, intercept, A, info = solver.fit_penalised(
            params, X[train], Y[train], active, clf.rho1_, clf.rho2_, (), label_rho
        )
        assert info["converged"]
        U = X[test] @ coef.T + intercept
        score = res["split0_label_score_shared_couplings"][k]
        np.testing.assert_allclose(score, direct_score(U, A, Y[test]), rtol=0, atol=atol)
        np.testing.assert_array_equal(res["mean_label_score_shared_couplings"][k], score)
        direct = _conditional_log_likelihood(U, A, Y[test])
        first_gap = max(first_gap, float(np.abs(res["mean_label_score"][k] - direct).max()))
    assert first_gap > 10 * atol  # the check tells the two paths apart
    # the final model: each label's weights at its best on the second path
    best = np.argmax(np.round(res["mean_label_score_shared_couplings"], 12), axis=0)
    np.testing.assert_array_equal(clf.label_rho1_, res["rho1"][best])
    np.testing.assert_array_equal(clf.label_rho2_, res["rho2"][best])


def test_label_criteria():
    # "auto" is the marginal's log-likelihood where the marginals are enumerated
    # (m <= MAX_EXACT_LABELS or inference="exact") and the conditional (11) beyond
    from kclf.corrlog._decoding import MAX_EXACT_LABELS
    from kclf.corrlog._penalty_search import label_scorer

    rng = np.random.default_rng(7)
    for m in (4, MAX_EXACT_LABELS + 2):
        U = rng.normal(size=(50, m))
        A = np.triu(0.4 * rng.normal(size=(m, m)) / np.sqrt(m), 1)
        A = A + A.T
        Y = (rng.random((50, m)) < 0.4).astype(int)
        cond = _conditional_log_likelihood(U, A, Y)
        np.testing.assert_array_equal(label_scorer("conditional", "bp", 100, 0.0)(U, A, Y), cond)
        exact = label_scorer("auto", "exact", 100, 0.0)(U, A, Y)
        np.testing.assert_allclose(exact, _marginal_log_likelihood(U, A, Y), rtol=1e-12)
        auto = label_scorer("auto", "bp", 100, 0.0)(U, A, Y)
        np.testing.assert_allclose(auto, exact if m <= MAX_EXACT_LABELS else cond, rtol=1e-12)
        if m > MAX_EXACT_LABELS:  # "marginal" keeps the marginals beyond: BP's here
            bp_score = label_scorer("marginal", "bp", 200, 0.0)(U, A, Y)
            np.testing.assert_allclose(bp_score, exact, atol=0.05)
            assert not np.allclose(bp_score, cond)
    with pytest.raises(ValueError, match="per-label criterion"):
        label_scorer("nope", "bp", 100, 0.0)


def test_criterion_changes_only_the_labels_choice():
    # the first path and the couplings' choice do not depend on the labels' criterion
    X, Y = _problem(seed=6, n=200, d=6, m=3)
    grids = {"rho1_grid": [1e-2, 0.0], "rho2_grid": [0.1, 1e-2], "random_state": 0}
    base = CorrLog(penalty="per_label", **grids).fit(X, Y)
    clf = CorrLog(penalty="per_label", label_criterion="conditional", **grids)
    clf.fit(X, Y)
    res = clf.cv_results_
    assert np.array_equal(res["mean_score"], base.cv_results_["mean_score"])
    assert (clf.rho1_, clf.rho2_) == (base.rho1_, base.rho2_)
    assert not np.array_equal(
        res["mean_label_score_shared_couplings"],
        base.cv_results_["mean_label_score_shared_couplings"],
    )
    best = np.argmax(np.round(res["mean_label_score_shared_couplings"], 12), axis=0)
    np.testing.assert_array_equal(clf.label_rho1_, res["rho1"][best])


def test_shared_model_has_no_second_path():
    # the default model's CV is the first path alone, and per-label's first path is it
    X, Y = _problem(seed=6, n=200, d=6, m=3)
    grids = {"rho1_grid": [1e-2, 0.0], "rho2_grid": [0.1, 1e-2], "random_state": 0}
    shared = CorrLog(**grids).fit(X, Y)
    per_label = CorrLog(penalty="per_label", **grids).fit(X, Y)
    keys = {"rho1", "rho2", "mean_score", "mean_n_iter", "mean_label_score"}
    assert set(shared.cv_results_) == keys | {f"split{k}_score" for k in range(3)}
    assert np.isnan(shared.cv_results_["mean_label_score"]).all()
    for key in keys - {"mean_label_score"}:
        assert np.array_equal(shared.cv_results_[key], per_label.cv_results_[key]), key
    assert (shared.rho1_, shared.rho2_) == (per_label.rho1_, per_label.rho2_)
    assert "mean_label_score_shared_couplings" in per_label.cv_results_


@pytest.mark.parametrize("m,scale,seed", [(5, 0.3, 0), (20, 0.3, 1), (20, 1.5, 2), (40, 0.8, 3)])
def test_map_subset_accuracy_without_decoding_every_row_is_the_decoded_one(m, scale, seed):
    import warnings

    from kclf.corrlog._decoding import _decode, _map_subset_accuracy

    rng = np.random.default_rng(seed)
    n = 300
    U = rng.normal(scale=1.5, size=(n, m))
    a = np.triu(rng.normal(scale=scale, size=(m, m)), 1)
    A = a + a.T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        decoded = _decode(U, A, "map", "bp", 50, 0.0)[0]
        # truths: half the rows the decoded vector itself (a candidate that scores), the
        # others a random flip of one label of it (ruled out, or a near-optimum)
        Y = decoded.copy()
        flip = rng.random(n) < 0.5
        cols = rng.integers(m, size=n)
        Y[flip, cols[flip]] ^= 1
        rows_ok = rng.random(n) < 0.9
        want = np.mean(np.all(decoded == Y, axis=1) & rows_ok)
        got = _map_subset_accuracy(U, A, Y, rows_ok, "bp", 50, 0.0)
    assert got == want
    assert 0.3 < want < 0.6  # both kinds of rows occur
    if m <= 12:
        exact = (bp.exact_map(U, A) > 0).astype(int)
        ok = np.mean(np.all(exact == Y, axis=1) & rows_ok)
        assert _map_subset_accuracy(U, A, Y, rows_ok, "exact", 50, 0.0) == ok
