"""ISOLET loading, the multi-class protocol, its table and the cost model."""

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kclf.klr import KernelLogisticRegression
from kclf_workflow.datasets.isolet import N_FEATURES, load_isolet_mat, parse_isolet, read_isolet
from kclf_workflow.experiments.multiclass import (
    METHODS,
    cost_curve,
    make_estimator,
    prepare,
    run_trial,
)
from kclf_workflow.methods import spec
from kclf_workflow.records import read_records, write_records
from kclf_workflow.reports.multiclass import (
    multiclass_table,
    predicted_cost,
    write_multiclass_time,
    write_tables,
)

CALIBRATION = {"log_loss", "brier", "ece", "ece_mass", "n_clipped", "n_scored"}
#: the tiny grids of these tests, by the config key each method's spec reads
GRIDS = {"lams": [0.01], "lspc_lams": [0.1], "svc_Cs": [10.0]}


def grid_of(method, grids=GRIDS):
    """The grid ``method`` searches in these tests: its spec's key of ``grids``."""
    (key,) = spec("multiclass", method).grid
    return grids[key]


PROBABILISTIC = ("klr_pairwise", "klr_ovr", "lspc_new")
REFERENCE = pd.DataFrame(
    [
        {
            "dataset": "isolet",
            "svm_error_pct": 3.0,
            "svm_time": "21 min",
            "klogreg_error_pct": 3.0,
            "klogreg_time": "18 min",
        }
    ]
)

# `compress -c` of b"0.1, -0.5, 1.0, 3.\n-0.2, 0.25, 0.0, 26.\n0.3, 0.3, -1.0, 1.\n"
TINY_Z = bytes.fromhex(
    "1f9d90305cc46001a245c01a0463b8804170860b05065dc82018500642100119829061e361c019145d80"
    "2ca850a34205"
)


def isolet_text(rng, n):
    X = rng.uniform(-1, 1, size=(n, N_FEATURES))
    y = rng.integers(1, 27, size=n)
    lines = [", ".join(f"{v:.4f}" for v in row) + f", {k}." for row, k in zip(X, y)]
    return "\n".join(lines) + "\n", X, y


def test_parse_and_read_isolet(tmp_path):
    rng = np.random.default_rng(0)
    text, X, y = isolet_text(rng, 5)
    Xp, yp = parse_isolet(text)
    np.testing.assert_allclose(Xp, X, atol=5e-5)
    np.testing.assert_array_equal(yp, y)
    (tmp_path / "part.data").write_text(text)
    np.testing.assert_array_equal(read_isolet(tmp_path / "part.data")[1], y)
    if shutil.which("compress"):
        with open(tmp_path / "part.data.Z", "wb") as f:
            subprocess.run(["compress", "-c", str(tmp_path / "part.data")], stdout=f, check=True)
        Xz, yz = read_isolet(tmp_path / "part.data.Z")
        np.testing.assert_array_equal(Xz, Xp)
        np.testing.assert_array_equal(yz, y)


def test_dot_z_is_decompressed_and_checked(tmp_path):
    (tmp_path / "tiny.data.Z").write_bytes(TINY_Z)
    # decompressed into 3 rows of 4 columns: a valid .Z, but not ISOLET's 617 + 1 columns
    with pytest.raises(ValueError, match="617 features"):
        read_isolet(tmp_path / "tiny.data.Z")
    with pytest.raises(ValueError, match="1..26"):
        parse_isolet(", ".join(["0.5"] * N_FEATURES) + ", 27.\n")


def test_isolet1_mirror(shared_data):
    path = shared_data / "isolet" / "isolet.mat"
    if not path.is_file():
        pytest.skip(f"{path} not in the mirror")
    X, y = load_isolet_mat(path)
    assert X.shape == (1560, 617)
    np.testing.assert_array_equal(np.bincount(y)[1:], np.full(26, 60))
    assert X.min() >= -1 and X.max() <= 1


def test_digits_protocol_partitions_and_subsamples():
    d = prepare("digits", 7, 3, per_class=20)
    assert d["X"].shape == (200, 64)
    np.testing.assert_array_equal(np.bincount(d["y"]), np.full(10, 20))
    tests = np.concatenate(d["test"])
    np.testing.assert_array_equal(np.sort(tests), np.arange(200))
    for tr, te in zip(d["train"], d["test"]):
        assert np.intersect1d(tr, te).size == 0
    again = prepare("digits", 7, 3, per_class=20)
    np.testing.assert_array_equal(again["test"][1], d["test"][1])
    with pytest.raises(ValueError, match="unknown dataset"):
        prepare("chairs", 7, 3)


def test_trial_records_and_coupled_rows_are_distributions():
    d = prepare("digits", 1, 3, per_class=12)
    rows = run_trial(d, 0, "klr_pairwise", 1, "digits", [1.0], grid_of("klr_pairwise"), 2)
    metrics = {r["metric"]: r["value"] for r in rows}
    assert {"error", "fit_seconds", "search_seconds"} | CALIBRATION <= set(metrics)
    assert metrics["error"] < 0.3
    clf = KernelLogisticRegression(lam=0.01).fit(d["X"][d["train"][0]], d["y"][d["train"][0]])
    P = clf.predict_proba(d["X"][d["test"][0]])
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-8)
    svc = run_trial(d, 0, "svc", 1, "digits", [1.0], grid_of("svc"), 2)
    assert not CALIBRATION & {r["metric"] for r in svc}
    with pytest.raises(ValueError, match="unknown method"):
        run_trial(d, 0, "knn", 1, "digits", [1.0], [0.1], 2)


def test_predicted_cost_ratio_is_the_papers():
    c = np.arange(2, 27)
    ratio = predicted_cost(c, 60, "ovr") / predicted_cost(c, 60, "pairwise")
    # c^3 N^2 / (2 (c^2 - c) N^2) = c^2 / (2 (c - 1)): about c / 2, "a reduction of
    # computational costs inverse proportional to the number of classes"
    np.testing.assert_allclose(ratio, c**2 / (2.0 * (c - 1)))
    assert np.all(ratio >= 2) and ratio[-1] == pytest.approx(676 / 50)


def test_cost_curve_and_table(tmp_path):
    d = prepare("digits", 1, 3, per_class=20)
    rows = cost_curve(d["X"], d["y"], [2, 3], 10, 3.0, 0.01, seed=0)
    assert [(r["c"], r["n"], r["strategy"]) for r in rows] == [
        (2, 20, "pairwise"),
        (2, 20, "ovr"),
        (3, 30, "pairwise"),
        (3, 30, "ovr"),
    ]
    with pytest.raises(ValueError, match="number of classes"):
        cost_curve(d["X"], d["y"], [11], 10, 3.0, 0.01, seed=0)
    recs = []
    for m in ("klr_ovr", "lspc_new"):
        for t in range(2):
            recs += run_trial(d, t, m, 1, "digits", [1.0], grid_of(m), 2)
    summary, md, tex, caption = multiclass_table(pd.DataFrame(recs), REFERENCE, "digits", 3, 20)
    assert "paper ISOLET: kLOGREG pairwise" in md.index
    assert md.loc["paper ISOLET: kLOGREG pairwise", "test error [%]"] == "3.00"
    assert set(summary["metric"]) == {"error", "log_loss"}  # no seconds: same bytes per config
    assert "3-fold" in caption
    csv, md, tex = write_multiclass_time(
        pd.DataFrame(recs), REFERENCE, "digits", 3, 20, tmp_path / "d"
    )
    time = pd.read_csv(csv).set_index("method")
    assert list(time.index) == ["klr_ovr", "lspc_new"] and (time["n_trials"] == 2).all()
    assert (time[["fit_seconds_mean", "search_seconds_mean"]] > 0).all(axis=None)
    paper = r"\| paper ISOLET: kLOGREG pairwise +\| – +\| 18 min \(500 MHz PC\) +\|"
    assert re.search(paper, md.read_text())
    assert "3-fold" in tex.read_text()
    with pytest.raises(ValueError, match="no time records"):
        write_multiclass_time(pd.DataFrame(recs[:1]), REFERENCE, "digits", 3, 20, tmp_path / "d")


@pytest.fixture(scope="module")
def tiny_records():
    """Every method on two trials of a tiny digits problem (records of the fit rule)."""
    d = prepare("digits", 3, 2, per_class=12)
    rows = []
    for m in (*PROBABILISTIC, "svc"):
        for t in range(2):
            rows += run_trial(d, t, m, 3, "digits", [1.0], grid_of(m), 2, n_bins=5)
    return pd.DataFrame(rows)


def test_probabilistic_methods_emit_finite_calibration_records(tiny_records):
    cal = tiny_records[tiny_records["metric"].isin(CALIBRATION)]
    for m in PROBABILISTIC:
        for t in range(2):
            got = cal[(cal["method"] == m) & (cal["trial"] == t)].set_index("metric")["value"]
            assert set(got.index) == CALIBRATION, (m, t)
            assert np.all(np.isfinite(got)), (m, t, got)
            assert got["n_scored"] == 60  # half of 10 x 12 samples in the test part
            assert 0 <= got["ece"] <= 1 and 0 <= got["brier"] <= 2 and got["log_loss"] > 0
        bins = tiny_records[
            (tiny_records["method"] == m) & tiny_records["metric"].str.startswith("rel_count_")
        ]
        assert len(bins) == 2 * 5 and bins.groupby("trial")["value"].sum().eq(60).all()
    assert "svc" not in set(cal["method"])  # SVC without Platt scaling: no probabilities


def test_calibration_records_equal_a_direct_computation(tiny_records, direct_metrics):
    """Refit each probabilistic method with its recorded parameters and score its test
    probabilities from the definitions (top-label confidence for the ECEs)."""
    import json

    d = prepare("digits", 3, 2, per_class=12)
    for m in PROBABILISTIC:
        for t in range(2):
            mine = tiny_records[(tiny_records["method"] == m) & (tiny_records["trial"] == t)]
            got = mine.set_index("metric")["value"]
            params = json.loads(mine["params"].iloc[0])
            tr, te = d["train"][t], d["test"][t]
            est = make_estimator(m, params).fit(d["X"][tr], d["y"][tr])
            want = direct_metrics(d["y"][te], est.predict_proba(d["X"][te]), est.classes_, 5)
            for score, value in want.items():
                assert got[score] == pytest.approx(value, rel=1e-10, abs=1e-12), (m, t, score)


def test_write_tables_companions(tiny_records, tmp_path):
    write_records(tiny_records.to_dict("records"), tmp_path / "records.csv")
    records = read_records(tmp_path / "records.csv")
    stem = tmp_path / "tables" / "digits"
    figure = tmp_path / "figures" / "digits_reliability.png"
    write_tables(records, REFERENCE, "digits", 2, 12, stem, reliability=figure)
    main = pd.read_csv(f"{stem}.csv")
    assert set(main["metric"]) == {"error", "log_loss"}
    assert "fit [s]" not in (tmp_path / "tables" / "digits.md").read_text()
    time = pd.read_csv(f"{stem}_time.csv")
    assert {"fit_seconds_mean", "search_seconds_mean"} <= set(time.columns)
    assert set(time["method"]) == {*PROBABILISTIC, "svc"}
    assert (tmp_path / "tables" / "digits_time.md").is_file()
    cal = pd.read_csv(f"{stem}_calibration.csv")
    # one row per probabilistic method, under the error table's names
    assert sorted(cal["method"]) == sorted(METHODS[m] for m in PROBABILISTIC)
    assert (cal["n_trials"] == 2).all()
    for c in ("log_loss", "brier", "ece"):
        # the mean over trials of the records (checked against the definitions above);
        # the CSV holds 6 significant digits
        rec = tiny_records[tiny_records["metric"] == c]
        want = rec.groupby("method")["value"].mean().rename(index=METHODS)
        got = cal.set_index("method")[f"{c}_mean"]
        np.testing.assert_allclose(got[want.index], want, rtol=5e-6, err_msg=c)
    md = (tmp_path / "tables" / "digits_calibration.md").read_text()
    assert md.startswith("Probability quality") and "SVC" in md
    assert all(METHODS[m] in md for m in PROBABILISTIC)
    assert figure.stat().st_size > 0


@pytest.mark.slow
def test_workflow_family_runs_offline_and_is_up_to_date_after(tmp_path):
    import yaml
    from workflow_run import ROOT, run

    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for block in cfg.values():
        if isinstance(block, dict) and "enabled" in block:
            block["enabled"] = False
    cfg["mirror"] = str(ROOT.parent / "shared" / "data")
    cfg["multiclass"] = {
        "enabled": True,
        "datasets": ["digits"],
        "per_class": 12,
        "folds": 2,
        "sigma_factors": [1.0],
        "lams": [0.01],
        "lspc_lams": [0.1],
        "svc_Cs": [10.0],
        "reference": str(ROOT.parent / "shared" / "reference" / "klogreg_multiclass.csv"),
        "cost": {"classes": [2, 3], "per_class": 8},
    }
    if not Path(cfg["multiclass"]["reference"]).is_file():
        pytest.skip("../shared/reference not present: the table needs the paper's row")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    run(tmp_path)
    for out in (
        "results/tables/digits.md",
        "results/tables/digits.tex",
        "results/tables/digits_time.md",
        "results/tables/digits_calibration.md",
        "results/figures/digits_reliability.png",
        "results/figures/coupling_cost.png",
    ):
        assert (tmp_path / out).is_file(), out
    table = pd.read_csv(tmp_path / "results/tables/digits.csv")
    assert set(table["method"]) >= {"klr_pairwise", "klr_ovr", "lspc_new", "svc"}
    assert set(table["metric"]) == {"error", "log_loss"}
    time = pd.read_csv(tmp_path / "results/tables/digits_time.csv")
    assert {"fit_seconds_mean", "search_seconds_mean"} <= set(time.columns)
    cal = pd.read_csv(tmp_path / "results/tables/digits_calibration.csv")
    assert sorted(cal["method"]) == sorted(METHODS[m] for m in PROBABILISTIC)
    assert "Nothing to be done" in run(tmp_path, "-n").stdout + run(tmp_path, "-n").stderr


def test_lspc_new_variant_reaches_the_search_and_the_fit_and_is_recorded():
    """``multiclass.lspc_new`` runs LSPC-new's search and final fit with the class-wise
    basis: the records' error and log loss equal LSPCCV / LSPC(basis="classwise") on the
    same folds, and their params name the variant; the other methods ignore it."""
    import json

    from sklearn.metrics import log_loss

    from kclf import LSPC, LSPCCV
    from kclf.kernels import median_sigma
    from kclf_workflow.seeding import seed_for

    d = prepare("digits", 1, 3, per_class=12)
    tr, te = d["train"][0], d["test"][0]
    X, y = d["X"], d["y"]
    variant = {"basis": "classwise", "class_weight": None}
    rows = run_trial(d, 0, "lspc_new", 1, "digits", [0.5, 1.0], [0.01, 0.1], 2, variant=variant)
    rs = seed_for(1, "multiclass", "digits", "cv", 0)
    sigmas = median_sigma(X[tr]) * np.array([0.5, 1.0])
    search = LSPCCV(sigmas=sigmas, lams=[0.01, 0.1], cv=2, random_state=rs, basis="classwise")
    search.fit(X[tr], y[tr])
    est = LSPC(sigma=search.sigma_, lam=search.lam_, basis="classwise").fit(X[tr], y[tr])
    metrics = {r["metric"]: r for r in rows}
    assert metrics["error"]["value"] == pytest.approx(np.mean(est.predict(X[te]) != y[te]))
    P = est.predict_proba(X[te])
    assert metrics["log_loss"]["value"] == pytest.approx(
        log_loss(y[te], np.clip(P, 1e-15, 1), labels=est.classes_), rel=1e-6
    )
    assert json.loads(metrics["error"]["params"]) == {
        "sigma": search.sigma_,
        "lam": search.lam_,
        **variant,
    }
    plain = run_trial(d, 0, "lspc_new", 1, "digits", [0.5, 1.0], [0.01, 0.1], 2)
    assert "basis" not in json.loads(plain[0]["params"])
