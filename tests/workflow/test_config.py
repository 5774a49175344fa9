"""The config is checked against its schema before any job runs, with one-line errors."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def dry_run(tmp_path, changes):
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = cfg
        for p in parents:
            node = node[p]
        node[last] = value
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return subprocess.run(
        [
            str(SNAKEMAKE),
            "-n",
            "-q",
            "--configfile",
            str(path),
            "--directory",
            str(tmp_path),
            "--snakefile",
            str(ROOT / "Snakefile"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


@pytest.mark.skipif(shutil.which(str(SNAKEMAKE)) is None, reason="snakemake not installed")
@pytest.mark.parametrize(
    "changes,key,words",
    [
        ({"lspc_toy.folds": 1}, "lspc_toy.folds", "minimum"),
        ({"lspc_toy.trials": 0}, "lspc_toy.trials", "minimum"),
        ({"lspc_toy.trails": 3}, "lspc_toy", "trails"),
        ({"sed": 3}, "(top level)", "sed"),
        ({"seed": "abc"}, "seed", "integer"),
        ({"lspc_toy.lams": [0.1, -1]}, "lspc_toy.lams.1", "minimum"),
        # n_train >= the items: caught when the DAG is built, not by an empty table
        ({"voc.experiment.n_train": 150}, "voc.experiment.n_train", "150 images"),
        ({"audio.experiment.n_train": 60}, "audio.experiment.n_train", "60 clips"),
        ({"ida.n_select": 4}, "ida.n_select", "3 realisations"),
        ({"mgpc.n_centers": [20, 0]}, "mgpc.n_centers.1", "minimum"),
        ({"mgpc.n_centers": [20, 20]}, "mgpc.n_centers", "non-unique"),
        # stratified folds need a row of each class in every fold: checked when the workflow
        # is planned, naming the set, not inside a fit job
        ({"benchmark.folds": 1000}, "benchmark.folds", "81 rows of the smallest class of breast"),
    ],
)
def test_bad_config_stops_before_any_job_naming_the_key(tmp_path, changes, key, words):
    res = dry_run(tmp_path, changes)
    assert res.returncode != 0
    out = res.stdout + res.stderr
    lines = [ln for ln in out.splitlines() if "invalid config" in ln]
    assert len(lines) == 1, out
    assert f"key '{key}'" in lines[0] and words in lines[0]
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("changes", [{}, {"mgpc.n_centers": [20, None]}])
def test_default_config_is_valid(tmp_path, changes):
    # and with a list of feature maps for MGPC, searched by the evidence
    res = dry_run(tmp_path, changes)
    assert res.returncode == 0, res.stderr


def test_folds_above_a_user_sets_smallest_class_stop_the_dry_run(tmp_path):
    """A user CSV with two rows of a class and ``benchmark.folds: 3``: one line naming the
    set and the key, before any job."""
    data = tmp_path / "tiny.csv"
    data.write_text("a,b,y\n" + "".join(f"{k},{k % 3},{k % 2}\n" for k in range(4)))
    res = dry_run(
        tmp_path,
        {
            "datasets": {"tiny": {"format": "csv", "path": str(data), "label": "y"}},
            "benchmark.datasets": ["tiny", "iris"],
            "benchmark.folds": 3,
        },
    )
    assert res.returncode != 0
    lines = [ln for ln in (res.stdout + res.stderr).splitlines() if "invalid config" in ln]
    assert len(lines) == 1, res.stderr
    assert (
        "key 'benchmark.folds': 3 folds exceed the 2 rows of the smallest class of tiny"
        in (lines[0])
    )
