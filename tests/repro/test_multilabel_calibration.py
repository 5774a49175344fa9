"""Probability quality in the multilabel family: every method's per-label probabilities on the test
part become calibration records (kclf_workflow.records.calibration_records, one task per label),
and the report writes the calibration table (one row per method), the reliability
diagram and the separate training-time table."""

import hashlib
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from kclf.corrlog import belief_propagation as bp
from kclf_workflow.experiments import multilabel as ml
from kclf_workflow.reports import multilabel as mlr

CFG = {
    "folds": 2,
    "inference": "bp",
    "scaling": "standardize",
    "rho1_grid": [0.0],
    "rho2_grid": [1e-2],
}
N_BINS = 5
SOURCES = {"corrlog": "exact", "ilr": "exact", "cc": "chain", "mo_svc": "platt"}
SCORES = ["log_loss", "brier", "ece", "ece_mass"]


@pytest.fixture(scope="module")
def toy():
    return ml.make_toy(7, 2, 80, 120)


@pytest.fixture(scope="module")
def records(toy):
    rows = []
    for method in ml.METHODS:
        r, _ = ml.fit_method(toy, "toy", method, CFG, 7, n_bins=N_BINS)
        rows += r
    return pd.DataFrame(rows)


def test_every_method_emits_finite_calibration_records_per_label_and_trial(records):
    for method, source in SOURCES.items():
        df = records[records["method"] == method]
        assert set(df[df["task"] == "all"]["metric"]) >= {"subset_accuracy", "hamming_loss"}
        cal = df[df["metric"].isin(SCORES)]
        # one row per score, label and trial
        assert len(cal) == len(SCORES) * 2 * 2, method
        assert set(cal["task"]) == {"y1", "y2"} and set(cal["trial"]) == {0, 1}
        assert np.isfinite(cal["value"]).all(), method
        assert (cal["value"] >= 0).all()
        bins = df[df["metric"].str.startswith("rel_count_b")]
        assert bins["metric"].nunique() == N_BINS
        # every test prediction lands in one bin: 120 per label and trial
        assert bins.groupby(["task", "trial"])["value"].sum().eq(120).all()
        assert {json.loads(p)["marginals"] for p in cal["params"]} == {source}, method


def test_probabilities_are_informative(records):
    """Not constant guesses: every method beats the prevalence-only Brier score here."""
    brier = records[records["metric"] == "brier"].groupby("method")["value"].mean()
    assert (brier < 0.15).all(), brier  # a 0.5 guess scores 0.25, the toy's base rate ~0.25


def test_corrlog_marginals_exact_when_small_bp_beyond(toy, monkeypatch):
    est = ml.make_estimator("corrlog", CFG, 0).fit(toy["X_0"], toy["Y_0"])
    P, source = ml.predict_marginals(est, toy["Xt_0"])
    assert source == "exact"
    U = toy["Xt_0"] @ est.coef_.T + est.intercept_
    np.testing.assert_allclose(P, bp.exact_marginals(U, est.couplings_), atol=1e-12)
    # above the enumeration limit the model's own (BP) beliefs are used; on two labels
    # (a tree) loopy BP is exact, so they agree with the enumeration
    monkeypatch.setattr(ml, "MAX_EXACT_LABELS", 1)
    P_bp, source = ml.predict_marginals(est, toy["Xt_0"])
    assert source == "bp"
    np.testing.assert_allclose(P_bp, P, atol=1e-8)
    assert est.inference == "bp"  # the fitted estimator itself is left unchanged


def test_mo_svc_platt_falls_back_to_training_decisions_for_a_rare_label(toy):
    X, Y = toy["X_0"], toy["Y_0"].copy()
    Y[:, 1] = 0
    Y[0, 1] = 1  # a single positive: no stratified folds possible
    est = ml.make_estimator("mo_svc", {"folds": 2}, 0)
    with warnings.catch_warnings():  # CV folds without a positive fail: NaN scores
        warnings.simplefilter("ignore")
        est.fit(X, Y)
    P, source = ml.predict_marginals(ml.probability_model("mo_svc", est, X, Y, 0), toy["Xt_0"])
    assert source == "platt" and P.shape == (len(toy["Xt_0"]), 2)
    assert np.isfinite(P).all() and (P >= 0).all() and (P <= 1).all()


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_report_writes_calibration_and_time_companions(records, tmp_path):
    stem = tmp_path / "multilabel_toy"
    mlr.write_table(records, "toy", f"{stem}.csv")
    mlr.write_calibration(records, "toy", stem, tmp_path / "rel.png")
    mlr.write_multilabel_time(records, "toy", stem)

    cal = pd.read_csv(tmp_path / "multilabel_toy_calibration.csv")
    assert sorted(cal["method"]) == sorted(ml.METHODS.values())  # one row per method
    assert (cal["n_trials"] == 2).all()
    for s in ("log_loss", "brier", "ece"):
        assert np.isfinite(cal[f"{s}_mean"]).all() and np.isfinite(cal[f"{s}_std"]).all()
    md = (tmp_path / "multilabel_toy_calibration.md").read_text()
    assert all(name in md for name in ml.METHODS.values())
    assert (tmp_path / "rel.png").stat().st_size > 10_000

    time = pd.read_csv(tmp_path / "multilabel_toy_time.csv")
    assert list(time["method"]) == list(ml.METHODS.values())
    assert (time["seconds_mean"] > 0).all() and (time["n_trials"] == 2).all()

    # no timing in the other tables: other fit seconds, same bytes
    before = {p.name: _sha(p) for p in tmp_path.glob("multilabel_toy*") if "_time" not in p.name}
    slower = records.assign(fit_seconds=records["fit_seconds"] * 3 + 1)
    mlr.write_table(slower, "toy", f"{stem}.csv")
    mlr.write_calibration(slower, "toy", stem)
    after = {p.name: _sha(p) for p in tmp_path.glob("multilabel_toy*") if "_time" not in p.name}
    assert after == before and len(before) == 5  # .csv .md .tex _calibration.{csv,md}
