"""The KEEL suite's archive of finished fit jobs (benchmarks/keel_suite/archive.py): the
plan it restores into, kept fold jobs put together into the chunks a config plans, and
kept jobs a newer chunk covers dropped on save."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEADER = "dataset,task,method,trial,metric,value,fit_seconds,params,source\n"
FIELDS = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


@pytest.fixture
def archive(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location(
        "keel_archive", ROOT / "benchmarks" / "keel_suite" / "archive.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path / "kept")
    return module


def keep(archive, dataset, job, trials, seconds, rss, load):
    """A kept job: one record row per trial and its benchmark file."""
    record = archive.HERE / "records" / dataset / f"{job}.csv"
    record.parent.mkdir(parents=True, exist_ok=True)
    rows = "".join(f"{dataset},binary,kNN,{k},auc,{90 + k},0.1,{{}},s\n" for k in trials)
    record.write_text(HEADER + rows)
    times = archive.HERE / "times" / f"{dataset}_{job}.tsv"
    times.parent.mkdir(parents=True, exist_ok=True)
    values = [seconds, f"0:00:0{int(seconds)}", rss, 1, 1, 1, 0.5, 0.25, load, seconds / 2]
    times.write_text(FIELDS + "\t".join(map(str, values)) + "\n")
    return record


def test_the_suite_config_plans_one_job_per_set_and_method(archive):
    records = archive.planned(ROOT)
    assert ROOT / "results/records/benchmark/letter/KLR_0-4.csv" in records
    assert not any(r.stem.endswith("_0-0") for r in records)
    # 43 sets x 12 methods, less the two two-class methods on the 17 multi-class sets
    assert len(records) == len(set(records)) == 43 * 12 - 2 * 17


def test_kept_fold_jobs_are_put_together_in_fold_order(archive, tmp_path):
    for k, (s, rss, load) in enumerate([(3.0, 100.0, 90.0), (5.0, 300.0, 50.0)]):
        keep(archive, "banana", f"kNN_{k}-{k}", [k], s, rss, load)
    dest = tmp_path / "run/results/records/benchmark/banana/kNN_0-1.csv"
    kept = sorted((archive.HERE / "records" / "banana").glob("*.csv"), reverse=True)
    assert archive.put_together(dest, kept)
    lines = dest.read_text().splitlines()
    assert lines[0] == HEADER.strip() and [line.split(",")[3] for line in lines[1:]] == ["0", "1"]
    with archive.times_of(dest).open() as f:
        (row,) = list(csv.DictReader(f, delimiter="\t"))
    assert float(row["s"]) == 8.0 and row["h:m:s"] == "0:00:08"
    assert float(row["max_rss"]) == 300.0 and float(row["cpu_time"]) == 4.0
    assert float(row["io_in"]) == 1.0 and float(row["mean_load"]) == pytest.approx(65.0)
    # folds not covered exactly (a gap, or one too many): not put together
    gap = tmp_path / "run/results/records/benchmark/banana/kNN_0-2.csv"
    assert not archive.put_together(gap, kept) and not gap.exists()
    one = tmp_path / "run/results/records/benchmark/banana/kNN_0-0.csv"
    assert not archive.put_together(one, kept)


def test_saving_a_chunk_drops_the_kept_fold_jobs_it_covers(archive):
    folds = [keep(archive, "ring", f"MAPLP_{k}-{k}", [k], 1.0, 1.0, 1.0) for k in range(5)]
    other = keep(archive, "ring", "MAPLP-bias_0-0", [0], 1.0, 1.0, 1.0)
    chunk = archive.HERE / "records" / "ring" / "MAPLP_0-3.csv"
    assert archive.covered(chunk) == folds[:4]
    assert other not in archive.covered(archive.HERE / "records" / "ring" / "MAPLP_0-4.csv")
