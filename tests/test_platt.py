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
    X, y = _data(1)
    model = PlattScaled(SVC(), cv=5, random_state=0).fit(X, y)
    assert model.predict_proba(X).shape == (60, 2)
    assert list(model.classes_) == [0, 1]


def test_platt_is_seeded():
    X, y = _data(20)
    a = PlattScaled(SVC(), cv=3, random_state=4).fit(X, y).predict_proba(X)
    b = PlattScaled(SVC(), cv=3, random_state=4).fit(X, y).predict_proba(X)
    assert np.array_equal(a, b)
