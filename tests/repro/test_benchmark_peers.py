"""The benchmark's peers and features: each peer's search has the number of settings the
protocol states, a grid of one point runs no inner CV, the fits are fixed by the config's
seed, and nominal attributes written as numbers are one-hot encoded as text ones are."""

import numpy as np
import pandas as pd
import pytest
import sklearn.model_selection
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import GridSearchCV, ParameterGrid
from test_benchmark import _wheel

from kclf_workflow import estimators
from kclf_workflow.datasets import keel
from kclf_workflow.experiments import benchmark as bm
from kclf_workflow.methods import benchmark as specs

CFG = {
    "folds": 5,
    "inner_folds": 2,
    "exact_max": 2000,
    "subsample": {"GPC": 1000, "SVC": 1000, "MAPLP": 1000, "HGB": 1000, "RF": 1000},
    "grids": {},
}

#: settings each searched method tries by default (the protocol table of
#: docs/user_guide/benchmark.md)
SETTINGS = {"SVC": 16, "LR": 10, "HGB": 16, "RF": 16, "kNN": 16, "MAPLP": 5}


def _set(n=90, seed=0):
    """Three classes, a nominal column written as numbers (its codes unordered: class 1
    holds the middle code) and a real one."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    code = np.array([1.0, 3.0, 2.0])[y]
    code = np.where(rng.random(n) < 0.2, rng.choice([1.0, 2.0, 3.0], n), code)
    return pd.DataFrame({"x0": code, "x1": rng.normal(y, 1.0)}), y


@pytest.mark.parametrize("method", list(SETTINGS))
def test_every_searched_peer_tries_the_stated_number_of_settings(method):
    grid = bm.method_grid(CFG, method)
    if method == "SVC":
        n = len(grid["C"]) * len(grid["sigma_factors"])
    elif method == "MAPLP":
        n = len(grid["sigma_factors"])
    else:
        model = bm.make_model(method, CFG, "exact", 0)
        search = estimators.OwnCriterionSearch if method == "RF" else GridSearchCV
        assert isinstance(model, search)
        n = len(ParameterGrid(model.param_grid))
    assert n == SETTINGS[method]


def test_lr_searches_c_under_both_penalties():
    model = bm.make_model("LR", CFG, "exact", 0)
    pairs = {(p["C"], p["l1_ratio"], p["solver"]) for p in ParameterGrid(model.param_grid)}
    Cs = bm.method_grid(CFG, "LR")["C"]
    assert pairs == {(C, 0.0, "lbfgs") for C in Cs} | {(C, 1.0, "saga") for C in Cs}


@pytest.mark.parametrize(
    "method,grid",
    [
        ("RF", {"max_features": [0.5], "min_samples_leaf": [2], "n_estimators": 10}),
        ("kNN", {"n_neighbors": [3], "weights": ["distance"]}),
        ("LR", {"C": [10.0], "penalty": ["l1"]}),
        ("SVC", {"C": [10.0], "sigma_factors": [0.5]}),
        ("MAPLP", {"sigma_factors": [0.5]}),
    ],
)
def test_a_grid_of_one_point_runs_no_inner_cv(method, grid, monkeypatch):
    """No GridSearchCV is built, and the fit is the estimator at the point (its records
    say so)."""

    def refused(*args, **kwargs):
        raise AssertionError("a search was built for a grid of one point")

    monkeypatch.setattr(sklearn.model_selection, "GridSearchCV", refused)  # as the specs import it
    monkeypatch.setattr(estimators, "GridSearchCV", refused)
    X, y = _set()
    cfg = dict(CFG, grids={method: grid})
    fold = bm.outer_folds(y, "one", seed=2, k=3)[0]
    model, *_ = bm.fit_fold(X, y, fold, [], "one", method, 0, cfg, seed=2)
    chosen = bm.chosen(model, method)
    if method == "LR":
        assert chosen == {"C": 10.0, "penalty": "l1"}
        assert bm.fitted_estimator(model).solver == "saga"
    elif method == "SVC":
        assert chosen["C"] == 10.0
    elif method == "MAPLP":
        assert set(chosen) == {"sigma"}
    else:
        assert chosen == {k: v[0] for k, v in grid.items() if isinstance(v, list)}


def test_hgb_at_one_point_is_the_boosting_model_itself():
    point = {"learning_rate": [0.2], "max_leaf_nodes": [7], "min_samples_leaf": [5]}
    point |= {"l2_regularization": [0.5], "max_iter": 10}
    model = bm.make_model("HGB", dict(CFG, grids={"HGB": point}), "exact", 17)
    assert not isinstance(model, GridSearchCV) and not model.early_stopping
    assert model.random_state == 17
    assert {k: getattr(model, k) for k in point} == {
        k: v[0] if isinstance(v, list) else v for k, v in point.items()
    }
    assert specs.search_chosen(specs.HGB_SEARCHED, model) == {
        k: point[k][0] for k in specs.HGB_SEARCHED
    }


def test_a_grid_of_several_points_is_searched_on_the_inner_folds():
    X, y = _set()
    cfg = dict(CFG, grids={"kNN": {"n_neighbors": [1, 15], "weights": ["uniform"]}})
    fold = bm.outer_folds(y, "two", seed=2, k=3)[0]
    model, *_ = bm.fit_fold(X, y, fold, [], "two", "kNN", 0, cfg, seed=2)
    search = bm.fitted_estimator(model)
    assert isinstance(search, GridSearchCV) and search.cv.get_n_splits() == 2
    assert len(search.cv_results_["params"]) == 2
    assert bm.chosen(model, "kNN")["n_neighbors"] in (1, 15)


@pytest.mark.parametrize("method", ["RF", "GPC", "LR"])
def test_the_peers_fits_are_fixed_by_the_seed(method):
    """The same seed gives the same probabilities; the estimator's random state comes from
    the config's seed (``seed_for(seed, "benchmark", set, method, fold)``)."""
    X, y = _set(60)
    if method == "GPC":  # two classes: one Gaussian process, not one per class
        X, y = X[y < 2].reset_index(drop=True), y[y < 2]
    small = {
        "RF": {"max_features": [0.5, 1.0], "min_samples_leaf": [1], "n_estimators": 10},
        "GPC": {"n_restarts_optimizer": 1},
        "LR": {"C": [1.0], "penalty": ["l1"]},
    }
    cfg = dict(CFG, grids={method: small[method]})
    fold = bm.outer_folds(y, "seeded", seed=4, k=3)[0]
    runs = [bm.fit_fold(X, y, fold, [], "seeded", method, 0, cfg, seed=4) for _ in range(2)]
    np.testing.assert_array_equal(runs[0][3], runs[1][3])
    est = bm.fitted_estimator(runs[0][0])
    est = getattr(est, "best_estimator_", est)
    state = est.random_state
    assert state == bm.seed_for(4, "benchmark", "seeded", method, 0)
    if method == "GPC":
        assert est.n_restarts_optimizer == 1


# --- nominal attributes written as numbers ------------------------------------------------


def test_a_nominal_numeric_column_is_one_hot_encoded_and_a_real_column_is_not(tmp_path):
    """tae's course instructor (x1) and course (x2) are nominal codes: kept as their text,
    one indicator column per code in the fit's features; its class size (x4) is
    standardised."""
    rows = ["1, 23, 3, 1, 19, 3", "2, 15, 3, 1, 17, 3", "1, 23, 3, 2, 49, 3", "2, 5, 2, 2, 33, 1"]
    rows += ["2, 7, 11, 2, 55, 2", "2, 23, 3, 1, 20, 2"]
    s = keel.load_keel(_wheel(tmp_path, {"tae": "\n".join(rows)}), "tae")
    assert s.categorical == ("x1", "x2") == keel.NOMINAL["tae"]
    assert s.X["x1"].tolist() == ["23", "15", "23", "5", "7", "23"]
    assert s.X["x4"].dtype == float and "2 categorical" in s.describe()
    prep = bm.preprocessor(list(s.X.columns), s.categorical).fit(s.X)
    Z = prep.transform(s.X)
    # 4 instructors + 3 courses one-hot, then x0, x3, x4 standardised
    assert Z.shape == (6, 4 + 3 + 3)
    onehot = Z[:, :4]
    assert set(np.unique(onehot)) == {0.0, 1.0} and (onehot.sum(axis=1) == 1).all()
    np.testing.assert_array_equal(onehot[:, list(prep.named_transformers_["categorical"]
                                                  .categories_[0]).index("23")],
                                  [1, 0, 1, 0, 0, 1])  # fmt: skip
    x4 = s.X["x4"].to_numpy()
    np.testing.assert_allclose(Z[:, -1], (x4 - x4.mean()) / x4.std())
    # the same file read with no nominal columns: every column numeric, none encoded
    plain = keel.load_keel(tmp_path / keel.WHEEL, "tae", nominal=())
    assert plain.categorical == () and plain.X["x1"].dtype == float


def test_a_nominal_column_the_set_lacks_is_refused(tmp_path):
    wheel = _wheel(tmp_path, {"iris": "1,2,a\n2,1,b\n"})
    with pytest.raises(ValueError, match=r"no column x5 \(nominal columns of iris\)"):
        keel.load_keel(wheel, "iris", nominal=("x5",))


def test_the_nominal_list_names_sets_and_columns_of_the_suite():
    assert set(keel.NOMINAL) <= set(keel.SETS)
    assert not set(keel.NOMINAL) & set(keel.CATEGORICAL)
    for name, columns in keel.NOMINAL.items():
        assert columns and len(set(columns)) == len(columns), name


@pytest.mark.shared
def test_the_nominal_columns_are_the_wheels_coded_candidates(shared_data):
    """Every listed column holds three or more numeric codes in the wheel; the sets with
    candidate columns (numbers of few distinct values) are the listed ones and those the
    list's comment names as holding ordered values or counts only."""
    ordered_only = {"bands", "breast", "bupa", "crx", "german", "letter", "optdigits", "pima"}
    ordered_only |= {"segment", "vehicle", "wisconsin"}
    wheel = shared_data / "keel" / keel.WHEEL
    with_candidates = set()
    for name in keel.SETS:
        s = keel.load_keel(wheel, name, nominal=())
        for column in s.X.columns.difference(s.categorical):
            values = np.unique(s.X[column].to_numpy())
            integers = np.array_equal(values, np.round(values))
            if len(values) > 2 and len(values) <= (30 if integers else 12):
                with_candidates.add(name)
        for column in keel.NOMINAL.get(name, ()):
            assert column not in s.categorical, (name, column)
            assert 2 < s.X[column].nunique() <= 30, (name, column)
    assert with_candidates == set(keel.NOMINAL) | ordered_only


def test_rf_is_chosen_by_its_out_of_bag_accuracy_with_no_inner_cv(monkeypatch):
    """One forest per setting on the training rows (no GridSearchCV); the kept forest is
    the one of the highest out-of-bag accuracy (the first on a tie), fixed by the seed."""

    def refused(*args, **kwargs):
        raise AssertionError("an inner CV was built for RF")

    monkeypatch.setattr(sklearn.model_selection, "GridSearchCV", refused)  # as the specs import it
    X, y = _set(120)
    grid = {"max_features": [0.5, 1.0], "min_samples_leaf": [1, 10], "n_estimators": 20}
    cfg = dict(CFG, grids={"RF": grid})
    fold = bm.outer_folds(y, "oob", seed=3, k=3)[0]
    runs = [bm.fit_fold(X, y, fold, [], "oob", "RF", 0, cfg, seed=3) for _ in range(2)]
    np.testing.assert_array_equal(runs[0][3], runs[1][3])
    search = bm.fitted_estimator(runs[0][0])
    assert isinstance(search, estimators.OwnCriterionSearch) and len(search.scores_) == 4
    Xtr = runs[0][0].named_steps["prep"].transform(X.iloc[fold[0]])
    scores = []
    for point in ParameterGrid(search.param_grid):
        forest = RandomForestClassifier(oob_score=True, n_estimators=20)
        forest.set_params(random_state=search.estimator.random_state, **point)
        scores.append(forest.fit(Xtr, y[fold[0]]).oob_score_)
    assert search.scores_ == scores
    best = int(np.argmax(scores))
    assert search.best_params_ == list(ParameterGrid(search.param_grid))[best]
    assert bm.chosen(runs[0][0], "RF") == {
        k: v for k, v in search.best_params_.items() if k in specs.RF_SEARCHED
    }


def test_rf_selection_inner_cv_is_the_grid_search_and_part_of_the_grid():
    """`benchmark.grids.RF.selection: inner_cv` chooses by GridSearchCV on the inner folds;
    the key is one of RF's grid keys, so switching it changes the fit's params (its jobs
    rerun rather than keep forests chosen the other way)."""
    X, y = _set(120)
    grid = {"max_features": [0.5, 1.0], "min_samples_leaf": [1, 10], "n_estimators": 20}
    cfg = dict(CFG, grids={"RF": dict(grid, selection="inner_cv")})
    fold = bm.outer_folds(y, "cv", seed=3, k=3)[0]
    model = bm.fit_fold(X, y, fold, [], "cv", "RF", 0, cfg, seed=3)[0]
    assert isinstance(bm.fitted_estimator(model), GridSearchCV)
    assert bm.method_grid(CFG, "RF")["selection"] == "out_of_bag"
