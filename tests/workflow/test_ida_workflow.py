"""The IDA family of the workflow on a tiny config: tables (error, time, calibration) and
figures come out; the benchmarks.mat download is planned with the hash from the config;
typos are rejected."""

import pandas as pd
import pytest
import yaml
from workflow_run import ROOT, run  # noqa: E402


def _workdir(tmp_path, **ida):
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for block in cfg.values():
        if isinstance(block, dict) and "enabled" in block:
            block["enabled"] = False
    cfg["ida"] = {
        "enabled": True,
        "datasets": ["twonorm"],
        "generate": ["twonorm"],
        "methods": ["maplp", "svm"],
        "realisations": 3,
        "n_select": 2,
        "folds": 2,
        "sigma_factors": [0.5, 1.0],
        "svm_C": [1.0, 10.0],
        "lams": [0.1],
        "reference_error": str(ROOT.parent / "shared" / "reference" / "maplp_ida_error.csv"),
        "reference_time": str(ROOT.parent / "shared" / "reference" / "maplp_ida_time.csv"),
        **ida,
    }
    work = tmp_path / "work"
    work.mkdir()
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    return work


@pytest.mark.slow
def test_tiny_ida_run_writes_tables_and_figure(tmp_path):
    work = _workdir(tmp_path)
    run(work, "results/tables/ida_error.csv", timeout=600)
    table = pd.read_csv(work / "results/tables/ida_error.csv")
    assert set(table["method"]) == {"MAPLP", "SVM"}
    assert set(table["dataset"]) == {"twonorm"}
    assert (table["n"] == 3).all() and table["mean"].between(0, 20).all()
    md = (work / "results/tables/ida_error.md").read_text()
    assert "twonorm: Breiman's generator; seeded stratified realisations" in md
    if (ROOT.parent / "shared" / "reference").is_dir():
        assert "2.5 ± 0.2" in md  # the paper's MAPLP on twonorm
    assert (work / "results/tables/ida_time.md").is_file()
    assert (work / "results/figures/ida_error.png").stat().st_size > 0
    calib = pd.read_csv(work / "results/tables/ida_calibration.csv")
    assert sorted(zip(calib["dataset"], calib["method"])) == [
        ("twonorm", "MAPLP"),
        ("twonorm", "SVM"),
    ]
    assert "surrogate" in (work / "results/tables/ida_calibration.md").read_text()
    assert (work / "results/figures/ida_reliability.png").stat().st_size > 0
    for method in ("maplp", "svm"):  # the CV selection, then the fits of chunk 0-2
        assert (work / f"results/benchmarks/ida_select/twonorm_{method}.tsv").is_file()
        assert (work / f"results/benchmarks/ida_fit/twonorm_{method}_0-2.tsv").is_file()


@pytest.mark.slow
def test_benchmarks_mat_download_is_planned_and_typos_rejected(tmp_path):
    work = _workdir(
        tmp_path, datasets=["heart", "diabetis"], benchmarks_mat={"use": True, "sha256": "ab" * 32}
    )
    proc = run(work, "-n", "results/tables/ida_error.csv")
    out = proc.stdout
    assert "download_ida_benchmarks_mat" in out and "resources/ida/benchmarks.mat" in out
    cfg = yaml.safe_load((work / "config.yaml").read_text())
    cfg["ida"]["sigma_factor"] = [1.0]
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = run(work, "-n", "results/tables/ida_error.csv", check=False)
    assert proc.returncode != 0
    assert "key 'ida'" in proc.stdout + proc.stderr
