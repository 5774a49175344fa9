"""The MGPC family through Snakemake: a bad key stops the dry run, a tiny run writes
its tables, figures and benchmarks."""

import pytest

# ---------------------------------------------------------------- workflow


def _mgpc_workdir(tmp_path, **over):
    import yaml
    from workflow_run import ROOT

    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for block in cfg.values():
        if isinstance(block, dict) and "enabled" in block:
            block["enabled"] = False
    cfg["mgpc"] = {
        "enabled": True,
        "reference": str(ROOT.parent / "shared" / "reference" / "mgpc_defects.csv"),
        "trials": 2,
        "datasets": {"digits": {"tasks": ["1v7"], "representations": ["binarization"]}},
        "methods": ["mla", "mep", "ridge_newton"],
        "sigma_factors": [1.0],
        "length_scale_factors": [1.0],
        "amplitudes": [16.0],
        "lams": [0.01, 0.5],
        "folds": 2,
        "tol": 1e-6,
        **over,
    }
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    return tmp_path


def test_workflow_rejects_unknown_mgpc_key(tmp_path):
    from workflow_run import run

    work = _mgpc_workdir(tmp_path, n_centres=5)
    proc = run(work, "-n", "results/tables/mgpc_errors.csv", check=False)
    assert proc.returncode != 0
    assert "mgpc" in proc.stdout + proc.stderr and "n_centres" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_workflow_tiny_run(tmp_path):
    import pandas as pd
    from workflow_run import run

    work = _mgpc_workdir(tmp_path)
    run(work, "results/tables/mgpc_errors.csv", timeout=300)
    table = pd.read_csv(work / "results/tables/mgpc_errors.csv")
    assert set(table["method"]) == {"MLA", "MEP", "Ridge Newton"}
    assert set(table["metric"]) == {"fn", "fp", "ce", "auc"}
    calib = pd.read_csv(work / "results/tables/mgpc_calibration.csv")
    assert set(calib["method"]) == {"MLA", "MEP", "Ridge Newton"} and len(calib) == 3
    for name in ("mgpc_roc.png", "mgpc_ridge_lambda.png", "mgpc_reliability.png"):
        assert (work / "results/figures" / name).stat().st_size > 0
    assert (work / "results/benchmarks/mgpc_fit/digits_1v7_binarization_mep_0-1.tsv").is_file()
