"""The benchmark family end to end on a tiny config: the per-fold table and the statistics
come out, a set or two peers added to a finished run plan only their own jobs (the peers
then run through fit and report), one set rerun from a clean folder gives its rows byte
for byte (the seconds apart), and bad config is refused."""

import io
import re

import numpy as np
import pandas as pd
import pytest
import yaml
from workflow_run import ROOT, dry_run, run

MIRROR = ROOT.parent / "shared" / "data"
METHODS = ["LSPC-new", "KLR", "MGPC-EP", "SVC", "LR"]


def _config(**benchmark):
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for block in cfg.values():
        if isinstance(block, dict) and "enabled" in block:
            block["enabled"] = False
    cfg["mirror"] = str(MIRROR) if MIRROR.is_dir() else None
    cfg["benchmark"] = {
        "enabled": True,
        "datasets": ["iris", "sonar", "mine"],
        "methods": METHODS,
        "folds": 3,
        "folds_per_job": 2,
        "grids": {"SVC": {"C": [1.0, 10.0], "sigma_factors": [0.5, 1.0]}, "LR": {"C": [1.0]}},
        **benchmark,
    }
    return cfg


def _workdir(path, cfg):
    path.mkdir(parents=True)
    rng = np.random.default_rng(0)
    y = np.repeat(["no", "yes"], 40)
    frame = pd.DataFrame({"f1": rng.normal(size=80) + (y == "yes"), "f2": rng.normal(size=80)})
    frame["label"] = y
    frame.to_csv(path / "mine.csv", index=False)
    cfg["datasets"] = {"mine": {"format": "csv", "path": "mine.csv", "label": "label"}}
    (path / "config.yaml").write_text(yaml.safe_dump(cfg))
    return path


def _without_seconds(csv_text):
    return [line.rsplit(",", 1)[0] for line in csv_text.splitlines()]


@pytest.mark.slow
def test_benchmark_tables_added_set_and_byte_identical_rerun(tmp_path):
    work = _workdir(tmp_path / "run", _config())
    run(work, "results/tables/benchmark.csv", timeout=900)
    text = (work / "results/tables/benchmark.csv").read_text()
    table = pd.read_csv(io.StringIO(text))
    assert list(table.columns) == [
        "dataset", "method", "fold", "error", "auc", "log_loss", "brier", "ece", "n_clipped",
        "seconds",
    ]  # fmt: skip
    # MGPC-EP is binary only: iris has four methods, sonar and the user's csv five
    assert len(table) == 3 * (4 + 5 + 5)
    assert set(table["dataset"]) == {"iris", "sonar", "mine"}
    assert table["error"].between(0, 100).all() and table["auc"].between(50, 100).all()
    assert set(table.loc[table["dataset"] == "iris", "method"]) == {"LSPC-new", "KLR", "SVC", "LR"}
    ranks = pd.read_csv(work / "results/tables/benchmark_ranks.csv")
    assert {"all", "binary"} <= set(ranks["group"])  # one multi-class set: no such group
    assert set(ranks.loc[ranks["group"] == "binary", "method"]) == set(METHODS)
    pairs = (work / "results/tables/benchmark_pairs.md").read_text()
    assert "LSPC-new vs KLR, AUC (%), all (3 sets, both on every training row)" in pairs
    assert "hierarchical test on the folds: P(LSPC-new better)" in pairs
    hier = pd.read_csv(work / "results/tables/benchmark_pairs.csv")
    probs = hier[["p_hier_method_better", "p_hier_rope", "p_hier_peer_better"]]
    assert np.allclose(probs.sum(axis=1), 1.0)  # the hierarchical test ran on the folds
    assert "MGPC-EP vs GPC" not in pairs  # GPC did not run
    means = (work / "results/tables/benchmark_means.md").read_text()
    assert "KEEL repository" in means and "your data (datasets.mine: mine.csv)" in means
    for group in ("all", "binary", "multiclass"):
        assert (work / f"results/figures/benchmark_cd_{group}.png").stat().st_size > 0
    # every fit's log says how many of its folds are done, with the seconds elapsed
    logs = sorted((work / "results/logs/benchmark_fit").glob("*.log"))
    assert len(logs) == 2 * (4 + 5 + 5)  # two fold chunks per (set, method)
    for log in logs:
        assert re.search(r"folds (\d)/\1 \(fold \d, .*; \d+\.\d s elapsed", log.read_text()), log

    # a records file deleted from the finished run: not recomputed while the tables it fed
    # are up to date (docs/user_guide/caching.md), recomputed alone when named as the target
    record = sorted((work / "results/records/benchmark/iris").glob("KLR_*.csv"))[0]
    kept = record.read_bytes()
    record.unlink()
    assert dry_run(work, None, "results/tables/benchmark.csv") == []
    jobs = dry_run(work, None, str(record.relative_to(work)))
    assert [rule for rule, _ in jobs] == ["benchmark_fit"]
    record.write_bytes(kept)

    # a set added to the finished run plans its own fits and the tables, nothing else
    cfg = yaml.safe_load((work / "config.yaml").read_text())
    cfg["benchmark"]["datasets"].append("wine")
    jobs = dry_run(work, cfg, "results/tables/benchmark.csv")
    fits = sorted(wc for rule, wc in jobs if rule == "benchmark_fit")
    assert {rule for rule, _ in jobs} == {"benchmark_fit", "benchmark_report"}
    assert len(fits) == 4 * 2 and all("bm_dataset=wine" in wc for wc in fits)

    # two peers added to the finished run: their own fits and the tables, nothing else;
    # they run through fit and report beside the others
    cfg = yaml.safe_load((work / "config.yaml").read_text())
    cfg["benchmark"]["datasets"].remove("wine")
    cfg["benchmark"]["methods"] += ["RF", "kNN"]
    cfg["benchmark"]["grids"]["RF"] = {"max_features": [0.5, 1.0], "n_estimators": 20}
    jobs = dry_run(work, cfg, "results/tables/benchmark.csv")
    fits = sorted(wc for rule, wc in jobs if rule == "benchmark_fit")
    assert {rule for rule, _ in jobs} == {"benchmark_fit", "benchmark_report"}
    assert len(fits) == 3 * 2 * 2
    assert all("bm_method=RF," in wc or "bm_method=kNN," in wc for wc in fits)
    run(work, "results/tables/benchmark.csv", timeout=600)
    peers = pd.read_csv(work / "results/tables/benchmark.csv")
    assert set(peers["method"]) == {*METHODS, "RF", "kNN"}
    assert len(peers) == 3 * (6 + 7 + 7)
    others = peers[~peers["method"].isin(["RF", "kNN"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(others.drop(columns="seconds"), table.drop(columns="seconds"))
    ranks = pd.read_csv(work / "results/tables/benchmark_ranks.csv")
    assert {"RF", "kNN"} <= set(ranks.loc[ranks["group"] == "all", "method"])
    record = pd.read_csv(work / "results/records/benchmark/sonar/kNN_0-1.csv")
    assert record["params"].str.contains('"n_neighbors"').all()

    # iris alone, from a clean folder: the same rows, the seconds apart
    alone = _workdir(tmp_path / "alone", _config(datasets=["iris"]))
    run(alone, "results/tables/benchmark.csv", timeout=600)
    rows = _without_seconds((alone / "results/tables/benchmark.csv").read_text())
    before = _without_seconds(text)
    assert rows[0] == before[0]
    assert rows[1:] == [line for line in before[1:] if line.startswith("iris,")]


@pytest.mark.slow
def test_bad_benchmark_config_is_refused_in_one_line(tmp_path):
    cfg = _config()
    cfg["benchmark"]["fold"] = 3
    work = _workdir(tmp_path / "typo", cfg)
    proc = run(work, "-n", "results/tables/benchmark.csv", check=False)
    assert proc.returncode != 0 and "key 'benchmark'" in proc.stdout + proc.stderr
    cfg = _config(datasets=["irises"])
    work = _workdir(tmp_path / "name", cfg)
    proc = run(work, "-n", "results/tables/benchmark.csv", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "'irises' is neither a built-in data set of benchmark nor a name under datasets:" in out
