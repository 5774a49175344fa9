"""The multilabel family of the workflow on a tiny toy config: tables, figure, and scene
left out (with a printed note) when the mirror lacks MULAN scene."""

import pandas as pd
import pytest
import yaml
from workflow_run import ROOT, run  # noqa: E402


def _workdir(tmp_path, mirror):
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for block in cfg.values():
        if isinstance(block, dict) and "enabled" in block:
            block["enabled"] = False
    cfg["mirror"] = str(mirror)
    cfg["multilabel"] = {
        "enabled": True,
        "datasets": ["toy", "scene"],
        "methods": ["corrlog", "ilr", "cc"],
        "folds": 2,
        "rho1_grid": [0.0],
        "rho2_grid": [1e-2, 1e-3],
        "toy": {"trials": 2, "n_train": 120, "n_test": 300},
    }
    work = tmp_path / "work"
    work.mkdir()
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    return work


@pytest.mark.slow
def test_toy_tables_and_figure_without_scene_mirror(tmp_path):
    work = _workdir(tmp_path, tmp_path / "no-mirror")
    proc = run(work, timeout=600)
    assert "MULAN scene left out" in proc.stdout + proc.stderr
    for name in ("csv", "md", "tex", "calibration.csv", "calibration.md", "time.csv", "time.md"):
        sep = "." if name in ("csv", "md", "tex") else "_"
        assert (work / "results" / "tables" / f"multilabel_toy{sep}{name}").is_file()
    assert (work / "results" / "figures" / "multilabel_toy_reliability.png").stat().st_size > 0
    cal = pd.read_csv(work / "results" / "tables" / "multilabel_toy_calibration.csv")
    assert sorted(cal["method"]) == ["ClassifierChain (LR)", "CorrLog", "ILR"]
    assert cal["log_loss_mean"].notna().all() and (cal["n_trials"] == 2).all()
    assert not (work / "results" / "tables" / "multilabel_scene.csv").exists()
    assert (work / "results" / "figures" / "corrlog_toy.png").stat().st_size > 10_000
    table = pd.read_csv(work / "results" / "tables" / "multilabel_toy.csv")
    assert set(table["method"]) == {"CorrLog", "ILR", "ClassifierChain (LR)"}
    subset = table[table["task"] == "Subset accuracy"].set_index("method")["mean"]
    assert subset["CorrLog"] > subset["ILR"]
    records = pd.read_csv(work / "results" / "records" / "multilabel" / "toy" / "corrlog_0-1.csv")
    assert sorted(records["trial"].unique()) == [0, 1]
