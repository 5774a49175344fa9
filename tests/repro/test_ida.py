"""IDA data: mirror loaders, split recovery, seeded splits, Breiman's generators, protocol."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.io
from scipy.stats import norm

from kclf_workflow.datasets import breiman, ida
from kclf_workflow.experiments import ida as protocol


def test_twonorm_matches_its_definition_and_bayes_error():
    X, y = breiman.twonorm(20000, np.random.default_rng(0))
    assert X.shape == (20000, 20)
    a = 2 / np.sqrt(20)
    # class means +-a in every coordinate, unit variance; standard error 1/sqrt(10000)
    np.testing.assert_allclose(X[y == 1].mean(axis=0), a, atol=5 / 100)
    np.testing.assert_allclose(X[y == -1].mean(axis=0), -a, atol=5 / 100)
    np.testing.assert_allclose(X[y == 1].std(axis=0), 1, atol=0.05)
    # Bayes rule sign(sum x): error Phi(-||mu||) = Phi(-2); binomial sd ~ 0.001
    err = np.mean(np.sign(X.sum(axis=1)) != y)
    assert err == pytest.approx(norm.cdf(-2), abs=0.005)


def test_ringnorm_matches_its_definition():
    X, y = breiman.ringnorm(20000, np.random.default_rng(1))
    a = 1 / np.sqrt(20)
    np.testing.assert_allclose(X[y == 1].std(axis=0), 2, atol=0.1)
    np.testing.assert_allclose(X[y == 1].mean(axis=0), 0, atol=0.1)
    np.testing.assert_allclose(X[y == -1].std(axis=0), 1, atol=0.05)
    np.testing.assert_allclose(X[y == -1].mean(axis=0), a, atol=0.05)
    assert abs(np.mean(y == 1) - 0.5) < 0.02


def test_waveform_bases_and_classes():
    h = breiman.waveform_bases()
    assert h.shape == (3, 21)
    assert h[0].argmax() == 10 and h[0].max() == 6  # h1 peaks at i = 11
    np.testing.assert_array_equal(h[1][4:], h[0][:-4])  # h2(i) = h1(i - 4)
    np.testing.assert_array_equal(h[2][:-4], h[0][4:])  # h3(i) = h1(i + 4)
    X, y = breiman.waveform(9000, np.random.default_rng(2), standardize=False)
    # class 1 = u h1 + (1 - u) h2 + e with E u = 1/2: mean (h1 + h2) / 2
    np.testing.assert_allclose(X[y == 1].mean(axis=0), (h[0] + h[1]) / 2, atol=0.15)
    assert np.mean(y == 1) == pytest.approx(1 / 3, abs=0.02)
    Xs, _ = breiman.waveform(500, np.random.default_rng(2))
    np.testing.assert_allclose(Xs.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(Xs.std(axis=0), 1)


def test_generators_are_seeded_by_name():
    a = ida.generate("ringnorm", 7)
    b = ida.generate("ringnorm", 7)
    c = ida.generate("ringnorm", 8)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    assert a[0].shape == (7400, 20)
    with pytest.raises(ValueError, match="no generator"):
        ida.generate("banana", 0)


def test_stratified_splits_have_published_sizes_and_class_ratio():
    y = np.r_[np.ones(90, int), -np.ones(187, int)]  # breast_cancer's 277 patterns
    train, test = ida.stratified_splits(y, "breast_cancer", 3, n_realisations=4)
    assert train.shape == (4, 200) and test.shape == (4, 77)
    for tr, te in zip(train, test):
        assert len(np.intersect1d(tr, te)) == 0
        assert abs(np.mean(y[tr] == 1) - 90 / 277) < 1 / 200 + 1e-12
    again, _ = ida.stratified_splits(y, "breast_cancer", 3, n_realisations=2)
    np.testing.assert_array_equal(again, train[:2])  # realisation r depends on r only
    with pytest.raises(ValueError, match="exceeds"):
        ida.stratified_splits(y[:100], "breast_cancer", 3, n_realisations=1)


def test_check_binary_rejects_three_classes():
    with pytest.raises(ValueError, match=r"binary with labels in \{-1, \+1\}"):
        ida.check_binary([1, -1, 2])
    with pytest.raises(ValueError, match="binary"):
        ida.check_binary([0, 1])


def test_load_benchmarks_mat_struct(tmp_path):
    # the layout of benchmarks.mat: struct with x, t, train, test (1-based, rows =
    # realisations), written here by scipy as MATLAB would
    rng = np.random.default_rng(0)
    x = rng.normal(size=(10, 3))
    t = np.where(np.arange(10) < 5, 1.0, -1.0)[:, None]
    trn = np.array([[1, 2, 6, 7], [3, 4, 8, 9]])
    tst = np.array([[3, 4, 5, 8, 9, 10], [1, 2, 5, 6, 7, 10]])
    path = tmp_path / "benchmarks.mat"
    scipy.io.savemat(path, {"heart": {"x": x, "t": t, "train": trn, "test": tst}})
    X, y, train, test = ida.load_benchmarks_mat(path, "heart")
    np.testing.assert_allclose(X, x)
    np.testing.assert_array_equal(y, t.ravel().astype(int))
    np.testing.assert_array_equal(train, trn - 1)
    np.testing.assert_array_equal(test, tst - 1)
    with pytest.raises(ValueError, match="unknown IDA dataset"):
        ida.load_benchmarks_mat(path, "iris")


@pytest.mark.parametrize("name", ["banana", "german", "titanic"])
def test_mirror_realisation_1_maps_onto_the_pattern_set(shared_data, name):
    mirror = shared_data / "ida"
    X, y = ida.load_pattern_set(name, mirror)
    Xtr, ytr, Xte, yte = ida.load_split_asc(name, mirror, 1)
    n_train, n_test, _ = ida.PUBLISHED[name]
    assert (len(ytr), len(yte)) == (n_train, n_test)
    used = set()
    tr = ida.asc_split_indices(X, y, Xtr, ytr, used)
    te = ida.asc_split_indices(X, y, Xte, yte, used)
    # a partition of the pattern set, rows and labels equal to the printed precision
    assert len(set(tr) | set(te)) == len(y) == n_train + n_test
    np.testing.assert_allclose(X[tr], Xtr, rtol=1e-7, atol=1e-12)
    np.testing.assert_array_equal(y[te], yte)
    assert ida.load_split_asc(name, mirror, 2) is None


def test_mirror_pattern_sets_have_published_sizes(shared_data):
    mirror = shared_data / "ida"
    for path in sorted((mirror / "unique_xt").glob("*.mat")):
        X, y = ida.load_pattern_set(path.stem, mirror)
        n_train, n_test, _ = ida.PUBLISHED[path.stem]
        assert len(y) == n_train + n_test == X.shape[0], path.stem


def test_protocol_takes_the_median_of_the_five_best():
    # the median per parameter of the per-realisation CV winners, and records per realisation
    X, y = ida.generate("twonorm", 0, n_patterns=300)
    train, test = ida.stratified_splits(y, "twonorm", 0, 60, 100, 6)
    grids = {"sigma_factors": [0.25, 1.0, 4.0], "svm_C": [0.1, 10.0], "lams": [0.01, 1.0]}
    sel = protocol.select(X, y, train, "svm", grids, 0, "twonorm")
    assert len(sel["best"]) == 5 and len(sel["cv_seconds"]) == 5
    for key in ("C", "gamma"):
        assert sel["params"][key] == np.median([b[key] for b in sel["best"]])
    rows = protocol.evaluate(X, y, train, test, "svm", sel, "twonorm")
    errors = [r["value"] for r in rows if r["metric"] == "error"]
    assert len(errors) == 6 and max(errors) < 15  # Bayes error 2.3 %
    with pytest.raises(ValueError, match="unknown method"):
        protocol.select(X, y, train, "knn", grids, 0, "twonorm")


def test_report_tables_and_agreement_counts(tmp_path):
    from kclf_workflow.records import record, write_records
    from kclf_workflow.reports.ida import write_report

    ref_err = tmp_path / "err.csv"
    cols = ["maplp", "svm", "kmap", "rbf", "ab", "abr", "kfd"]
    header = "dataset,gamma," + ",".join(f"{c}_mean,{c}_std" for c in cols)
    ref_err.write_text(header + "\nbanana,4.2," + ",".join(["10.0,1.0"] * 7) + "\n")
    ref_time = tmp_path / "time.csv"
    ref_time.write_text("dataset,maplp_s,svm_s,kmap_s\nbanana,135.3,4.03,1366\n")
    rng = np.random.default_rng(0)
    rows = []
    # banana: MAPLP 11.5 (within 2 std of 10 +- 1), SVM 12 (outside 1.5 std); wdbc: no paper
    for ds, means in (("banana", {"MAPLP": 11.5, "SVM": 12.0}), ("wdbc", {"MAPLP": 3, "SVM": 9})):
        for m, mu in means.items():
            noise = rng.normal(0, 0.1, 10)
            noise -= noise.mean()
            for t in range(10):
                rows.append(record(ds, "binary", m, t, "error", mu + noise[t], 0.1))
                rows.append(record(ds, "binary", m, t, "seconds", 0.2, 0.1))
                rows.append(record(ds, "binary", m, t, "seconds_with_cv", 1.2, 0.1))
    write_records(rows, tmp_path / "rec.csv")
    out = {
        "error_csv": tmp_path / "ida_error.csv",
        "time_csv": tmp_path / "ida_time.csv",
        "figure": tmp_path / "ida_error.png",
    }
    summary, agree = write_report(
        [tmp_path / "rec.csv"],
        ref_err,
        ref_time,
        {"banana": "x", "wdbc": "y"},
        out,
        ["maplp", "svm"],
    )
    within = agree.set_index("method")["within"]
    assert bool(within["MAPLP"]) and not bool(within["SVM"])
    md = (tmp_path / "ida_error.md").read_text()
    assert "**11.5 (0.1)**" in md  # best of banana, bold
    assert "10.0 ± 1.0" in md  # the paper's column
    assert "our SVM within 1.5 published std of the paper's SVM: 0 of 1 datasets" in md
    t = (tmp_path / "ida_time.md").read_text()
    assert "135" in t and (tmp_path / "ida_error.png").stat().st_size > 0


# ---------------------------------------------------------------- probability quality

CALIBRATION_SCORES = ("log_loss", "brier", "ece", "ece_mass")


@pytest.fixture(scope="module")
def tiny_ida_records():
    """Every method on a tiny twonorm problem: selection on one realisation, two evaluated."""
    X, y = ida.generate("twonorm", 0, n_patterns=240)
    train, test = ida.stratified_splits(y, "twonorm", 0, 60, 120, 2)
    grids = {
        "sigma_factors": [0.5, 1.0],
        "svm_C": [1.0, 10.0],
        "lams": [0.01, 0.1],
        "folds": 2,
    }
    rows = {}
    for method in protocol.METHODS:
        sel = protocol.select(X, y, train, method, grids, 0, "twonorm", n_select=1, n_folds=2)
        rows[method] = protocol.evaluate(
            X, y, train, test, method, sel, "twonorm", grids, seed=0, n_bins=5
        )
    return rows


def test_every_method_records_finite_probability_metrics(tiny_ida_records):
    import pandas as pd

    for method, rows in tiny_ida_records.items():
        df = pd.DataFrame(rows)
        assert set(df["method"]) == {protocol.METHODS[method]}
        for r in (0, 1):
            got = df[df["trial"] == r].set_index("metric")["value"]
            for score in CALIBRATION_SCORES:
                assert np.isfinite(got[score]), (method, r, score)
            assert got["n_scored"] == 120
            assert 0 <= got["brier"] <= 1 and 0 <= got["ece"] <= 1
            # five equal-width reliability bins whose counts add up to the test set
            counts = [got[f"rel_count_b{b:02d}"] for b in range(5)]
            assert sum(counts) == 120
            # a twonorm classifier (Bayes error 2.3 %) beats the coin's log loss / Brier
            assert got["brier"] < 0.25, method
        # the error and timing records are still there, one per realisation
        assert (df["metric"] == "error").sum() == 2 and (df["metric"] == "seconds").sum() == 2


def test_probability_records_equal_a_direct_computation(tiny_ida_records, direct_metrics):
    """Refit every method with its recorded parameters on the tiny problem's realisations
    and score its test probabilities from the metrics' definitions."""
    import json

    import pandas as pd

    from kclf_workflow.seeding import seed_for

    X, y = ida.generate("twonorm", 0, n_patterns=240)
    train, test = ida.stratified_splits(y, "twonorm", 0, 60, 120, 2)
    for method, rows in tiny_ida_records.items():
        df = pd.DataFrame(rows)
        for r in (0, 1):
            got = df[df["trial"] == r].set_index("metric")["value"]
            params = json.loads(df[df["trial"] == r]["params"].iloc[0])
            est = protocol.make_estimator(method, params).fit(X[train[r]], y[train[r]])
            proba = protocol.predicted_probabilities(
                method,
                est,
                X[train[r]],
                y[train[r]],
                X[test[r]],
                2,
                seed_for(0, "ida", "twonorm", method, "platt", r),
            )
            want = direct_metrics(y[test[r]], np.clip(proba, 0, 1), est.classes_, 5)
            for score in CALIBRATION_SCORES:
                assert got[score] == pytest.approx(want[score], rel=1e-10, abs=1e-12), (
                    method,
                    r,
                    score,
                )


def test_svm_probabilities_are_platt_scaled_and_seeded():
    X, y = ida.generate("twonorm", 1, n_patterns=200)
    train, test = ida.stratified_splits(y, "twonorm", 1, 80, 120, 1)
    est = protocol.make_estimator("svm", {"C": 1.0, "gamma": 0.05}).fit(X[train[0]], y[train[0]])
    args = ("svm", est, X[train[0]], y[train[0]], X[test[0]])
    p = protocol.predicted_probabilities(*args, folds=3, random_state=4)
    assert p.shape == (120, 2) and np.allclose(p.sum(axis=1), 1)
    assert 0 < p.min() and p.max() < 1  # a sigmoid, never exactly 0 or 1
    np.testing.assert_array_equal(p, protocol.predicted_probabilities(*args, 3, 4))
    # P(+1) ranks the test points like the SVC's decision values
    d = est.decision_function(X[test[0]])
    assert np.corrcoef(np.argsort(np.argsort(d)), np.argsort(np.argsort(p[:, 1])))[0, 1] > 0.99


def _ida_report(tmp_path, rows, name):
    from kclf_workflow.records import write_records
    from kclf_workflow.reports.ida import write_report

    folder = tmp_path / name
    folder.mkdir()
    write_records(rows, folder / "rec.csv")
    out = {
        "error_csv": folder / "ida_error.csv",
        "time_csv": folder / "ida_time.csv",
        "figure": folder / "ida_error.png",
        "calibration_csv": folder / "ida_calibration.csv",
        "reliability": folder / "ida_reliability.png",
    }
    origins = {"twonorm": "x", "wdbc": "y"}
    write_report([folder / "rec.csv"], None, None, origins, out, ["maplp"], folds=3, n_select=2)
    return folder


def _synthetic_predictions():
    """(dataset, method, trial, y, P(+1)) of two datasets x two methods, 3 trials."""
    for ds in ("twonorm", "wdbc"):
        for m, sharp in (("MAPLP", 3.0), ("SVM", 1.0)):
            for t in range(3):
                rng = np.random.default_rng([t, len(ds), int(sharp)])
                y = rng.choice([-1, 1], 80)
                yield ds, m, t, y, 1 / (1 + np.exp(-sharp * (y + rng.normal(0, 1.5, 80))))


def _synthetic_calibrated_rows(seconds):
    """Error, timing and calibration records of two datasets x two methods, 3 trials."""
    from kclf_workflow.records import calibration_records, record

    rows = []
    for ds, m, t, y, p in _synthetic_predictions():
        rows.append(record(ds, "binary", m, t, "error", 10.0 + t, seconds))
        rows.append(record(ds, "binary", m, t, "seconds", seconds, seconds))
        rows.append(record(ds, "binary", m, t, "seconds_with_cv", 2 * seconds, seconds))
        rows += calibration_records(
            y, p, labels=[-1, 1], dataset=ds, task="binary", method=m, trial=t,
            n_bins=5, fit_seconds=seconds,
        )  # fmt: skip
    return rows


def test_report_writes_calibration_table_and_reliability(tmp_path, direct_metrics):
    import pandas as pd

    folder = _ida_report(tmp_path, _synthetic_calibrated_rows(0.5), "a")
    table = pd.read_csv(folder / "ida_calibration.csv")
    pairs = list(zip(table["dataset"], table["method"]))
    assert sorted(pairs) == [(d, m) for d in ("twonorm", "wdbc") for m in ("MAPLP", "SVM")]
    assert (table["n_trials"] == 3).all() and (table["n_scored"] == 240).all()
    # the values: per (dataset, method) the mean over trials of the metrics computed from
    # their definitions (the CSV holds 6 significant digits)
    direct = {}
    for ds, m, _, y, p in _synthetic_predictions():
        got = direct_metrics(y, np.c_[1 - p, p], [-1, 1], 5)
        for score in CALIBRATION_SCORES:
            direct.setdefault((ds, m, score), []).append(got[score])
    for row in table.itertuples(index=False):
        for score in CALIBRATION_SCORES:
            want = np.mean(direct[(row.dataset, row.method, score)])
            assert getattr(row, f"{score}_mean") == pytest.approx(want, rel=5e-6), score
    md = (folder / "ida_calibration.md").read_text()
    assert md.startswith("IDA benchmarks: quality of the test-set probabilities")
    assert "surrogate" in md and md.count("| twonorm ") == 2
    assert (folder / "ida_reliability.png").stat().st_size > 0
    # the captions name the protocol that ran, not the paper's 5 x 5-fold
    assert "3-fold CV on each of the first 2 realisations" in (folder / "ida_error.md").read_text()
    assert "3-fold CV grid search" in (folder / "ida_time.md").read_text()


def test_report_tables_other_than_time_hold_no_timings(tmp_path):
    # the same fits timed differently: every table but ida_time.* is byte-identical
    fast = _ida_report(tmp_path, _synthetic_calibrated_rows(0.5), "fast")
    slow = _ida_report(tmp_path, _synthetic_calibrated_rows(7.25), "slow")
    names = sorted(p.name for p in fast.iterdir() if p.suffix in (".csv", ".md", ".tex"))
    assert "ida_calibration.csv" in names and "ida_error_agreement.csv" in names
    for name in names:
        if name == "rec.csv":
            continue
        same = (fast / name).read_bytes() == (slow / name).read_bytes()
        assert same == (not name.startswith("ida_time.")), name


def test_lspc_new_variant_runs_in_the_search_and_the_fits_and_is_recorded():
    """``ida.lspc_new`` reaches LSPC-new only: the selection equals LSPCCV(basis=
    "classwise", class_weight="balanced") on the same folds, the fits' probabilities equal
    LSPC with those settings, and the records' params name the variant."""
    from sklearn.model_selection import StratifiedKFold

    from kclf import LSPC, LSPCCV
    from kclf_workflow.seeding import seed_for

    X, y = ida.generate("twonorm", 0, n_patterns=200)
    y = np.where(np.arange(y.size) % 3 == 0, y, 0)  # imbalanced, so the weights matter
    train, test = ida.stratified_splits(y, "twonorm", 0, 60, 100, 2)
    variant = {"basis": "classwise", "class_weight": "balanced"}
    grids = {"sigma_factors": [0.5, 1.0, 2.0], "lams": [0.01, 0.1, 1.0], "lspc_new": variant}
    sel = protocol.select(X, y, train, "lspc_new", grids, 0, "twonorm", n_select=2, n_folds=3)
    sigmas = protocol.sigma_grid(X, grids["sigma_factors"])
    for r in range(2):
        folds = StratifiedKFold(
            3, shuffle=True, random_state=seed_for(0, "ida", "twonorm", "lspc_new", "cv", r)
        )
        ref = LSPCCV(sigmas=sigmas, lams=grids["lams"], cv=folds, **variant).fit(
            X[train[r]], y[train[r]]
        )
        assert sel["best"][r] == {"sigma": ref.sigma_, "lam": ref.lam_}
    rows = protocol.evaluate(X, y, train, test, "lspc_new", sel, "twonorm", grids)
    ref = LSPC(sigma=sel["params"]["sigma"], lam=sel["params"]["lam"], **variant)
    proba = ref.fit(X[train[1]], y[train[1]]).predict_proba(X[test[1]])
    plain = LSPC(sigma=sel["params"]["sigma"], lam=sel["params"]["lam"])
    plain_proba = plain.fit(X[train[1]], y[train[1]]).predict_proba(X[test[1]])
    assert not np.allclose(proba, plain_proba)  # the variant is a different model here
    err = 100.0 * np.mean(ref.predict(X[test[1]]) != y[test[1]])
    recorded = [r for r in rows if r["metric"] == "error" and r["trial"] == 1]
    assert recorded[0]["value"] == pytest.approx(err)
    assert json.loads(recorded[0]["params"]) == {**sel["params"], **variant}
    # another method ignores the block
    klr = protocol.evaluate(X, y, train, test, "klr", sel, "twonorm", grids)
    assert "basis" not in json.loads(klr[0]["params"])
