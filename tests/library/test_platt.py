import numpy as np
from sklearn.svm import SVC

from kclf.platt import PlattScaled


def _data(n_pos):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.zeros(60, dtype=int)
    y[:n_pos] = 1
    X[:n_pos] += 1.5
    return X, y


def test_platt_keeps_the_svc_ranking_and_gives_distributions():
    X, y = _data(25)
    P = PlattScaled(SVC(C=1.0), cv=3, random_state=0).fit(X, y).predict_proba(X)
    d = SVC(C=1.0).fit(X, y).decision_function(X)
    assert np.allclose(P.sum(axis=1), 1.0) and (P >= 0).all()
    # a monotone increasing sigmoid of the same decisions: identical ordering
    assert np.array_equal(np.argsort(P[:, 1], kind="stable"), np.argsort(d, kind="stable"))


def test_platt_with_a_single_positive_uses_the_training_decisions():
    """No folds are possible with one positive: the sigmoid 1 / (1 + exp(a f + b)) is fitted
    to the decision values f of the SVC trained on all the data, with Platt's targets
    (n+ + 1) / (n+ + 2) and 1 / (n- + 2).  Here it is fitted by Newton's method on that
    convex two-parameter cross-entropy, and compared."""
    X, y = _data(1)
    model = PlattScaled(SVC(), cv=5, random_state=0).fit(X, y)
    assert list(model.classes_) == [0, 1]
    f = SVC().fit(X, y).decision_function(X)
    n_pos, n_neg = y.sum(), (1 - y).sum()
    t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    A = np.c_[f, np.ones_like(f)]
    theta = np.zeros(2)
    for _ in range(100):  # p = P(y = 1) = 1 / (1 + exp(a f + b))
        p = 1 / (1 + np.exp(A @ theta))
        H = (A * (p * (1 - p))[:, None]).T @ A
        theta -= np.linalg.solve(H, A.T @ (t - p))
    p = 1 / (1 + np.exp(A @ theta))
    assert np.abs(A.T @ (t - p)).max() < 1e-12  # the optimum
    # scikit-learn's L-BFGS stops at a gradient of max-norm 1e-6 (gtol), so its (a, b) is
    # within sqrt(2) 1e-6 / mu of the optimum (mu: the Hessian's smallest eigenvalue), and
    # a probability within 1/4 |(f, 1)| times that
    mu = np.linalg.eigvalsh((A * (p * (1 - p))[:, None]).T @ A).min()
    tol = 0.25 * np.sqrt(1 + f**2) * np.sqrt(2) * 1e-6 / mu
    got = model.predict_proba(X)
    assert np.all(np.abs(got[:, 1] - p) <= tol)
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


def test_platt_is_seeded():
    X, y = _data(20)
    a = PlattScaled(SVC(), cv=3, random_state=4).fit(X, y).predict_proba(X)
    b = PlattScaled(SVC(), cv=3, random_state=4).fit(X, y).predict_proba(X)
    assert np.array_equal(a, b)
