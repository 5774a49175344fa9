import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from scipy.special import expit
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import kclf
from kclf.platt import MAX_SCORE, platt_scores


def _data(n_pos):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = np.zeros(60, dtype=int)
    y[:n_pos] = 1
    X[:n_pos] += 1.5
    return X, y


def test_platt_keeps_the_svc_ranking_and_gives_distributions():
    X, y = _data(25)
    P = kclf.PlattScaled(SVC(C=1.0), cv=3, random_state=0).fit(X, y).predict_proba(X)
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
    model = kclf.PlattScaled(SVC(), cv=5, random_state=0).fit(X, y)
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
    a = kclf.PlattScaled(SVC(), cv=3, random_state=4).fit(X, y).predict_proba(X)
    b = kclf.PlattScaled(SVC(), cv=3, random_state=4).fit(X, y).predict_proba(X)
    assert np.array_equal(a, b)


# --- every public binary estimator, and scikit-learn's own Platt scaling on an SVC ------

BINARY = [
    kclf.LSPC(),
    kclf.LSPC(rounding="parameters"),
    kclf.LSPC(rounding="none"),
    kclf.LSPC(kernel="precomputed"),
    kclf.LSPCCV(sigmas=[0.5, 2.0], lams=[0.01, 0.1], random_state=0),
    kclf.KernelLogisticRegression(),
    kclf.KernelLogisticRegressionCV(sigmas=[0.5, 2.0], lams=[0.01, 0.1], random_state=0),
    kclf.MAPLP(),
    kclf.ManifoldGPC(n_centers=5, length_scale=1.0, amplitude=4.0, random_state=0),
    kclf.WeightedRidgeLogistic(),
    kclf.PairwiseCoupling(LogisticRegression()),
    kclf.CorrLog(rho1=1e-3, rho2=1e-2),
    SVC(),
]


def _rounded_data(n):
    """Two informative features and two noise ones, 5% flipped labels: LSPC-new rounds
    many posteriors to exactly 0, so its log-odds are infinite there."""
    X, y = make_classification(n, 4, random_state=0)
    return X, y


@pytest.mark.parametrize("est", BINARY, ids=lambda e: repr(e)[:60])
def test_platt_wraps_every_binary_estimator(est):
    """The calibrated P(classes_[1] | x) is finite, in [0, 1], and a monotone function of
    the refitted estimator's finite score (platt_scores): rows sorted by the score have
    non-decreasing probabilities (the fitted slope is negative on these data), and rows
    with equal scores equal probabilities."""
    X, y = _rounded_data(80)
    Xin = rbf_kernel(X, X, 0.5) if getattr(est, "kernel", None) == "precomputed" else X
    model = kclf.PlattScaled(est, cv=3, random_state=0).fit(Xin, y)
    P = model.predict_proba(Xin)
    assert np.isfinite(P).all() and (P >= 0).all() and (P <= 1).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    refit = model.calibrated_.calibrated_classifiers_[0].estimator
    s = platt_scores(refit.estimator_, Xin)
    assert np.isfinite(s).all() and np.abs(s).max() <= MAX_SCORE
    order = np.argsort(s, kind="stable")
    ps, ss = P[order, 1], s[order]
    assert np.all(np.diff(ps) >= 0)
    assert np.all(np.diff(ps)[np.diff(ss) == 0] == 0)


def test_platt_on_lspc_is_not_a_coin_flip():
    """LSPC-new's infinite log-odds once made the sigmoid fit NaN: 0.5 / 0.5 or NaN rows and
    accuracy 0.50 on the training rows where LSPC alone gets 0.945."""
    X, y = _rounded_data(200)
    for est in (kclf.LSPC(), kclf.LSPCCV(random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            P = kclf.PlattScaled(est, random_state=0).fit(X, y).predict_proba(X)
        assert np.isfinite(P).all()
        own = est.fit(X, y).score(X, y)
        assert np.mean(P.argmax(axis=1) == y) >= own - 0.02


@pytest.mark.parametrize("est", [kclf.LSPC(), kclf.LSPCCV(random_state=0)], ids=repr)
def test_platt_fits_lspc_on_its_posterior_itself(est):
    """LSPC's sigmoid is of the posterior estimate p (least squares on the probability
    scale): the calibrated log-odds are an affine function A' p + B' of the refitted
    LSPC's p, exactly up to round-off, and so stay finite where p is exactly 0 or 1."""
    X, y = _rounded_data(120)
    model = kclf.PlattScaled(est, cv=3, random_state=0).fit(X, y)
    p = model.calibrated_.calibrated_classifiers_[0].estimator.estimator_.predict_proba(X)[:, 1]
    assert ((p == 0) | (p == 1)).any()  # LSPC-new's rounding of Eq. (6)
    q = model.predict_proba(X)[:, 1]
    logit = np.log(q) - np.log1p(-q)
    A = np.c_[p, np.ones_like(p)]
    coef, *_ = np.linalg.lstsq(A, logit, rcond=None)
    # the logit recovered from q carries a round-off of about eps / (q (1 - q))
    tol = 10 * np.finfo(float).eps / np.min(q * (1 - q))
    np.testing.assert_allclose(A @ coef, logit, rtol=0, atol=tol)
    assert np.isfinite(logit).all() and coef[0] > 0


def test_platt_matches_sklearn_sigmoid_calibration_on_svc():
    """The same folds, the same decision values: the two sigmoids are L-BFGS solutions of
    the same convex two-parameter problem, each stopped at a gradient of max-norm 1e-6
    (gtol) on the decision values divided by max(1, max|f| / 30) (scikit-learn rescales
    from 30 on), so each (A, B) is within sqrt(2) 1e-6 / mu of the optimum (mu: the
    Hessian's smallest eigenvalue there) and the two within twice that; a probability
    moves by at most 1/4 |(f, 1)| times it."""
    X, y = _rounded_data(150)
    folds = StratifiedKFold(5, shuffle=True, random_state=3)
    ref = CalibratedClassifierCV(SVC(), method="sigmoid", ensemble=False, cv=folds).fit(X, y)
    got = kclf.PlattScaled(SVC(), cv=5, random_state=3).fit(X, y)
    f = cross_val_predict(SVC(), X, y, cv=folds, method="decision_function")
    f = f / max(1.0, np.abs(f).max() / 30.0)
    cal = ref.calibrated_classifiers_[0].calibrators[0]
    p = expit(-(cal.a_ * f + cal.b_))
    A = np.c_[f, np.ones_like(f)]
    mu = np.linalg.eigvalsh((A * (p * (1 - p))[:, None]).T @ A).min()
    ft = SVC().fit(X, y).decision_function(X)
    ft = ft / max(1.0, np.abs(f).max() / 30.0)
    tol = 0.25 * np.sqrt(1 + ft**2) * 2 * np.sqrt(2) * 1e-6 / mu
    assert np.all(np.abs(got.predict_proba(X)[:, 1] - ref.predict_proba(X)[:, 1]) <= tol)


def _dot(A, B):
    return A @ B.T


def test_platt_validates_its_input_as_scikit_learn_does():
    X, y = _rounded_data(60)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = kclf.PlattScaled(kclf.LSPC(), cv=3, random_state=0).fit(frame, y)
    assert model.n_features_in_ == 4 and list(model.feature_names_in_) == list("abcd")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.predict_proba(frame)  # the same frame: no warning
    with pytest.raises(ValueError, match="feature names should match"):
        model.predict_proba(frame[["b", "a", "c", "d"]])
    with pytest.raises(ValueError, match="X has 3 features, but PlattScaled is expecting 4"):
        model.predict_proba(X[:, :3])
    with pytest.raises(ValueError, match="y should be a 1d array"):
        kclf.PlattScaled(kclf.LSPC()).fit(X, np.c_[y, y])
    sparse = scipy.sparse.csr_matrix(X)
    assert kclf.PlattScaled(SVC(), cv=3).fit(sparse, y).predict_proba(sparse).shape == (60, 2)
    # LSPC takes sparse input with its rbf kernel, not with a callable one
    sparse_lspc = kclf.PlattScaled(kclf.LSPC(), cv=3, random_state=0).fit(sparse, y)
    np.testing.assert_allclose(
        sparse_lspc.predict_proba(sparse), model.predict_proba(frame), rtol=0, atol=1e-12
    )
    with pytest.raises(TypeError, match="[Ss]parse"):
        kclf.PlattScaled(kclf.LSPC(kernel=_dot), cv=3).fit(sparse, y)
    lists = kclf.PlattScaled(kclf.LSPC(), cv=3, random_state=0).fit(X.tolist(), y.tolist())
    # the same numbers (a frame's array is column-major): equal up to BLAS round-off
    np.testing.assert_allclose(
        lists.predict_proba(X.tolist()), model.predict_proba(frame), rtol=0, atol=1e-13
    )


@parametrize_with_checks(
    [
        kclf.PlattScaled(SVC()),
        kclf.PlattScaled(kclf.LSPC()),
        kclf.PlattScaled(kclf.LSPC(kernel="precomputed")),
    ]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
