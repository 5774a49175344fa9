"""kclf.metrics against hand-computed values and closed-form calibration cases."""

import math

import numpy as np
import pytest
from sklearn.calibration import calibration_curve

from kclf.metrics import (
    EPS,
    brier_score,
    clip_probabilities,
    expected_calibration_error,
    log_loss,
    probability_metrics,
    reliability_curve,
)
from kclf_workflow.records import calibration_records

# --- hand-computed values on tiny inputs -------------------------------------------------

Y_BIN = np.array([-1, 1, 1, -1])
P_BIN = np.array([0.2, 0.6, 0.9, 0.5])  # P(y = +1)


def test_binary_log_loss_by_hand():
    expected = -(math.log(0.8) + math.log(0.6) + math.log(0.9) + math.log(0.5)) / 4
    assert log_loss(Y_BIN, P_BIN) == pytest.approx(expected, rel=1e-12)
    two_columns = np.column_stack([1 - P_BIN, P_BIN])
    assert log_loss(Y_BIN, two_columns) == pytest.approx(expected, rel=1e-12)


def test_binary_brier_by_hand():
    expected = (0.2**2 + 0.4**2 + 0.1**2 + 0.5**2) / 4
    assert brier_score(Y_BIN, P_BIN) == pytest.approx(expected, rel=1e-12)


def test_binary_ece_by_hand():
    # 2 equal-width bins [0, .5], (.5, 1]: {0.2, 0.5} -> conf .35, pos 0; {0.6, 0.9} -> .75, 1
    expected = 0.5 * abs(0 - 0.35) + 0.5 * abs(1 - 0.75)
    assert expected_calibration_error(Y_BIN, P_BIN, n_bins=2) == pytest.approx(expected)
    curve = reliability_curve(Y_BIN, P_BIN, n_bins=2)
    np.testing.assert_array_equal(curve.count, [2, 2])
    np.testing.assert_allclose(curve.confidence, [0.35, 0.75])
    np.testing.assert_allclose(curve.frequency, [0.0, 1.0])
    np.testing.assert_allclose(curve.edges, [0, 0.5, 1])


def test_equal_mass_ece_by_hand():
    # quantile edges of {0.2, 0.5, 0.6, 0.9} with 2 bins: [0.2, 0.55, 0.9]
    # bins {0.2, 0.5} and {0.6, 0.9}: same as above here; with 4 bins one point per bin
    expected4 = (0.2 + 0.5 + 0.4 + 0.1) / 4  # |y - p| per point
    assert expected_calibration_error(Y_BIN, P_BIN, n_bins=4, strategy="quantile") == pytest.approx(
        expected4
    )


def test_multiclass_by_hand():
    y = np.array(["a", "c", "b"])
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.5, 0.4, 0.1]])
    assert log_loss(y, p) == pytest.approx(-(math.log(0.7) + math.log(0.6) + math.log(0.4)) / 3)
    brier = (
        (0.3**2 + 0.2**2 + 0.1**2) + (0.1**2 + 0.3**2 + 0.4**2) + (0.5**2 + 0.6**2 + 0.1**2)
    ) / 3
    assert brier_score(y, p) == pytest.approx(brier)
    # top-label confidences .7 (right), .6 (right), .5 (wrong); one bin -> |2/3 - 0.6|
    assert expected_calibration_error(y, p, n_bins=1) == pytest.approx(abs(2 / 3 - 0.6))
    # 10 bins: .5 in bin 4, .6 in bin 5, .7 in bin 6 ((.6, .7]) -> (.5 + .4 + .3) / 3
    assert expected_calibration_error(y, p) == pytest.approx((0.5 + 0.4 + 0.3) / 3)


def test_multiclass_column_order_follows_labels():
    y = np.array([2, 0])
    p = np.array([[0.1, 0.9], [0.8, 0.2]])  # columns: label 2, label 0
    with pytest.raises(ValueError, match="binary proba needs exactly two labels|labels"):
        log_loss(y, p, labels=[2, 0, 1])
    p3 = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]])  # columns: 2, 0, 1
    assert log_loss(y, p3, labels=[2, 0, 1]) == pytest.approx(-(math.log(0.6) + math.log(0.5)) / 2)


def test_multilabel_is_mean_over_labels():
    y = np.array([[1, 0], [0, 0], [1, 1]])
    p = np.array([[0.9, 0.2], [0.3, 0.1], [0.6, 0.7]])
    per_label = [log_loss(y[:, j], p[:, j], labels=[0, 1]) for j in range(2)]
    assert log_loss(y, p) == pytest.approx(np.mean(per_label))
    ll0 = -(math.log(0.9) + math.log(0.7) + math.log(0.6)) / 3
    assert per_label[0] == pytest.approx(ll0)
    b = [np.mean((p[:, j] - y[:, j]) ** 2) for j in range(2)]
    assert brier_score(y, p) == pytest.approx(np.mean(b))
    curves = reliability_curve(y, p, n_bins=2)
    assert len(curves) == 2 and curves[1].count.tolist() == [2, 1]


def test_binary_curve_matches_sklearn_calibration_curve():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=500)
    y = (rng.uniform(size=500) < p).astype(int)
    for strategy in ("uniform", "quantile"):
        curve = reliability_curve(y, p, n_bins=7, strategy=strategy)
        prob_true, prob_pred = calibration_curve(y, p, n_bins=7, strategy=strategy)
        filled = curve.count > 0
        np.testing.assert_allclose(curve.frequency[filled], prob_true, rtol=1e-12)
        np.testing.assert_allclose(curve.confidence[filled], prob_pred, rtol=1e-12)


# --- clipping ----------------------------------------------------------------------------


def test_zero_and_one_probabilities_are_clipped_and_counted():
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([0.0, 1.0, 0.0, 0.3, 0.8])  # third: a certain, wrong prediction
    loss, n_clipped = log_loss(y, p, return_n_clipped=True)
    assert n_clipped == 3
    expected = -(2 * math.log(1 - EPS) + math.log(EPS) + math.log(0.7) + math.log(0.8)) / 5
    assert loss == pytest.approx(expected, rel=1e-9)
    assert math.isfinite(loss)
    loss6 = log_loss(y, p, eps=1e-6)
    assert loss6 == pytest.approx(
        -(2 * math.log(1 - 1e-6) + math.log(1e-6) + math.log(0.7) + math.log(0.8)) / 5
    )


def test_multiclass_clipping_counts_rows_and_renormalises():
    p = np.array([[0.0, 0.0, 1.0], [0.2, 0.3, 0.5], [0.0, 0.5, 0.5]])
    clipped, n = clip_probabilities(p, eps=1e-3)
    assert n == 2
    np.testing.assert_allclose(clipped.sum(axis=1), 1.0)
    np.testing.assert_allclose(clipped[0], np.array([1e-3, 1e-3, 1.0]) / 1.002)
    np.testing.assert_array_equal(clipped[1], p[1])
    metrics = probability_metrics([0, 1, 2], p, eps=1e-3)
    assert metrics["n_clipped"] == 2
    expected = -(math.log(1e-3 / 1.002) + math.log(0.3) + math.log(0.5 / 1.001)) / 3
    assert metrics["log_loss"] == pytest.approx(expected)


@pytest.mark.parametrize("eps", [0, -1e-3, 0.5, 2])
def test_bad_eps_is_rejected(eps):
    with pytest.raises(ValueError, match="eps"):
        log_loss([0, 1], [0.2, 0.8], eps=eps)


@pytest.mark.parametrize(
    "y, p, match",
    [
        ([0, 1], [0.2, 1.3], r"\[0, 1\]"),
        ([0, 1], [0.2, np.nan], "NaN"),
        ([0, 1, 1], [0.2, 0.5], "numbers of samples"),
        ([0, 1, 2], [[0.2, 0.5, 0.5]] * 3, "sum to 1"),
        ([1, 1], [0.2, 0.5], "labels="),
        ([0, 1, 2], [[0.2, 0.3, 0.1, 0.4]] * 3, "columns"),
        ([[0, 2], [1, 0]], [[0.2, 0.3], [0.1, 0.4]], "indicator"),
    ],
)
def test_bad_input_is_rejected_with_reason(y, p, match):
    with pytest.raises(ValueError, match=match):
        probability_metrics(y, p)


# --- calibrated vs distorted predictors --------------------------------------------------


def _ece_noise_bound(p, n_bins, z=4.0):
    """z-sigma bound on the ECE of a calibrated predictor: sum_b w_b z sqrt(var_b / n_b)."""
    ids = np.searchsorted(np.linspace(0, 1, n_bins + 1)[1:-1], p)
    n = len(p)
    bound = 0.0
    for b in range(n_bins):
        pb = p[ids == b]
        if len(pb):
            bound += len(pb) / n * z * math.sqrt(np.mean(pb * (1 - pb)) / len(pb))
    return bound


def test_calibrated_predictor_has_ece_within_binomial_error():
    rng = np.random.default_rng(42)
    n = 20_000
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)  # P(y = 1 | p) = p exactly
    ece = expected_calibration_error(y, p, n_bins=10)
    bound = _ece_noise_bound(p, 10)
    assert bound < 0.05  # small against the 1/6 of the distorted predictor below
    assert ece < bound


def test_distorted_predictor_has_its_closed_form_ece():
    # Report q = p^2 when P(y = 1) = p = sqrt(q): sqrt(q) >= q in every bin, so the ECE is
    # E[sqrt(q) - q] = E[p - p^2] = 1/2 - 1/3 = 1/6 for p ~ U(0, 1), whatever the bins.
    rng = np.random.default_rng(7)
    n = 20_000
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(int)
    q = p**2
    ece = expected_calibration_error(y, q, n_bins=10)
    noise = _ece_noise_bound(q, 10) + 4 * math.sqrt(1 / 180 / n)  # Var(p - p^2) = 1/180
    assert abs(ece - 1 / 6) < noise
    assert ece > 10 * expected_calibration_error(y, p, n_bins=10)


def test_calibrated_multiclass_predictor_has_small_top_label_ece():
    rng = np.random.default_rng(3)
    n, k = 20_000, 4
    p = rng.dirichlet(np.ones(k), size=n)
    y = np.array([rng.choice(k, p=row) for row in p[:2000]])
    top = p[:2000].max(axis=1)
    ece = expected_calibration_error(y, p[:2000], labels=np.arange(k), n_bins=5)
    assert ece < _ece_noise_bound(top, 5)
    sharpened = p[:2000] ** 3 / (p[:2000] ** 3).sum(axis=1, keepdims=True)  # overconfident
    assert expected_calibration_error(y, sharpened, labels=np.arange(k), n_bins=5) > 0.1


# --- records -----------------------------------------------------------------------------


def test_calibration_records_rows():
    rows = calibration_records(
        Y_BIN, P_BIN, dataset="toy", task="t", method="m", trial=3, n_bins=2, params={"c": 1}
    )
    values = {r["metric"]: r["value"] for r in rows}
    assert values["log_loss"] == pytest.approx(log_loss(Y_BIN, P_BIN))
    assert values["brier"] == pytest.approx(brier_score(Y_BIN, P_BIN))
    assert values["ece"] == pytest.approx(expected_calibration_error(Y_BIN, P_BIN, n_bins=2))
    assert values["n_clipped"] == 0 and values["n_scored"] == 4
    assert values["rel_count_b00"] == 2 and values["rel_conf_b01"] == pytest.approx(0.75)
    assert values["rel_pos_b00"] == 0.0
    assert {r["trial"] for r in rows} == {3} and {r["task"] for r in rows} == {"t"}
    assert rows[0]["params"] == '{"c": 1}'


def test_multilabel_records_one_task_per_label():
    y = np.array([[1, 0], [0, 0], [1, 1]])
    p = np.array([[0.9, 0.2], [0.3, 0.1], [0.6, 0.7]])
    rows = calibration_records(y, p, dataset="s", task=["Beach", "Urban"], method="m", trial=0)
    assert {r["task"] for r in rows} == {"Beach", "Urban"}
    urban = {r["metric"]: r["value"] for r in rows if r["task"] == "Urban"}
    assert urban["log_loss"] == pytest.approx(log_loss(y[:, 1], p[:, 1], labels=[0, 1]))
    with pytest.raises(ValueError, match="2 task names"):
        calibration_records(y, p, dataset="s", task="one", method="m", trial=0)
