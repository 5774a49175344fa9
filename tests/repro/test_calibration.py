"""kclf_workflow.reports.calibration: tables and pooled reliability diagrams from records alone."""

import numpy as np
import pandas as pd
import pytest

from kclf.metrics import probability_metrics, reliability_curve
from kclf_workflow.records import calibration_records, read_records, write_records
from kclf_workflow.reports.calibration import (
    calibration_table,
    pool_reliability,
    reliability_figure,
    write_calibration_table,
)


def _fake_fits(rng, n_trials=3, n=60):
    """Records of two methods on a 3-label multilabel set, plus their raw predictions."""
    rows, raw = [], {"calibrated": ([], []), "overconfident": ([], [])}
    for trial in range(n_trials):
        p = rng.uniform(size=(n, 3))
        y = (rng.uniform(size=(n, 3)) < p).astype(int)
        for method, q in (("calibrated", p), ("overconfident", np.round(p))):
            rows += calibration_records(
                y, q, dataset="scene", task=["a", "b", "c"], method=method, trial=trial, n_bins=10
            )
            raw[method][0].append(y)
            raw[method][1].append(q)
    return rows, raw


def test_pooled_records_equal_the_curve_of_concatenated_predictions(tmp_path):
    rows, raw = _fake_fits(np.random.default_rng(0))
    write_records(rows, tmp_path / "r.csv")  # through the CSV round trip the workflow uses
    records = read_records(tmp_path / "r.csv")
    pooled = pool_reliability(records)
    for method, (ys, qs) in raw.items():
        y = np.concatenate([a.ravel() for a in ys])
        q = np.concatenate([a.ravel() for a in qs])
        curve = reliability_curve(y, q, labels=[0, 1], n_bins=10)
        got = pooled[pooled["method"] == method].sort_values("bin")
        np.testing.assert_array_equal(got["count"].to_numpy(), curve.count)
        np.testing.assert_allclose(got["confidence"].to_numpy(), curve.confidence, rtol=1e-9)
        np.testing.assert_allclose(got["frequency"].to_numpy(), curve.frequency, rtol=1e-9)


def test_calibration_table_is_mean_and_std_over_trials_of_task_means():
    rng = np.random.default_rng(1)
    rows, raw = _fake_fits(rng)
    table = calibration_table(rows)
    assert list(table["method"]) == ["calibrated", "overconfident"]
    assert list(table["n_trials"]) == [3, 3]
    for method, (ys, qs) in raw.items():
        per_trial = [
            np.mean(
                [probability_metrics(y[:, j], q[:, j], labels=[0, 1])["brier"] for j in range(3)]
            )
            for y, q in zip(ys, qs)
        ]
        row = table[table["method"] == method].iloc[0]
        assert row["brier_mean"] == pytest.approx(np.mean(per_trial))
        assert row["brier_std"] == pytest.approx(np.std(per_trial, ddof=1))
    over = table[table["method"] == "overconfident"].iloc[0]
    calib = table[table["method"] == "calibrated"].iloc[0]
    # rounding p to 0/1 clips about every prediction and ruins the log loss and the ECE
    assert over["n_clipped"] == over["n_scored"] == 3 * 60 * 3
    assert calib["n_clipped"] == 0
    assert over["log_loss_mean"] > 5 * calib["log_loss_mean"]
    assert over["ece_mean"] > calib["ece_mean"]


def test_single_trial_has_zero_std():
    rows = calibration_records(
        [0, 1, 1], [0.2, 0.7, 0.9], dataset="d", task="t", method="m", trial=0
    )
    table = calibration_table(rows)
    assert table.loc[0, "log_loss_std"] == 0.0 and table.loc[0, "n_trials"] == 1


def test_table_has_only_the_pairs_that_ran():
    rows = []
    for dataset, methods in (("a", ["m1", "m2"]), ("b", ["m1"])):
        for method in methods:
            for trial in range(2):
                rows += calibration_records(
                    [0, 1, 1, 0],
                    [0.1, 0.8, 0.6, 0.3],
                    dataset=dataset,
                    task="t",
                    method=method,
                    trial=trial,
                )
    table = calibration_table(rows)
    assert list(zip(table["dataset"], table["method"])) == [("a", "m1"), ("a", "m2"), ("b", "m1")]
    assert list(table["n_scored"]) == [8, 8, 8] and list(table["n_trials"]) == [2, 2, 2]


def test_write_calibration_table(tmp_path):
    rows, _ = _fake_fits(np.random.default_rng(2))
    csv, md = write_calibration_table(rows, tmp_path / "tables" / "scene")
    assert csv.name == "scene_calibration.csv" and md.name == "scene_calibration.md"
    back = pd.read_csv(csv)
    assert set(back["method"]) == {"calibrated", "overconfident"}
    text = md.read_text()
    assert "±" in text and "log loss" in text and "overconfident" in text
    assert "540 (100.0%)" in text


def test_reliability_figure_writes_a_png(tmp_path):
    rows, _ = _fake_fits(np.random.default_rng(3), n_trials=1)
    path = reliability_figure(rows, tmp_path / "fig" / "scene_reliability.png", title="scene")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_records_without_calibration_metrics_are_rejected():
    rows = [{"dataset": "d", "task": "t", "method": "m", "trial": 0, "metric": "auc", "value": 1}]
    with pytest.raises(ValueError, match="no calibration metrics"):
        calibration_table(rows)
    with pytest.raises(ValueError, match="no reliability bins"):
        pool_reliability(rows)
