"""The CV searches (LSPCCV, KernelLogisticRegressionCV) check test inputs in their own name,
as scikit-learn's estimators do: the width, and the column names of a DataFrame."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
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
