"""Adding a peer to the benchmark is one spec in the registry and one entry in the
schema: a copy of the workflow given a dummy classifier that way plans its fits in a dry
run, runs them and reports it beside LR, with nothing else edited."""

import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from workflow_run import ROOT, planned_job_list

SNAKEMAKE = [sys.executable, "-m", "snakemake"]

#: the one spec, appended to the copy's kclf_workflow/methods/benchmark.py
SPEC = """

# a peer added by tests/workflow/test_benchmark_peer.py: scikit-learn's prior classifier
from sklearn.dummy import DummyClassifier  # noqa: E402

register(
    FAMILY,
    MethodSpec(
        "Prior",
        "Prior",
        build=lambda grid, cfg, path, random_state: DummyClassifier(strategy="prior"),
        chosen=lambda est: {"strategy": est.strategy},
    ),
)
"""


def _checkout(path):
    """A copy of the workflow (Snakefile, config, lock, conda files, workflow/) with the
    peer's spec and its schema entry added."""
    path.mkdir()
    for name in ("Snakefile", "config.yaml", "requirements.lock"):
        shutil.copy(ROOT / name, path / name)
    shutil.copytree(ROOT / "envs", path / "envs")
    shutil.copytree(
        ROOT / "workflow", path / "workflow", ignore=shutil.ignore_patterns("__pycache__")
    )
    specs = path / "workflow" / "src" / "kclf_workflow" / "methods" / "benchmark.py"
    specs.write_text(specs.read_text() + SPEC)
    schema = path / "workflow" / "schemas" / "benchmark.schema.yaml"
    text = schema.read_text()
    enum = "items: {enum: [LSPC-new, LSPC, KLR, MAPLP, MAPLP-bias, MGPC-EP, SVC, LR, GPC, HGB"
    assert enum in text
    schema.write_text(text.replace(enum, enum + ", Prior", 1))
    return path


def _snakemake(checkout, work, *args):
    cmd = [
        *SNAKEMAKE,
        "--snakefile",
        str(checkout / "Snakefile"),
        "--directory",
        str(work),
        "--configfile",
        str(work / "config.yaml"),
        "--nocolor",
        *args,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_peer_added_as_one_spec_and_its_schema_entry_runs_through_the_benchmark(tmp_path):
    checkout = _checkout(tmp_path / "checkout")
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for block in cfg.values():
        if isinstance(block, dict) and "enabled" in block:
            block["enabled"] = False
    cfg["mirror"] = None  # the shipped sets: no wheel, no network
    cfg["benchmark"].update(
        enabled=True,
        datasets=["iris", "sonar"],
        methods=["LR", "Prior"],
        folds=2,
        folds_per_job=2,
        grids={"LR": {"C": [1.0]}},
        comparisons=[{"method": "Prior", "peer": "LR", "metric": "error", "sets": "all"}],
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))

    planned = planned_job_list(_snakemake(checkout, work, "--dry-run", "--cores", "1"))
    fits = sorted(w for rule, w in planned if rule == "benchmark_fit")
    pairs = [(d, m) for d in ("iris", "sonar") for m in ("LR", "Prior")]
    assert fits == sorted(f"bm_dataset={d}, bm_method={m}, folds=0-1" for d, m in pairs)
    assert not any(rule.startswith("download") for rule, _ in planned)  # the shipped sets

    _snakemake(checkout, work, "--cores", "2")
    table = pd.read_csv(work / "results/tables/benchmark.csv")
    prior = table[table["method"] == "Prior"]
    assert len(prior) == 2 * 2 and set(prior["dataset"]) == {"iris", "sonar"}
    assert (prior["auc"] == 50).all()  # a constant prediction ranks nothing
    ranks = pd.read_csv(work / "results/tables/benchmark_ranks.csv")
    assert set(ranks["method"]) == {"LR", "Prior"}
    pairs = (work / "results/tables/benchmark_pairs.md").read_text()
    assert re.search(r"Prior vs LR, error \(%\), all \(2 sets\)", pairs)
    records = pd.read_csv(work / "results/records/benchmark/iris/Prior_0-1.csv")
    assert records["params"].str.contains('"strategy": "prior"').all()
    assert (work / "results/figures/benchmark_cd_all.png").stat().st_size > 0
