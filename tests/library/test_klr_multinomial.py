"""The softmax (multinomial) kernel logistic regression on the Nystroem design: the
optimum of its penalised likelihood, its two-class relation to the binary model, its
determinism, its refusals and its CV search."""

import numpy as np
import pytest
import scipy.optimize
from scipy.special import logsumexp, softmax
from sklearn.datasets import make_classification

from kclf import KernelLogisticRegression, KernelLogisticRegressionCV
from kclf._folds import cv_folds
from kclf.klr import _multinomial
from kclf.klr._multinomial import fit_multinomial, multinomial_path
from kclf.klr._solver import Design, IRLSPaths, irls_primal


def _data(n=150, c=3, seed=0):
    X, y = make_classification(
        n_samples=n, n_features=5, n_informative=4, n_redundant=0, n_classes=c,
        n_clusters_per_class=1, random_state=seed,
    )  # fmt: skip
    return X, y


def _design(X, m, seed=0):
    est = KernelLogisticRegression(n_components=m, multi_class="multinomial", random_state=seed)
    est.fit(X, np.arange(X.shape[0]) % 3)
    return est._design(X).formed().C, est


def _neg_objective(w, Phi, Y, lam, weights):
    """``-Phi(W)`` and its gradient (the module docstring's objective, written afresh)."""
    W = w.reshape(Phi.shape[1], Y.shape[1])
    F = Phi @ W
    ll = weights * (np.sum(Y * F, axis=1) - logsumexp(F, axis=1))
    R = weights[:, None] * (Y - softmax(F, axis=1))
    return -(ll.sum() - 0.5 * lam * np.sum(W * W)), -(Phi.T @ R - lam * W).ravel()


@pytest.mark.parametrize("exact", [True, False])
def test_equals_lbfgs_on_the_same_objective(exact, monkeypatch):
    """Newton (exact steps, and the preconditioned-CG steps) reaches the maximiser that
    L-BFGS-B finds.  Strong concavity (modulus ``lam``) bounds each solution's distance to
    the maximiser by its gradient norm over ``lam``: the two differ by at most the sum."""
    X, y = _data()
    Phi, _ = _design(X, 40)
    Y = np.eye(3)[y]
    weights = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    lam, tol = 0.05, 1e-12
    if not exact:  # the preconditioned-CG steps
        monkeypatch.setattr(_multinomial, "EXACT_MAX", 0)
    W, _, _, ok = fit_multinomial(Design(Phi), Y, lam, tol=tol, max_iter=200, weights=weights)
    assert ok
    res = scipy.optimize.minimize(
        _neg_objective, np.zeros(W.size), args=(Phi, Y, lam, weights), jac=True,
        method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 20000},
    )  # fmt: skip
    g_newton = np.linalg.norm(_neg_objective(W.ravel(), Phi, Y, lam, weights)[1])
    g_lbfgs = np.linalg.norm(res.jac)
    # the stopping rule (relative change of Phi at most tol) leaves a gap of about
    # tol |Phi|, so a gradient of at most sqrt(2 tol |Phi| ||H||) with ||H|| <= n ||phi||^2
    h_norm = np.sum(weights) * np.max(np.sum(Phi**2, axis=1)) + lam
    assert g_newton <= np.sqrt(2 * tol * abs(res.fun) * h_norm)
    np.testing.assert_allclose(W.ravel(), res.x, rtol=0, atol=(g_newton + g_lbfgs) / lam)
    assert -_neg_objective(W.ravel(), Phi, Y, lam, weights)[0] >= -res.fun - tol * abs(res.fun)
    np.testing.assert_allclose(W.sum(axis=1), 0.0, atol=(g_newton + g_lbfgs) / lam)


def test_two_classes_is_the_binary_model_at_half_the_penalty():
    """With two classes the maximiser is ``W = [-w/2, w/2]`` where ``w`` is the binary
    model's at ``lam / 2`` (module docstring), so the probabilities agree."""
    X, y = _data(c=2)
    Phi, _ = _design(X, 40)
    lam, tol = 0.1, 1e-12
    W, F, _, _ = fit_multinomial(Design(Phi), np.eye(2)[y], lam, tol=tol, max_iter=200)
    w, _, _ = irls_primal(Design(Phi), y[:, None].astype(float), lam / 2, tol=tol, max_iter=200)
    np.testing.assert_allclose(W[:, 1] - W[:, 0], w[:, 0], atol=1e-6)
    np.testing.assert_allclose(
        softmax(F, axis=1)[:, 1], 1 / (1 + np.exp(-Phi @ w[:, 0])), atol=1e-8
    )


def test_estimator_softmax_and_determinism():
    X, y = _data(c=4)
    kw = dict(lam=0.01, n_components=30, multi_class="multinomial")
    a = KernelLogisticRegression(random_state=3, **kw).fit(X, y)
    b = KernelLogisticRegression(random_state=3, **kw).fit(X, y)
    P = a.predict_proba(X)
    np.testing.assert_array_equal(P, b.predict_proba(X))
    np.testing.assert_allclose(P, softmax(a.decision_function(X), axis=1), rtol=1e-12)
    assert a.coef_.shape == (31, 4) and a.converged_
    c = KernelLogisticRegression(random_state=4, **kw).fit(X, y)
    assert not np.array_equal(P, c.predict_proba(X))


@pytest.mark.parametrize("Est", [KernelLogisticRegression, KernelLogisticRegressionCV])
def test_refused_in_one_line(Est):
    X, y = _data()
    with pytest.raises(ValueError, match="multi_class='multinomial' needs n_components") as e:
        Est(multi_class="multinomial").fit(X, y)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="multi_class"):
        Est(multi_class="softmax", n_components=10).fit(X, y)


def test_cv_chooses_by_the_same_scores():
    """The search's mean CV log loss of every setting equals that of separate fits from
    zero on the same folds and the same design (the design of all rows, cut into the
    folds), and the choice is the best of them."""
    X, y = _data(n=120)
    sigmas, lams = np.array([0.7, 2.0]), np.array([0.01, 1.0])
    cv = KernelLogisticRegressionCV(
        sigmas=sigmas, lams=lams, n_components=15, multi_class="multinomial", random_state=0,
        tol=1e-10, scoring="log_loss",
    ).fit(X, y)  # fmt: skip
    folds = cv_folds(y, 2, 0)
    paths = IRLSPaths(
        "rbf", "multinomial", "log_loss", 1e-10, 100, 1e-6, "auto", True, 15, 0, multinomial_path
    )
    res = cv.cv_results_
    mine = np.empty(res["mean_test_score"].shape)
    for k, (sigma, lam) in enumerate(zip(res["sigma"], res["lam"])):
        D = paths.features(X, sigma)
        losses = []
        for tr, va in folds:
            W, _, _, _ = fit_multinomial(D.rows(tr), np.eye(3)[y[tr]], lam, tol=1e-10)
            P = softmax(D.rows(va).forward(W), axis=1)
            losses.append(-np.mean(np.log(P[np.arange(va.size), y[va]])))
        mine[k] = np.mean(losses)
    np.testing.assert_allclose(res["mean_test_score"], mine, rtol=1e-6)
    best = np.argmin(mine)
    assert (cv.sigma_, cv.lam_) == (res["sigma"][best], res["lam"][best])
    assert cv.best_estimator_.multi_class == "multinomial"


@pytest.mark.parametrize("Est", [KernelLogisticRegression, KernelLogisticRegressionCV])
def test_array_api_refused_in_one_line(Est):
    xp = pytest.importorskip("array_api_strict")
    from sklearn import config_context

    X, y = _data()
    est = Est(multi_class="multinomial", n_components=10)
    assert not est.__sklearn_tags__().array_api_support
    with config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="multinomial' is not supported for array API") as e:
            est.fit(xp.asarray(X), xp.asarray(y))
    assert "\n" not in str(e.value)
