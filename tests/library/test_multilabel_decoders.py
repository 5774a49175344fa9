"""The multilabel family's decoders: subset accuracy is scored with its Bayes decoder
(CorrLog's joint MAP), Hamming loss with its own (the thresholded marginals), example F1 and
its precision and recall with the F1 decision (GFM, example F1's Bayes decision) and, in
extra "(marginals)" rows, with the thresholded marginals; example accuracy and the micro /
macro F-measures with the thresholded marginals; the F-type measures in extra "(MAP)" rows
with the joint MAP too. The records and the caption say which, and belief-propagation
non-convergence is counted in the records."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from kclf.corrlog import CorrLog
from kclf.metrics import MULTILABEL_METRICS as METRICS
from kclf.metrics import multilabel_scores
from kclf_workflow.experiments import multilabel as ml
from kclf_workflow.reports import multilabel as mlr
from kclf_workflow.reports.tables import format_cell

CFG = {
    "folds": 2,
    "inference": "bp",
    "scaling": "standardize",
    "rho1_grid": [0.0],
    "rho2_grid": [1e-2, 1e-3],
}
F_TYPE = [m for m in METRICS if m not in ("hamming_loss", "subset_accuracy")]
EXAMPLE_F = ["example_precision", "example_recall", "example_f1"]


@pytest.fixture(scope="module")
def toy():
    return ml.make_toy(5, 1, 200, 400)


def test_every_measure_has_a_decoder():
    assert set(ml.DECODERS) == set(METRICS)
    assert ml.DECODERS["subset_accuracy"] == "map"
    assert {m for m in METRICS if ml.DECODERS[m] == "f1"} == set(EXAMPLE_F)
    others = set(METRICS) - {"subset_accuracy", *EXAMPLE_F}
    assert {ml.DECODERS[m] for m in others} == {"marginal"}
    assert list(ml.ALSO_MAP) == F_TYPE
    assert list(ml.ALSO_MARGINAL) == EXAMPLE_F
    for m in F_TYPE:
        assert mlr.METRIC_NAMES[m + ml.MAP_SUFFIX] == mlr.METRIC_NAMES[m] + " (MAP)"
    for m in EXAMPLE_F:
        name = mlr.METRIC_NAMES[m + ml.MARGINAL_SUFFIX]
        assert name == mlr.METRIC_NAMES[m] + " (marginals)"


# ---------------------------------------------------------------------------------------
# a case computed by hand
# ---------------------------------------------------------------------------------------

# Two labels, fields u = x (coef_ = I, intercept_ = 0) and coupling a = -1/2:
# P(y) ~ exp(u1 y1 + u2 y2 + a y1 y2), y in {-1, +1}^2. At x = (0.7, 0.4) the exponents of
# (++, +-, -+, --) are (0.6, 0.8, 0.2, -1.6): the MAP is (+, -), the marginals
# P(y1 = +) = (e^0.6 + e^0.8) / Z = 0.740 and P(y2 = +) = (e^0.6 + e^0.2) / Z = 0.556 with
# Z = e^0.6 + e^0.8 + e^0.2 + e^-1.6, so thresholding gives (+, +). At x = (-0.7, -0.4)
# everything flips sign but a: MAP (-, +), marginals 0.260 and 0.444, thresholded (-, -).
# The F1 decision: with probabilities p = (0.333, 0.407, 0.223, 0.037) of (++, +-, -+, --)
# at the first x, predicting (+, +) has expected F1 p++ + (2/3)(p+- + p-+) = 0.753 against
# 0.629 for (+, -), 0.445 for (-, +) and 0.037 for (-, -); at the second x the
# probabilities are reversed, (0.037, 0.223, 0.407, 0.333), and (+, +) still wins with
# 0.037 + (2/3) 0.630 = 0.457 against 0.431 for (-, +), 0.248 for (+, -), 0.333 for (-, -).
HAND_X = np.array([[0.7, 0.4], [0.7, 0.4], [-0.7, -0.4], [-0.7, -0.4]])
HAND_Y = np.array([[1, 1], [1, 1], [0, 0], [0, 1]])
HAND_MAP = np.array([[1, 0], [1, 0], [0, 1], [0, 1]])
HAND_MARGINAL = np.array([[1, 1], [1, 1], [0, 0], [0, 0]])
HAND_F1 = np.ones((4, 2), dtype=int)
# the measures of HAND_MARGINAL and HAND_MAP against HAND_Y, counted by hand (an empty
# prediction has precision 1, an empty truth recall 1, both empty F1 and accuracy 1)
HAND_SCORES = {
    "marginal": {
        "hamming_loss": 1 / 8,  # one wrong bit (row 4)
        "subset_accuracy": 3 / 4,
        "example_accuracy": (1 + 1 + 1 + 0) / 4,
        "example_precision": (1 + 1 + 1 + 1) / 4,
        "example_recall": (1 + 1 + 1 + 0) / 4,
        "example_f1": (1 + 1 + 1 + 0) / 4,
        "micro_f1": 2 * 4 / (2 * 4 + 0 + 1),  # TP 4, FP 0, FN 1
        "macro_f1": (1 + 2 * 2 / (2 * 2 + 0 + 1)) / 2,  # label 2: TP 2, FP 0, FN 1
    },
    "map": {
        "hamming_loss": 3 / 8,
        "subset_accuracy": 1 / 4,
        "example_accuracy": (1 / 2 + 1 / 2 + 0 + 1) / 4,
        "example_precision": (1 + 1 + 0 + 1) / 4,
        "example_recall": (1 / 2 + 1 / 2 + 1 + 1) / 4,
        "example_f1": (2 / 3 + 2 / 3 + 0 + 1) / 4,
        "micro_f1": 2 * 3 / (2 * 3 + 1 + 2),  # TP 3, FP 1, FN 2
        "macro_f1": (1 + 2 * 1 / (2 * 1 + 1 + 2)) / 2,  # label 2: TP 1, FP 1, FN 2
    },
    "f1": {  # rows 3 and 4 predict both labels: against no label, and against label 2
        "example_precision": (1 + 1 + 0 + 1 / 2) / 4,
        "example_recall": (1 + 1 + 1 + 1) / 4,
        "example_f1": (1 + 1 + 0 + 2 / 3) / 4,
    },
}


@pytest.fixture(scope="module")
def hand_model():
    """A real fitted CorrLog whose parameters are then set to the hand case's."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    clf = CorrLog(0.0, 1e-2).fit(X, (X > 0).astype(int))
    clf.coef_ = np.eye(2)
    clf.intercept_ = np.zeros(2)
    clf.couplings_ = np.array([[0.0, -0.5], [-0.5, 0.0]])
    return clf


def test_hand_case_decodes_as_worked_out(hand_model):
    np.testing.assert_array_equal(hand_model.decode_labels(HAND_X, "map"), HAND_MAP)
    np.testing.assert_array_equal(hand_model.decode_labels(HAND_X, "marginal"), HAND_MARGINAL)
    np.testing.assert_array_equal(hand_model.decode_labels(HAND_X, "f1"), HAND_F1)
    e = np.exp([0.6, 0.8, 0.2, -1.6])
    p1, p2 = (e[0] + e[1]) / e.sum(), (e[0] + e[2]) / e.sum()
    want = np.array([[p1, p2], [p1, p2], [1 - p1, 1 - p2], [1 - p1, 1 - p2]])
    np.testing.assert_allclose(hand_model.predict_proba(HAND_X), want, rtol=1e-12)
    assert p1 == pytest.approx(0.740, abs=5e-4) and p2 == pytest.approx(0.556, abs=5e-4)


def test_each_row_scores_its_decoder_by_hand(hand_model):
    scores, decoded, infos = ml.decoded_scores(hand_model, HAND_X, HAND_Y)
    np.testing.assert_array_equal(decoded["map"], HAND_MAP)
    np.testing.assert_array_equal(decoded["marginal"], HAND_MARGINAL)
    # two labels form a tree: max-product converges on every row; marginals enumerated
    assert infos["map"]["bp_rows"] == 4 and infos["map"]["bp_nonconverged"] == 0
    assert infos["marginal"]["bp_rows"] == 0
    np.testing.assert_array_equal(decoded["f1"], HAND_F1)
    assert infos["f1"]["bp_rows"] == 0  # enumerated
    extra = {m + ml.MAP_SUFFIX for m in F_TYPE} | {m + ml.MARGINAL_SUFFIX for m in EXAMPLE_F}
    assert set(scores) == set(METRICS) | extra
    want = {m: (HAND_SCORES[ml.DECODERS[m]][m], ml.DECODERS[m]) for m in METRICS}
    want.update({m + ml.MAP_SUFFIX: (HAND_SCORES["map"][m], "map") for m in F_TYPE})
    want.update(
        {m + ml.MARGINAL_SUFFIX: (HAND_SCORES["marginal"][m], "marginal") for m in EXAMPLE_F}
    )
    for metric, (value, decoder) in want.items():
        assert scores[metric][1] == decoder, metric
        assert scores[metric][0] == pytest.approx(value, abs=1e-12), metric


def test_table_rows_hold_the_hand_values(hand_model, tmp_path):
    """Two trials of the hand case (the second with another truth) for CorrLog, and a
    one-prediction method predicting the MAP: every row of the table is the mean (std) over
    the trials of the scores of its decoder; the (MAP) rows are CorrLog's only."""
    Y2 = np.array([[1, 1], [1, 0], [0, 0], [0, 0]])
    # by hand, trial 2: the marginals (1,1), (1,1), (0,0), (0,0) have one wrong bit and
    # micro-F1 TP 3 FP 1 FN 0 -> 6/7; the MAP (1,0), (1,0), (0,1), (0,1) has three wrong
    # bits and micro-F1 TP 2 FP 2 FN 1 -> 4/7
    trial2 = {
        "marginal": multilabel_scores(Y2, HAND_MARGINAL),
        "map": multilabel_scores(Y2, HAND_MAP),
        "f1": multilabel_scores(Y2, HAND_F1),
    }
    # by hand, trial 2 of the F1 decision (both labels everywhere): example F1
    # (1 + 2/3 + 0 + 0) / 4
    assert trial2["f1"]["example_f1"] == pytest.approx((1 + 2 / 3) / 4)
    assert trial2["marginal"]["hamming_loss"] == pytest.approx(1 / 8)
    assert trial2["marginal"]["micro_f1"] == pytest.approx(6 / 7)
    assert trial2["map"]["hamming_loss"] == pytest.approx(3 / 8)
    assert trial2["map"]["micro_f1"] == pytest.approx(4 / 7)
    rows = []
    for t, Yt in enumerate((HAND_Y, Y2)):
        scores, _, _ = ml.decoded_scores(hand_model, HAND_X, Yt)
        for metric, (value, decoder) in scores.items():
            rows.append(ml.record("hand", "all", "corrlog", t, metric, value, 1.0, {"d": decoder}))
        for metric, value in multilabel_scores(Yt, HAND_MAP).items():
            rows.append(ml.record("hand", "all", "cc", t, metric, value, 1.0, {}))
    mlr.write_table(pd.DataFrame(rows), "hand", tmp_path / "multilabel_hand.csv")
    table = pd.read_csv(tmp_path / "multilabel_hand.csv").set_index(["task", "method"])

    def check(name, method, values):
        # the CSV keeps 6 significant digits (float_format "%.6g"): relative error <= 5e-6
        got = table.loc[(name, method)]
        want = np.mean(values), np.std(values, ddof=1)
        assert got["mean"] == pytest.approx(want[0], rel=5e-6, abs=1e-12), (name, method)
        assert got["std"] == pytest.approx(want[1], rel=5e-6, abs=1e-12), (name, method)

    for metric in METRICS:
        dec = ml.DECODERS[metric]
        check(mlr.METRIC_NAMES[metric], "CorrLog", [HAND_SCORES[dec][metric], trial2[dec][metric]])
        cc = [HAND_SCORES["map"][metric], trial2["map"][metric]]
        check(mlr.METRIC_NAMES[metric], "ClassifierChain (LR)", cc)
    for metric in F_TYPE:
        name = mlr.METRIC_NAMES[metric + ml.MAP_SUFFIX]
        check(name, "CorrLog", [HAND_SCORES["map"][metric], trial2["map"][metric]])
        assert (name, "ClassifierChain (LR)") not in table.index
    for metric in EXAMPLE_F:
        name = mlr.METRIC_NAMES[metric + ml.MARGINAL_SUFFIX]
        check(name, "CorrLog", [HAND_SCORES["marginal"][metric], trial2["marginal"][metric]])
        assert (name, "ClassifierChain (LR)") not in table.index
    md = (tmp_path / "multilabel_hand.md").read_text()
    cells = {
        c[0]: c[1:]
        for line in md.splitlines()
        if line.startswith("| ")
        for c in [[x.strip() for x in line.strip().strip("|").split("|")]]
    }
    micro = [8 / 9, 6 / 7]  # CorrLog's thresholded marginals, by hand
    micro_map = [2 / 3, 4 / 7]  # the MAP's, by hand (CorrLog's (MAP) row, and cc's)
    cell = format_cell(np.mean(micro), np.std(micro, ddof=1), 100)
    cell_map = format_cell(np.mean(micro_map), np.std(micro_map, ddof=1), 100)
    assert cells["Micro F1"][0] == f"**{cell}**"
    assert cells["Micro F1"][1].split(" °")[0] == cell_map  # cc: one prediction (the MAP)
    assert cells["Micro F1 (MAP)"] == [f"**{cell_map}**", "–"]


def test_caption_counts_bp_non_convergence_per_decoder():
    def bp_record(t, decoder, n_bad, n_rows):
        params = {"decoder": decoder, "bp_rows": n_rows}
        return ml.record("s", "all", "corrlog", t, "bp_nonconverged", n_bad, 1.0, params)

    records = pd.DataFrame(
        [
            bp_record(0, "map", 3, 100),
            bp_record(0, "marginal", 5, 100),
            bp_record(1, "map", 4, 120),
            bp_record(1, "marginal", 0, 120),
        ]
    )
    text = mlr.decoder_caption(records)
    assert "on 7 of 220 decoded test rows for max-product (MAP)" in text
    assert "and 5 of 220 decoded test rows for sum-product (marginals)" in text
    none = mlr.decoder_caption(records.assign(params=json.dumps({"decoder": "map", "bp_rows": 0})))
    assert "did not converge" not in none and "rows marked (MAP)" in none
    assert "those marked (marginals)" in none


# ---------------------------------------------------------------------------------------
# the experiment glue on the toy
# ---------------------------------------------------------------------------------------


def test_corrlog_scores_each_measure_with_its_decoder(toy):
    rows, preds = ml.fit_method(toy, "toy", "corrlog", CFG, 3)
    est = ml.make_estimator("corrlog", CFG, ml.seed_for(3, "multilabel", "toy", "cv", 0))
    est.fit(toy["X_0"], toy["Y_0"])
    Yt = toy["Yt_0"]
    Y_map, Y_marg, Y_f1 = (est.decode_labels(toy["Xt_0"], d) for d in ("map", "marginal", "f1"))
    np.testing.assert_array_equal(preds["Yp_0"], Y_map)
    np.testing.assert_array_equal(preds["Ypm_0"], Y_marg)
    np.testing.assert_array_equal(preds["Ypf_0"], Y_f1)
    assert not np.array_equal(Y_map, Y_marg)  # the decoders differ on this toy
    want = {
        d: multilabel_scores(Yt, Y)
        for d, Y in zip(("map", "marginal", "f1"), (Y_map, Y_marg, Y_f1))
    }
    label_set = [r for r in rows if r["metric"] in METRICS]
    assert len(label_set) == len(METRICS)
    for r in label_set:
        decoder = json.loads(r["params"])["decoder"]
        assert decoder == ml.DECODERS[r["metric"]]
        assert r["value"] == pytest.approx(want[decoder][r["metric"]])
    extra = {r["metric"]: r for r in rows if r["metric"].endswith(ml.MAP_SUFFIX)}
    assert set(extra) == {m + ml.MAP_SUFFIX for m in F_TYPE}
    for m in F_TYPE:
        assert json.loads(extra[m + ml.MAP_SUFFIX]["params"])["decoder"] == "map"
        assert extra[m + ml.MAP_SUFFIX]["value"] == pytest.approx(want["map"][m])
    bp = [r for r in rows if r["metric"] == "bp_nonconverged"]
    assert sorted(json.loads(r["params"])["decoder"] for r in bp) == ["map", "marginal"]
    rows_bp = {json.loads(r["params"])["decoder"]: json.loads(r["params"])["bp_rows"] for r in bp}
    assert rows_bp == {"map": len(Yt), "marginal": 0}  # two labels: marginals enumerated
    assert all(r["value"] == 0 for r in bp)  # two labels form a tree: BP converges


def test_bp_records_count_what_the_estimator_reports():
    """Six labels with frustrated couplings set by hand on a real fit: the records of
    :func:`decoded_scores` carry the estimator's own non-convergence count, above 0."""
    rng = np.random.default_rng(21)
    X = rng.normal(size=(200, 3))
    Y = (X @ rng.normal(size=(3, 6)) + rng.normal(size=(200, 6)) > 0).astype(int)
    clf = CorrLog(0.0, 1e-2).fit(X, Y)
    A = np.triu(rng.normal(scale=1.5, size=(6, 6)), 1)
    clf.couplings_ = A + A.T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, info = clf.decode_labels(X, "map", return_info=True)
        _, _, infos = ml.decoded_scores(clf, X, Y)
    assert info["bp_nonconverged"] > 0
    assert infos["map"] == info
    assert infos["marginal"]["bp_rows"] == 0  # six labels: enumerated


def test_other_methods_keep_their_one_prediction(toy):
    rows, preds = ml.fit_method(toy, "toy", "cc", CFG, 3)
    label_set = [r for r in rows if r["metric"] in METRICS]
    assert {json.loads(r["params"])["decoder"] for r in label_set} == {"predict"}
    assert not any(r["metric"] == "bp_nonconverged" for r in rows)
    assert not any(r["metric"].endswith(ml.MAP_SUFFIX) for r in rows)
    assert "Ypm_0" not in preds


def test_caption_names_the_decoders(toy, tmp_path):
    rows = []
    for method in ("corrlog", "ilr", "cc"):
        rows += ml.fit_method(toy, "toy", method, CFG, 3)[0]
    records = pd.DataFrame(rows)
    mlr.write_table(records, "toy", tmp_path / "multilabel_toy.csv")
    md = (tmp_path / "multilabel_toy.md").read_text()
    assert "subset accuracy scores the joint MAP label vector (its Bayes decision)" in md
    assert "though neither decoder is their Bayes decision" in md
    assert "Micro F1 (MAP)" in md and "Example F1 (MAP)" in md
    assert "Example F1 (marginals)" in md
    assert "the Bayes decision for example F1" in md
    # ILR: independent labels, the two decoders coincide
    ilr = records[records["method"] == "ilr"].set_index("metric")["value"]
    for m in F_TYPE:
        marginal = ilr[m + ml.MARGINAL_SUFFIX] if m in EXAMPLE_F else ilr[m]
        assert marginal == ilr[m + ml.MAP_SUFFIX]
