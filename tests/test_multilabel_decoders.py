"""Issue 15 item 10 in the multilabel family: Hamming loss is scored with its Bayes decoder
(CorrLog's thresholded marginals), subset accuracy with its own (the joint MAP), the
F-measures and example-based measures with the MAP too (thresholded marginals are not their
Bayes decoder); the records and the caption say which, and belief-propagation
non-convergence is counted in the records."""

import json

import numpy as np
import pandas as pd
import pytest

from kclf.experiments import multilabel as ml
from kclf.multilabel_metrics import METRICS, multilabel_scores

CFG = {
    "folds": 2,
    "inference": "bp",
    "scaling": "standardize",
    "rho1_grid": [0.0],
    "rho2_grid": [1e-2, 1e-3],
}


@pytest.fixture(scope="module")
def toy():
    return ml.make_toy(5, 1, 200, 400)


def test_every_measure_has_a_decoder():
    assert set(ml.DECODERS) == set(METRICS)
    assert ml.DECODERS["subset_accuracy"] == "map" and ml.DECODERS["hamming_loss"] == "marginal"
    assert {ml.DECODERS[m] for m in METRICS if m != "hamming_loss"} == {"map"}


def test_corrlog_scores_each_measure_with_its_decoder(toy):
    rows, preds = ml.fit_method(toy, "toy", "corrlog", CFG, 3)
    est = ml.make_estimator("corrlog", CFG, ml.seed_for(3, "multilabel", "toy", "cv", 0))
    est.fit(toy["X_0"], toy["Y_0"])
    Yt = toy["Yt_0"]
    Y_map, Y_marg = (
        est.decode_labels(toy["Xt_0"], "map"),
        est.decode_labels(toy["Xt_0"], "marginal"),
    )
    np.testing.assert_array_equal(preds["Yp_0"], Y_map)
    np.testing.assert_array_equal(preds["Ypm_0"], Y_marg)
    assert not np.array_equal(Y_map, Y_marg)  # the decoders differ on this toy
    want = {"map": multilabel_scores(Yt, Y_map), "marginal": multilabel_scores(Yt, Y_marg)}
    label_set = [r for r in rows if r["metric"] in METRICS]
    assert len(label_set) == len(METRICS)
    for r in label_set:
        decoder = json.loads(r["params"])["decoder"]
        assert decoder == ml.DECODERS[r["metric"]]
        assert r["value"] == pytest.approx(want[decoder][r["metric"]])
    bp = [r for r in rows if r["metric"] == "bp_nonconverged"]
    assert sorted(json.loads(r["params"])["decoder"] for r in bp) == ["map", "marginal"]
    rows_bp = {json.loads(r["params"])["decoder"]: json.loads(r["params"])["bp_rows"] for r in bp}
    assert rows_bp == {"map": len(Yt), "marginal": 0}  # two labels: marginals enumerated
    assert all(0 <= r["value"] <= len(Yt) for r in bp)


def test_other_methods_keep_their_one_prediction(toy):
    rows, preds = ml.fit_method(toy, "toy", "cc", CFG, 3)
    label_set = [r for r in rows if r["metric"] in METRICS]
    assert {json.loads(r["params"])["decoder"] for r in label_set} == {"predict"}
    assert not any(r["metric"] == "bp_nonconverged" for r in rows)
    assert "Ypm_0" not in preds


def test_caption_names_the_decoders_and_bp_counts(toy, tmp_path):
    rows = []
    for method in ("corrlog", "ilr", "cc"):
        rows += ml.fit_method(toy, "toy", method, CFG, 3)[0]
    records = pd.DataFrame(rows)
    ml.write_table(records, "toy", tmp_path / "multilabel_toy.csv")
    md = (tmp_path / "multilabel_toy.md").read_text()
    assert "Hamming loss scores each label's marginal thresholded at 1/2" in md
    assert "the other measures the joint MAP label vector" in md
    bp = records[records["metric"] == "bp_nonconverged"]
    n_rows = sum(json.loads(p)["bp_rows"] for p in bp["params"])
    assert f"did not converge on {int(bp['value'].sum())} of {n_rows} decoded" in md
