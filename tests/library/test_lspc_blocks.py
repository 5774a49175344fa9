"""The class-wise basis in LSPCCV's search and the class-balanced squared loss."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.model_selection import KFold, ShuffleSplit, train_test_split
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.class_weight import compute_sample_weight

from kclf import LSPCCV
from kclf._folds import cv_folds
from kclf._scoring import score_proba
from kclf.kernels import rbf_kernel
from kclf.lspc import LSPC
from kclf.lspc._solver import balanced_weights, fit_alpha, round_outputs, row_atoms
from kclf.model_selection import TIE_RTOL, best_index


def blobs(n=80, seed=0, d=3, c=2, prior=None):
    rng = np.random.default_rng(seed)
    y = rng.choice(c, n, p=prior)
    X = rng.normal(size=(n, d)) + 1.5 * y[:, None]
    return X, y


def refit_scores(X, y, sigmas, lams, folds, scoring, **params):
    """Mean fold scores (sigma-major) by one LSPC fit per (sigma, lambda, fold); with a
    ``class_weight`` each validation row weighted as the loss weighs it (scikit-learn's
    ``compute_sample_weight`` of the validation labels: balanced error for "balanced")."""
    cw = params.get("class_weight")
    return np.array(
        [
            np.mean(
                [
                    score_proba(
                        LSPC(sigma=s, lam=lam, **params).fit(X[tr], y[tr]).predict_proba(X[va]),
                        y[va],
                        scoring,
                        None if cw is None else compute_sample_weight(cw, y[va]),
                    )
                    for tr, va in folds
                ]
            )
            for s in sigmas
            for lam in lams
        ]
    )


@pytest.mark.parametrize("class_weight", [None, "balanced"])
@pytest.mark.parametrize(
    "rounding,scoring,c",
    [("outputs", "auc", 2), ("parameters", "log_loss", 3), ("none", "error", 3)],
)
def test_classwise_search_equals_per_fold_refits(rounding, scoring, c, class_weight):
    X, y = blobs(n=90, c=c, seed=2)
    sigmas, lams = [0.7, 1.4, 2.8], [1e-3, 1e-2, 0.1, 1.0]
    cv = LSPCCV(
        sigmas,
        lams,
        cv=3,
        rounding=rounding,
        scoring=scoring,
        basis="classwise",
        class_weight=class_weight,
        random_state=5,
    ).fit(X, y)
    naive = refit_scores(
        X,
        y,
        sigmas,
        lams,
        cv_folds(y, 3, 5),
        scoring,
        rounding=rounding,
        basis="classwise",
        class_weight=class_weight,
    )
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], naive, rtol=1e-9, atol=1e-12)
    ref = LSPC(
        cv.sigma_, cv.lam_, rounding=rounding, basis="classwise", class_weight=class_weight
    ).fit(X, y)
    np.testing.assert_allclose(cv.best_estimator_.alpha_, ref.alpha_, atol=1e-12)


@pytest.mark.parametrize("basis,class_weight", [("classwise", None), ("full", "balanced")])
def test_blockwise_multitask_search_equals_per_task_refits(basis, class_weight):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 4))
    Y = np.c_[X[:, 0] > 0.8, X[:, 1] + X[:, 2] > 0, rng.random(100) < 0.25].astype(int)
    sigmas, lams = [1.0, 2.0], [1e-2, 0.1, 1.0]
    params = {"basis": basis, "class_weight": class_weight}
    cv = LSPCCV(sigmas, lams, cv=2, scoring="auc", random_state=1, **params).fit(X, Y)
    folds = cv_folds(Y, 2, 1)
    for t in range(Y.shape[1]):
        naive = refit_scores(X, Y[:, t], sigmas, lams, folds, "auc", **params)
        np.testing.assert_allclose(cv.cv_results_["mean_test_score"][t], naive, rtol=1e-9)
        m = LSPC(sigma=cv.sigma_[t], lam=cv.lam_[t], **params).fit(X, Y[:, t])
        np.testing.assert_allclose(cv.predict_proba(X)[:, t], m.predict_proba(X)[:, 1], atol=1e-10)


def test_classwise_search_precomputed_equals_rbf():
    X, y = blobs(n=60, seed=4)
    a = LSPCCV([1.3], [1e-2, 0.1], basis="classwise", random_state=0).fit(X, y)
    K = rbf_kernel(X, X, 1.3)
    b = LSPCCV(lams=[1e-2, 0.1], basis="classwise", kernel="precomputed", random_state=0)
    b.fit(K, y)
    np.testing.assert_allclose(
        a.cv_results_["mean_test_score"], b.cv_results_["mean_test_score"], atol=1e-12
    )


def test_low_rank_classwise_search_equals_per_fold_block_solutions():
    """With ``n_basis``, the centres are drawn once from all of X; each centre belongs to
    the class of its own label, in every fold."""
    X, y = blobs(n=120, c=3, seed=6)
    sigmas, lams = [1.0, 2.0], [1e-2, 0.1]
    cv = LSPCCV(
        sigmas, lams, cv=2, n_basis=40, basis="classwise", scoring="log_loss", random_state=2
    ).fit(X, y)
    index = cv.best_estimator_.center_index_
    C = X[index]
    naive = []
    for s in sigmas:
        for lam in lams:
            sc = []
            for tr, va in cv_folds(y, 2, 2):
                A = fit_alpha(rbf_kernel(X[tr], C, s), y[tr], 3, lam, basis_class=y[index])
                P = round_outputs(rbf_kernel(X[va], C, s) @ A, "outputs")
                sc.append(score_proba(P, y[va], "log_loss"))
            naive.append(np.mean(sc))
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], naive, rtol=1e-9)


def test_balanced_weights_closed_form_on_a_tiny_case():
    """Four samples, one positive: weights n / (2 n_y) = 2 and 2/3; the fit is the
    minimiser of (1/2n) sum_i w_i (K_i alpha - y_i)^2 + (lam/2) ||alpha||^2 per class."""
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 0, 1])
    lam = 0.3
    np.testing.assert_allclose(balanced_weights(y, 2), [2 / 3, 2 / 3, 2 / 3, 2.0])
    model = LSPC(kernel="linear", lam=lam, class_weight="balanced", rounding="none").fit(X, y)
    # linear kernel, basis at the 4 training points: K = x x^T
    K = X @ X.T
    W = np.diag([2 / 3, 2 / 3, 2 / 3, 2.0])
    Y = np.eye(2)[y]
    expected = np.linalg.solve(K.T @ W @ K / 4 + lam * np.eye(4), K.T @ W @ Y / 4)
    np.testing.assert_allclose(model.alpha_, expected, atol=1e-12)
    # the gradient of the weighted objective vanishes there ...
    grad = K.T @ W @ (K @ model.alpha_ - Y) / 4 + lam * model.alpha_
    np.testing.assert_allclose(grad, 0.0, atol=1e-12)
    # ... and the weighting changes the fit (it is not the unweighted solution)
    plain = LSPC(kernel="linear", lam=lam, rounding="none").fit(X, y)
    assert np.abs(plain.alpha_ - model.alpha_).max() > 1e-3


def test_balanced_equals_duplicating_the_rare_class():
    """Integer weight ratios: weighting a class by 2 is the same loss as seeing each of
    its samples twice (with the same basis, centres fixed, and n rescaled)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    y = np.r_[np.zeros(8, int), np.ones(4, int)]  # weights 12/16 and 12/8: ratio 1:2
    C = X.copy()
    K = rbf_kernel(X, C, 1.0)
    lam = 0.05
    A = fit_alpha(K, y, 2, lam, weights=balanced_weights(y, 2))
    dup = np.r_[np.arange(12), np.arange(8, 12)]
    # weighted: (1/12)(3/4 sum_neg + 3/2 sum_pos) = (1/16)(sum_neg + 2 sum_pos), the
    # duplicated set's mean squared error over its 16 rows: the same objective
    B = fit_alpha(K[dup], y[dup], 2, lam, weights=None)
    np.testing.assert_allclose(A, B, atol=1e-10)


def test_parameters_are_validated():
    X, y = blobs(n=30)
    with pytest.raises(InvalidParameterError, match="class_weight"):
        LSPC(class_weight="inverse").fit(X, y)
    with pytest.raises(InvalidParameterError, match="basis"):
        LSPCCV(basis="own").fit(X, y)
    with pytest.raises(ValueError, match="centers='random'"):
        LSPCCV([1.0], [0.1], n_basis=10, basis="classwise", centers="kmeans").fit(X, y)


def test_class_weighted_search_on_the_class_weight_check_equals_per_fold_fits():
    """scikit-learn's ``check_class_weight_classifiers`` problem (three blobs of spread 20,
    weights 1000 : 1e-4): every setting's mean score is that of LSPC fitted on each fold
    with the same weights and scored with the validation rows' costs, the refit is LSPC's
    fit, and the settings that differ only in light rows (whole ones, ~1e-8 of the
    validation weight, not round-off) tie: the smoothest of them is chosen, and it sends
    every test row the check asks for to the heavy class."""
    X, y = make_blobs(centers=3, random_state=0, cluster_std=20)
    X, X_test, y, _ = train_test_split(X, y, test_size=0.5, random_state=0)
    cw = {0: 1000, 1: 1e-4, 2: 1e-4}
    cv = LSPCCV(class_weight=cw, random_state=0).fit(X, y)
    res = cv.cv_results_
    folds = cv_folds(y, 2, 0)
    sigmas, lams = np.unique(res["sigma"]), np.unique(res["lam"])  # sigma-major grid
    naive = refit_scores(X, y, sigmas, lams, folds, "error", class_weight=cw)
    np.testing.assert_allclose(res["mean_test_score"], naive, rtol=1e-9, atol=1e-15)
    ref = LSPC(cv.sigma_, cv.lam_, class_weight=cw).fit(X, y)
    np.testing.assert_array_equal(cv.best_estimator_.alpha_, ref.alpha_)
    # one light validation row's share of a fold's cost-weighted error, over the 2 folds
    light_row = min(1e-4 / compute_sample_weight(cw, y[va]).sum() / 2 for _, va in folds)
    best = naive.min()
    assert np.sort(naive)[1] - best >= light_row * (1 - 1e-9)  # whole rows apart
    tied = np.flatnonzero(naive <= best + TIE_RTOL)
    assert tied.size > 1 and naive.max() - best > TIE_RTOL  # some ties, not all
    grid_s, grid_l = np.asarray(res["sigma"]), np.asarray(res["lam"])
    smoothest = max(tied, key=lambda i: (grid_s[i], grid_l[i]))
    assert (cv.sigma_, cv.lam_) == (grid_s[smoothest], grid_l[smoothest])
    assert np.mean(cv.predict(X_test) == 0) > 0.87  # the check's own threshold


def test_scores_apart_by_more_than_the_tie_tolerance_decide():
    """:func:`kclf.model_selection.best_index`: a difference just above TIE_RTOL picks
    the better setting even against a smoother one; just below it, the smoother wins."""
    sigma, lam = np.array([1.0, 2.0]), np.array([0.1, 0.1])
    assert best_index([0.1, 0.1 + 2 * TIE_RTOL], "error", sigma, lam) == 0
    assert best_index([0.1, 0.1 + 0.5 * TIE_RTOL], "error", sigma, lam) == 1
    assert best_index([0.9, 0.9 - 2 * TIE_RTOL], "auc", sigma, lam) == 0


@pytest.mark.parametrize(
    "splitter",
    [
        KFold(5, shuffle=True, random_state=0),
        ShuffleSplit(7, test_size=0.3, random_state=1),  # rows in no validation part
        KFold(70),  # more folds than an integer holds bits for: numpy.unique's rows
    ],
)
def test_row_atoms_group_the_rows_as_unique_membership_rows_do(splitter):
    """The low-rank search's row groups (by the set of folds whose training part holds
    a row): the same groups, in the same order, as ``numpy.unique`` of the membership
    rows gives, so the Gram matrices are summed in the same order."""
    n = 140
    folds = list(splitter.split(np.zeros(n)))
    member = np.zeros((n, len(folds)), dtype=bool)
    for k, (tr, _) in enumerate(folds):
        member[tr, k] = True
    masks, inverse = np.unique(member, axis=0, return_inverse=True)
    order, bounds, got = row_atoms(n, folds)
    np.testing.assert_array_equal(got, masks)
    np.testing.assert_array_equal(order, np.argsort(inverse.ravel(), kind="stable"))
    np.testing.assert_array_equal(np.diff(bounds), np.bincount(inverse.ravel()))
