"""IDA data: mirror loaders, split recovery, seeded splits, Breiman's generators, protocol."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.io
from scipy.stats import norm

from kclf.datasets import breiman, ida
from kclf.experiments import ida as protocol


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
    from kclf.records import record, write_records
    from kclf.reports.ida import write_report

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
