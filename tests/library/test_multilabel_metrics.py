"""Multilabel measures against hand counts, and the experiment glue on a tiny toy."""

import numpy as np
import pandas as pd
import pytest

from kclf.metrics import MULTILABEL_METRICS as METRICS
from kclf.metrics import multilabel_scores
from kclf_workflow.experiments.multilabel import fit_method, make_toy
from kclf_workflow.reports.multilabel import write_table

Y_TRUE = np.array([[1, 0], [1, 1], [0, 0]])
Y_PRED = np.array([[1, 1], [1, 1], [0, 0]])


def test_scores_by_hand():
    s = multilabel_scores(Y_TRUE, Y_PRED)
    # one wrong bit of 6; rows 2 and 3 exactly right
    assert s["hamming_loss"] == pytest.approx(1 / 6)
    assert s["subset_accuracy"] == pytest.approx(2 / 3)
    # row 1: |y & y'| = 1, |y | y'| = 2, |y'| = 2, |y| = 1; row 3 empty & empty counts 1
    assert s["example_accuracy"] == pytest.approx((1 / 2 + 1 + 1) / 3)
    assert s["example_precision"] == pytest.approx((1 / 2 + 1 + 1) / 3)
    assert s["example_recall"] == pytest.approx(1.0)
    assert s["example_f1"] == pytest.approx((2 / 3 + 1 + 1) / 3)
    # pooled counts: TP 3, FP 1, FN 0
    assert s["micro_f1"] == pytest.approx(6 / 7)
    # label 1: TP 2 -> F1 1; label 2: TP 1, FP 1 -> F1 2/3
    assert s["macro_f1"] == pytest.approx((1 + 2 / 3) / 2)
    assert set(s) == set(METRICS)


def test_perfect_prediction():
    s = multilabel_scores(Y_TRUE, Y_TRUE)
    for name, higher in METRICS.items():
        assert s[name] == (1.0 if higher else 0.0)


def test_metric_input_errors():
    with pytest.raises(ValueError, match="one shape"):
        multilabel_scores(Y_TRUE, Y_PRED[:2])
    with pytest.raises(ValueError, match="Y_pred must contain only 0 and 1"):
        multilabel_scores(Y_TRUE, 2 * Y_PRED)


def test_toy_is_seeded_by_trial():
    a, b = make_toy(1, 2, 30, 40), make_toy(1, 3, 30, 40)
    np.testing.assert_array_equal(a["X_1"], b["X_1"])  # trial 1 does not depend on the count
    assert not np.array_equal(a["X_0"], a["X_1"])
    assert a["Y_0"].shape == (30, 2) and a["Yt_1"].shape == (40, 2)


def test_fit_method_records_and_table(tmp_path):
    data = make_toy(3, 1, 120, 200)
    cfg = {
        "folds": 2,
        "inference": "bp",
        "scaling": "standardize",
        "rho1_grid": [0.0],
        "rho2_grid": [1e-2, 1e-3],
    }
    rows = []
    for method in ("corrlog", "ilr", "cc", "mo_svc"):
        r, preds = fit_method(data, "toy", method, cfg, seed=5)
        assert preds["Yp_0"].shape == (200, 2)
        acc = [x["value"] for x in r if x["metric"] == "subset_accuracy"][0]
        assert acc == pytest.approx(np.mean(np.all(preds["Yp_0"] == data["Yt_0"], axis=1)))
        rows += r
    # one row per label-set metric and method, plus the per-label probability metrics
    assert sum(x["metric"] in METRICS for x in rows) == 4 * len(METRICS)
    log_loss = [x for x in rows if x["metric"] == "log_loss"]
    assert len(log_loss) == 4 * 2 and all(np.isfinite(x["value"]) for x in log_loss)
    write_table(pd.DataFrame(rows), "toy", tmp_path / "multilabel_toy.csv")
    md = (tmp_path / "multilabel_toy.md").read_text()
    assert "Subset accuracy" in md and "CorrLog" in md and "MultiOutput (SVC)" in md
    assert (tmp_path / "multilabel_toy.tex").read_text().count("tabular") >= 2
