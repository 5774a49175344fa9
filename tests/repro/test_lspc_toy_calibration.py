"""The LSPC toy's probability quality: probability metrics per method on the test sets, LSPC''s
minimal repair, and the report's calibration table, reliability figure and main table."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from kclf.lspc import LSPC
from kclf.lspc._solver import round_outputs
from kclf_workflow.experiments.lspc_toy import METHODS, calibration_proba, fit_method, make_samples
from kclf_workflow.methods import spec
from kclf_workflow.records import write_records
from kclf_workflow.reports.lspc_toy import write_report

CALIBRATION = {"log_loss", "brier", "ece", "ece_mass", "n_clipped", "n_scored", "n_repaired"}
NAMES = list(METHODS.values())
N_TEST = 25  # per class


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    """Every method on two tiny trials, written as the fit rule writes them."""
    out = tmp_path_factory.mktemp("toy")
    samples = make_samples(5, 2, n_train_per_class=30, n_test_per_class=N_TEST)
    records, curves = [], []
    for method in METHODS:
        rows, c = fit_method(
            samples, method, 5, cv=2, sigmas=[0.3, 1.0], lams=[1e-3, 0.1], n_bins=5
        )
        write_records(rows, out / f"{method}.csv")
        np.savez(out / f"{method}_curves.npz", **c)
        records.append(str(out / f"{method}.csv"))
        curves.append(str(out / f"{method}_curves.npz"))
    return out, records, curves


def test_every_method_has_finite_calibration_records(toy_run):
    out, records, _ = toy_run
    df = pd.concat(pd.read_csv(f) for f in records)
    for name in NAMES:
        for t in range(2):
            got = df[(df["method"] == name) & (df["trial"] == t)].set_index("metric")["value"]
            assert CALIBRATION <= set(got.index), (name, t)
            assert np.all(np.isfinite(got[list(CALIBRATION)])), (name, t)
            assert got["n_scored"] == 2 * N_TEST
            assert 0 <= got["brier"] <= 1 and 0 <= got["ece"] <= 1 and got["log_loss"] > 0
            counts = got[[f"rel_count_b{b:02d}" for b in range(5)]]
            assert counts.sum() == 2 * N_TEST
    repaired = df[df["metric"] == "n_repaired"].groupby("method")["value"].sum()
    assert repaired["LSPC-new"] == 0 and repaired["LSPC"] == 0


def test_calibration_records_equal_a_direct_computation(toy_run, direct_metrics):
    """The recorded metrics of every method and trial against the definitions, on the
    probabilities of an LSPC refitted with the recorded (sigma, lambda) (LSPC' scored after
    LSPC-new's rounding, i.e. as LSPC-new with its parameters)."""
    import json

    out, records, _ = toy_run
    df = pd.concat(pd.read_csv(f) for f in records)
    samples = make_samples(5, 2, n_train_per_class=30, n_test_per_class=N_TEST)
    for key, name in METHODS.items():
        rounding = spec("lspc_toy", key).options["rounding"]
        for t in range(2):
            mine = df[(df["method"] == name) & (df["trial"] == t)]
            got = mine.set_index("metric")["value"]
            params = json.loads(mine["params"].iloc[0])
            model = LSPC(
                sigma=params["sigma"],
                lam=params["lam"],
                rounding="outputs" if rounding == "none" else rounding,
            ).fit(samples[f"X_{t}"], samples[f"y_{t}"])
            proba = model.predict_proba(samples[f"Xt_{t}"])
            want = direct_metrics(samples[f"yt_{t}"], proba, model.classes_, 5)
            for score, value in want.items():
                # the records were read back from CSV, written with 10 significant digits
                assert got[score] == pytest.approx(value, rel=5e-10, abs=1e-12), (name, t, score)


def test_lspc_prime_is_scored_after_lspc_new_rounding():
    """The repair is LSPC-new's rounding (clip at 0, renormalise, uniform where all
    <= 0) of LSPC''s raw outputs; rows it changes are counted."""
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(-1, 0.5, 20), rng.normal(1, 0.5, 20)][:, None]
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    Xt = np.linspace(-6, 6, 61)[:, None]  # far outside the data: negative raw outputs
    raw = LSPC(sigma=0.3, lam=1e-4, rounding="none").fit(X, y)
    model = SimpleNamespace(rounding="none", best_estimator_=raw, predict_proba=raw.predict_proba)
    P, n_repaired = calibration_proba(model, Xt)
    F = raw._raw_outputs(Xt)
    np.testing.assert_allclose(P, round_outputs(F, "outputs"))
    assert np.all(P >= 0) and np.allclose(P.sum(axis=1), 1)
    unrounded = raw.predict_proba(Xt)
    bad = (unrounded < -1e-12).any(axis=1) | (unrounded > 1 + 1e-12).any(axis=1)
    assert bad.any(), "the example must need repairs"
    assert n_repaired == np.count_nonzero(np.abs(P - unrounded).max(axis=1) > 1e-12)
    assert n_repaired >= bad.sum()
    new = LSPC(sigma=0.3, lam=1e-4, rounding="outputs").fit(X, y)
    np.testing.assert_allclose(P, new.predict_proba(Xt))  # same model, LSPC-new's rounding


def test_report_writes_calibration_companions_and_keeps_posterior_distances(toy_run):
    out, records, curves = toy_run
    tables, figures = out / "tables", out / "figures"
    target = SimpleNamespace(
        csv=str(tables / "lspc_toy.csv"),
        posterior=str(figures / "lspc_toy_posterior.png"),
        alpha=str(figures / "lspc_toy_alpha.png"),
        reliability=str(figures / "lspc_toy_reliability.png"),
    )
    write_report(records, curves, target)
    cal = pd.read_csv(tables / "lspc_toy_calibration.csv")
    assert sorted(cal["method"]) == sorted(NAMES)  # one row per method
    assert (cal["n_trials"] == 2).all() and (cal["n_scored"] == 2 * 2 * N_TEST).all()
    recs = pd.concat(pd.read_csv(f) for f in records)
    for c in ("log_loss", "brier", "ece", "ece_mass"):
        # the mean over trials of the records (checked against the definitions above);
        # the CSV holds 6 significant digits
        want = recs[recs["metric"] == c].groupby("method")["value"].mean()
        got = cal.set_index("method")[f"{c}_mean"]
        np.testing.assert_allclose(got[want.index], want, rtol=5e-6, err_msg=c)
    md = (tables / "lspc_toy_calibration.md").read_text()
    assert "clipped-normalised" in md and all(n in md for n in NAMES)
    assert "test predictions were repaired" in md and "CV chose the same" in md
    assert (figures / "lspc_toy_reliability.png").stat().st_size > 0
    # the main table keeps L1 and KL to the true posterior for every method
    main = pd.read_csv(tables / "lspc_toy.csv")
    for metric in ("l1_posterior", "kl_posterior"):
        rows = main[main["metric"] == metric]
        assert sorted(rows["method"]) == sorted(NAMES), metric
        assert np.isfinite(rows["mean"]).all() and (rows["mean"] >= 0).all()
    text = (tables / "lspc_toy.md").read_text()
    assert "L1 to true posterior" in text and "KL to true posterior" in text


def test_lspc_new_variant_is_searched_recorded_and_captioned(tmp_path):
    """``lspc_toy.lspc_new``: LSPC-new's search runs the class-wise basis (its accuracy
    equals LSPCCV(basis="classwise") on the same folds), the records name it, the
    table's caption says it ran instead of the paper's method."""
    import json

    from kclf import LSPCCV
    from kclf_workflow.seeding import seed_for

    samples = make_samples(5, 1, n_train_per_class=30, n_test_per_class=N_TEST)
    variant = {"basis": "classwise", "class_weight": "balanced"}
    grid = {"sigmas": [0.3, 1.0], "lams": [1e-3, 0.1]}
    rows, curves = fit_method(samples, "lspc_new", 5, cv=2, n_bins=5, variant=variant, **grid)
    ref = LSPCCV(cv=2, random_state=seed_for(5, "lspc_toy", "cv", 0), **grid, **variant)
    ref.fit(samples["X_0"], samples["y_0"])
    acc = [r for r in rows if r["metric"] == "accuracy"][0]
    assert acc["value"] == np.mean(ref.predict(samples["Xt_0"]) == samples["yt_0"])
    assert json.loads(acc["params"]) == {"sigma": ref.sigma_, "lam": ref.lam_, **variant}
    assert curves["alpha1"].shape == curves["x_sorted"].shape
    write_records(rows, tmp_path / "lspc_new.csv")
    np.savez(tmp_path / "lspc_new_0-0_curves.npz", **curves)
    out = SimpleNamespace(
        **{k: tmp_path / f"t.{k}" for k in ("csv", "md", "tex")},
        posterior=tmp_path / "p.png",
        alpha=tmp_path / "a.png",
        reliability=tmp_path / "r.png",
    )
    curve_file = str(tmp_path / "lspc_new_0-0_curves.npz")
    write_report([str(tmp_path / "lspc_new.csv")], [curve_file], out)
    assert "LSPC-new ran with basis=classwise, class_weight=balanced" in out.md.read_text()
