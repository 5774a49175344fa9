"""The CV searches (LSPCCV, KernelLogisticRegressionCV) check test inputs in their own name,
as scikit-learn's estimators do: the width, and the column names of a DataFrame."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from kclf import LSPCCV, KernelLogisticRegressionCV

GRID = dict(sigmas=[0.5, 2.0], lams=[0.01, 0.1], random_state=0)
SEARCHES = [LSPCCV(**GRID), KernelLogisticRegressionCV(**GRID)]
METHODS = ("predict_proba", "decision_function", "predict")


def _frame(multi):
    X, y = make_classification(60, 4, random_state=0)
    Y = np.c_[y, (X[:, 0] > 0).astype(int)] if multi else y
    return pd.DataFrame(X, columns=["a", "b", "c", "d"]), Y


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize("multi", [False, True], ids=["one task", "two tasks"])
@pytest.mark.parametrize("search", SEARCHES, ids=lambda s: type(s).__name__)
def test_search_keeps_and_checks_the_feature_names(search, multi):
    frame, y = _frame(multi)
    model = search.fit(frame, y)
    name = type(search).__name__
    assert model.n_features_in_ == 4 and list(model.feature_names_in_) == list("abcd")
    for method in METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the same frame: no feature-name warning
            by_frame = getattr(model, method)(frame)
        # the models inside see the same array either way
        np.testing.assert_array_equal(by_frame, getattr(model, method)(frame.to_numpy()))
        for other in (frame[["b", "a", "c", "d"]], frame.rename(columns={"d": "e"})):
            with pytest.raises(ValueError, match="feature names should match"):
                getattr(model, method)(other)
        msg = f"X has 3 features, but {name} is expecting 4 features as input"
        with pytest.raises(ValueError, match=re.escape(msg)):
            getattr(model, method)(frame.to_numpy()[:, :3])


@pytest.mark.parametrize("search", SEARCHES, ids=lambda s: type(s).__name__)
def test_search_fitted_on_an_array_warns_about_a_frame_in_its_own_name(search):
    frame, y = _frame(False)
    model = search.fit(frame.to_numpy(), y)
    assert not hasattr(model, "feature_names_in_")
    with pytest.warns(UserWarning, match=f"but {type(search).__name__} was fitted without"):
        model.predict_proba(frame)


@pytest.mark.parametrize(
    "search",
    [
        LSPCCV(lams=[0.01, 0.1], random_state=0),
        KernelLogisticRegressionCV(lams=[0.1], random_state=0),
    ],
    ids=lambda s: type(s).__name__,
)
def test_width_factors_are_multiples_of_the_median_distance(search):
    """``sigma_factors`` searches the widths ``factors * median_sigma(X)``: the same fit,
    bit for bit, as those widths given as ``sigmas``; None is the default grid; the chosen
    width is ``sigma_``, one of the grid's."""
    from kclf.kernels import median_sigma
    from kclf.model_selection import DEFAULT_SIGMA_FACTORS, sigma_grid

    X, y = make_classification(60, 4, random_state=1)
    factors = [0.5, 1.0, 3.0]
    by_factors = clone(search).set_params(sigma_factors=factors).fit(X, y)
    by_widths = clone(search).set_params(sigmas=median_sigma(X) * np.array(factors)).fit(X, y)
    np.testing.assert_array_equal(by_factors.cv_results_["sigma"], by_widths.cv_results_["sigma"])
    assert by_factors.sigma_ == by_widths.sigma_
    assert by_factors.sigma_ in set(median_sigma(X) * np.array(factors))
    np.testing.assert_array_equal(by_factors.predict_proba(X), by_widths.predict_proba(X))
    default = clone(search).fit(X, y)
    np.testing.assert_array_equal(np.unique(default.cv_results_["sigma"]), np.sort(sigma_grid(X)))
    np.testing.assert_array_equal(sigma_grid(X), median_sigma(X) * DEFAULT_SIGMA_FACTORS)
    with pytest.raises(ValueError, match="sigma_factors"):
        clone(search).set_params(sigmas=[1.0], sigma_factors=[1.0]).fit(X, y)


def test_the_tie_rule_prefers_the_smoother_setting():
    """:func:`kclf.model_selection.best_index`: among scores tied within TIE_RTOL the
    largest width wins, then the largest lambda; AUC is maximised, NaN never wins."""
    from kclf.model_selection import TIE_RTOL, best_index

    sigma = np.array([1.0, 2.0, 2.0, 0.5])
    lam = np.array([0.1, 0.01, 0.1, 1.0])
    tie = 0.2 * (1 + TIE_RTOL / 2)
    assert best_index([0.2, 0.2, tie, 0.2], "error", sigma, lam) == 2
    assert best_index([0.2, 0.3, 0.3, 0.1], "error", sigma, lam) == 3
    assert best_index([0.2, 0.3, np.nan, 0.1], "auc", sigma, lam) == 1
    assert best_index([np.nan, 0.5, 0.5, np.nan], "auc", [np.nan] * 4, lam) == 2


@pytest.mark.parametrize("search", SEARCHES, ids=lambda s: type(s).__name__)
def test_random_state_none_gives_unshuffled_folds_and_the_same_fit_twice(search):
    """As scikit-learn's searches with an integer ``cv``: the folds of
    ``StratifiedKFold(cv)`` without shuffling, so two fits agree bit for bit; a given
    seed shuffles."""
    from sklearn.model_selection import StratifiedKFold

    from kclf._folds import cv_folds

    X, y = make_classification(60, 4, random_state=1)
    folds = cv_folds(y, 3, None)
    plain = StratifiedKFold(3).split(X, y)
    for (tr, va), (tr2, va2) in zip(folds, plain):
        np.testing.assert_array_equal(tr, tr2)
        np.testing.assert_array_equal(va, va2)
    shuffled = cv_folds(y, 3, 0)
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, shuffled))
    est = clone(search).set_params(random_state=None)
    first = est.fit(X, y)
    P, scores = first.predict_proba(X), first.cv_results_["mean_test_score"].copy()
    again = clone(est).fit(X, y)
    np.testing.assert_array_equal(again.predict_proba(X), P)
    np.testing.assert_array_equal(again.cv_results_["mean_test_score"], scores)
    # the same as the unshuffled folds given explicitly
    given = clone(est).set_params(cv=list(StratifiedKFold(2).split(X, y))).fit(X, y)
    np.testing.assert_array_equal(given.predict_proba(X), P)


@pytest.mark.parametrize("search", SEARCHES, ids=lambda s: type(s).__name__)
def test_a_one_hot_target_warns_and_points_to_the_labels(search):
    X, y = make_classification(60, 4, n_informative=3, n_redundant=0, n_classes=3, random_state=0)
    with pytest.warns(UserWarning, match=r"one-hot.*3 columns.*1-D vector"):
        clone(search).fit(X, np.eye(3, dtype=int)[y])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # two labels of some rows: no such warning
        Y = np.c_[y == 0, y != 2].astype(int)
        clone(search).fit(X, Y)


@pytest.mark.parametrize(
    "params",
    [{}, {"n_basis": 30}, {"class_weight": "balanced"}, {"kernel": "linear"}],
    ids=["exact", "low rank", "blocks", "linear"],
)
@pytest.mark.parametrize("multi", [False, True], ids=["one task", "two tasks"])
def test_lspccv_results_are_identical_for_any_n_jobs(params, multi):
    """One BLAS thread per width whatever ``n_jobs`` (OpenBLAS's bits depend on its
    thread count), widths side by side: the same bits for 1, 2, 3 and all cores; the
    default (None, the BLAS library's own threads) to round-off."""
    X, y = make_classification(120, 5, random_state=3)
    t = np.c_[y, (X[:, 0] > 0).astype(int)] if multi else y
    grid = dict(sigmas=[0.5, 1.0, 2.0], lams=[0.01, 0.1, 1.0], random_state=0)
    fits = {
        n_jobs: LSPCCV(**grid, **params, n_jobs=n_jobs).fit(X, t) for n_jobs in (None, 1, 2, 3, -1)
    }
    base = fits[1]
    for n_jobs in (2, 3, -1):
        np.testing.assert_array_equal(fits[n_jobs].predict_proba(X), base.predict_proba(X))
        np.testing.assert_array_equal(
            fits[n_jobs].cv_results_["mean_test_score"], base.cv_results_["mean_test_score"]
        )
    np.testing.assert_allclose(fits[None].predict_proba(X), base.predict_proba(X), atol=1e-10)
