"""The MGPC experiment and its report: stratified seeded splits, error rates, the
digits tasks, the tables and figures from records, the optional GPy EP peer."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_classification


def _data(n=60, p=4, seed=0):
    X, y = make_classification(n, p, n_informative=3, n_redundant=0, random_state=seed)
    Xt, _ = make_classification(25, p, n_informative=3, n_redundant=0, random_state=seed + 1)
    return X, y, Xt


def test_splits_are_stratified_seeded_and_capped():
    from kclf_workflow.experiments.mgpc import make_splits

    y = np.r_[np.zeros(60, int), np.ones(40, int)]
    a = make_splits(y, 4, 7, "digits/3v8")
    np.testing.assert_array_equal(a, make_splits(y, 4, 7, "digits/3v8"))
    assert not np.array_equal(a, make_splits(y, 4, 7, "digits/1v7"))
    assert not np.array_equal(a[0], a[1])
    assert (a[:, y == 0].sum(1) == 30).all() and (a[:, y == 1].sum(1) == 20).all()
    capped = make_splits(y, 2, 7, "scene/Beach", max_train=20)
    assert (capped[:, y == 0].sum(1) == 12).all() and (capped[:, y == 1].sum(1) == 8).all()


def test_error_rates_by_hand():
    from kclf_workflow.experiments.mgpc import error_rates

    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    p = np.array([1, 0, 1, 1, 0, 1, 1, 0, 0, 0])
    assert error_rates(y, p) == pytest.approx((0.25, 2 / 6, 0.3))


def test_digits_task_and_bad_names():
    from kclf_workflow.experiments.mgpc import digits_task

    images, y = digits_task("3v8")
    d = load_digits()
    assert images.shape == (np.isin(d.target, (3, 8)).sum(), 8, 8)
    assert y.sum() == (d.target == 8).sum()
    for bad in ("3v3", "38", "av8"):
        with pytest.raises(ValueError, match="digits task"):
            digits_task(bad)


def test_experiment_and_report_end_to_end(tmp_path, direct_metrics):
    import pandas as pd

    from kclf_workflow.estimators import gpy_available
    from kclf_workflow.experiments.mgpc import METHODS, _fit, features, prepare, run
    from kclf_workflow.records import read_records, write_records
    from kclf_workflow.reports.mgpc import calibration_report, plot_lambda, plot_roc, write_tables
    from kclf_workflow.seeding import seed_for

    # GPy EP where GPy is installed (its skip: test_gpy_ep_without_gpy_is_skipped_with_a_note)
    ran = {m: name for m, name in METHODS.items() if m != "gpy_ep" or gpy_available()}

    cfg = {
        "sigma_factors": [1.0],
        "length_scale_factors": [1.0],
        "amplitudes": [16.0],
        "lams": [0.01, 0.5],
        "folds": 2,
        "gradient_max_iter": 50,
        "tol": 1e-6,
    }
    data = prepare("digits", "1v7", 3, 2, max_train=60)
    X = features(data, "binarization")
    record_files, curve_files = [], []
    for method in ran:
        rows, curves = run(data, X, method, 3, cfg, "digits", "1v7", "binarization", n_bins=4)
        errors = {"fn", "fp", "ce", "accuracy", "auc"}
        assert errors <= {r["metric"] for r in rows}
        assert sum(r["metric"] in errors for r in rows) == 2 * 5
        # calibration records per trial: 6 scalars and 3 x 4 reliability bins, all finite
        # where defined (bin confidences and frequencies are NaN only for empty bins)
        calib = [r for r in rows if r["metric"] not in errors]
        assert len(calib) == 2 * (6 + 3 * 4)
        for t in range(2):
            got = {r["metric"]: r["value"] for r in calib if r["trial"] == t}
            n_test = int((~data["train"][t]).sum())
            assert got["n_scored"] == n_test
            for score in ("log_loss", "brier", "ece", "ece_mass"):
                assert np.isfinite(got[score]), (method, t, score)
            assert got["brier"] < 0.1, method  # 1 vs 7: every method is nearly perfect
            assert sum(got[f"rel_count_b{b:02d}"] for b in range(4)) == n_test
            # the values: refit with the trial's seed, score by the definitions
            tr = data["train"][t]
            rs = seed_for(3, "mgpc", "digits", "1v7", "binarization", method, t)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est, _ = _fit(method, X[tr], data["y"][tr], cfg, rs)
            proba = np.clip(est.predict_proba(X[~tr]), 0.0, 1.0)
            want = direct_metrics(data["y"][~tr], proba, est.classes_, 4)
            for score, value in want.items():
                assert got[score] == pytest.approx(value, rel=1e-10, abs=1e-12), (method, score)
        folder = tmp_path / "digits" / "1v7" / "binarization"
        folder.mkdir(parents=True, exist_ok=True)
        write_records(rows, folder / f"{method}.csv")
        np.savez(folder / f"{method}.npz", **curves)
        record_files.append(folder / f"{method}.csv")
        curve_files.append(str(folder / f"{method}.npz"))
        if method.startswith("ridge"):
            assert curves["lam_errors"].shape == (2, 2, 3)
        assert curves["score_0"].shape == curves["y_test_0"].shape == ((~data["train"][0]).sum(),)
    recs = read_records(record_files)
    ce = recs[(recs.metric == "ce") & (recs.method == "MLA")].value
    assert ce.mean() < 0.05
    ref = tmp_path / "ref.csv"
    ref.write_text("method,fn_pct,fp_pct,ce_pct\nmgpc_ep,8.5,10,9.5\n")
    summary = write_tables(record_files, ref, str(tmp_path / "mgpc_errors"))
    assert set(summary["metric"]) == {"fn", "fp", "ce", "auc"}
    md = (tmp_path / "mgpc_errors.md").read_text()
    assert "digits-binarization 1v7: MEP" in md and "MGPC MEP" in md
    plot_roc(curve_files, tmp_path / "roc.png")
    plot_lambda(curve_files, tmp_path / "lam.png")
    assert (tmp_path / "roc.png").stat().st_size > 0 and (tmp_path / "lam.png").stat().st_size > 0
    calibration_report(
        record_files, tmp_path / "mgpc_calibration.csv", tmp_path / "mgpc_reliability.png"
    )
    table = pd.read_csv(tmp_path / "mgpc_calibration.csv")
    keys = list(zip(table["dataset"], table["task"], table["method"]))
    assert sorted(keys) == sorted(("digits-binarization", "1v7", m) for m in ran.values())
    assert (table["n_trials"] == 2).all()
    all_recs = read_records(record_files)
    for score in ("log_loss", "brier", "ece", "ece_mass"):
        # the mean over trials of the records (checked against the definitions above);
        # the CSV holds 6 significant digits
        want = all_recs[all_recs["metric"] == score].groupby("method")["value"].mean()
        got = table.set_index("method")[f"{score}_mean"]
        np.testing.assert_allclose(got[want.index], want, rtol=5e-6, err_msg=score)
    md = (tmp_path / "mgpc_calibration.md").read_text()
    assert md.startswith("MGPC experiment: quality of the test-set probabilities")
    assert md.count("| digits-binarization ") == len(ran)
    assert (tmp_path / "mgpc_reliability.png").stat().st_size > 0
    with pytest.raises(ValueError, match="_calibration.csv"):
        calibration_report(record_files, tmp_path / "mgpc.csv")


def test_gpy_ep_without_gpy_is_skipped_with_a_note(tmp_path, monkeypatch):
    from kclf_workflow import estimators
    from kclf_workflow.experiments import mgpc as experiment
    from kclf_workflow.records import write_records
    from kclf_workflow.reports.mgpc import plot_roc, skipped_methods, write_tables

    monkeypatch.setattr(estimators, "gpy_available", lambda: False)
    data = experiment.prepare("digits", "1v7", 3, 2, max_train=40)
    X = experiment.features(data, "binarization")
    cfg = {"sigma_factors": [1.0], "length_scale_factors": [1.0], "amplitudes": [16.0]}
    folder = tmp_path / "digits" / "1v7" / "binarization"
    folder.mkdir(parents=True)
    files = []
    for method in ("mep", "mla", "gpy_ep"):  # two that ran: their t-test reads the values
        rows, curves = experiment.run(data, X, method, 3, cfg, "digits", "1v7", "binarization")
        assert (rows == []) == (method == "gpy_ep")
        write_records(rows, folder / f"{method}_0-1.csv")
        np.savez(folder / f"{method}_0-1.npz", **curves)
        files.append(folder / f"{method}_0-1")
    curves = [f"{f}.npz" for f in files]
    skipped = skipped_methods(curves)
    assert skipped == {"GPy EP": estimators.GPY_MISSING}
    write_tables([f"{f}.csv" for f in files], None, str(tmp_path / "mgpc_errors"), skipped=skipped)
    md = (tmp_path / "mgpc_errors.md").read_text()
    assert "Not run: GPy EP: GPy is not installed" in md
    assert "1v7: MEP" in md and "1v7: GPy EP" not in md  # rows "<dataset> <task>: <method>"
    plot_roc(curves, tmp_path / "roc.png")  # the skipped method's file is no curve
    assert (tmp_path / "roc.png").stat().st_size > 0


def test_gpy_ep_classifier_when_gpy_is_installed():
    pytest.importorskip("GPy")
    from kclf_workflow.estimators import GPyEPClassifier

    X, y, Xt = _data(40)
    state = np.random.get_state()  # noqa: NPY002
    a = GPyEPClassifier(random_state=1).fit(X, y)
    assert all(np.array_equal(u, v) for u, v in zip(state, np.random.get_state()))  # noqa: NPY002
    b = GPyEPClassifier(random_state=1).fit(X, y)
    P = a.predict_proba(Xt)
    np.testing.assert_array_equal(P, b.predict_proba(Xt))  # seeded: the same fit
    np.testing.assert_allclose(P.sum(1), 1.0)
    assert np.mean(a.predict(X) == y) > 0.8
    np.testing.assert_array_equal(a.predict(Xt), a.classes_[(a.decision_function(Xt) > 0) * 1])


def test_a_list_of_feature_maps_from_the_config_is_searched_by_the_evidence():
    # the schema lets mgpc.n_centers be a list (e.g. [20, null]); the record names the
    # map the evidence chose, and the model is the one that map gives alone
    from kclf_workflow.experiments.mgpc import _fit, features, prepare

    cfg = {"sigma_factors": [1.0], "length_scale_factors": [1.0], "amplitudes": [16.0]}
    data = prepare("digits", "1v7", 3, 2, max_train=60)
    X, y = features(data, "binarization"), data["y"]
    tr = data["train"][0]
    est, params = _fit("mep", X[tr], y[tr], {**cfg, "n_centers": [5, None]}, 0)
    alone = {m: _fit("mep", X[tr], y[tr], {**cfg, "n_centers": m}, 0) for m in (5, None)}
    best = max(alone, key=lambda m: alone[m][1]["log_marginal_likelihood"])
    assert params["n_centers"] == best
    assert params["log_marginal_likelihood"] == pytest.approx(
        alone[best][1]["log_marginal_likelihood"], abs=1e-6
    )
