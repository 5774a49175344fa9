"""Run the repository's workflow on a tiny config in a temporary working directory.

Used by the reproducibility, fault and SLURM tests.  The Snakefile and rules are the
repository's own (``--snakefile``); outputs, logs and ``.snakemake`` live in the temp
folder (``--directory``), so a test never touches the repository's ``results/``.

A test config (``tests/workflow_configs/<name>.yaml``) is layered on the default
``config.yaml`` with every experiment family switched off except those the test config
names, and written as one file into the work folder: the run does not change when
someone edits ``config.yaml`` meanwhile, and new families stay out of the tiny runs.
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
CONFIGS = Path(__file__).resolve().parent / "workflow_configs"
SNAKEFILE = ROOT / "Snakefile"


def _merge(base, over):
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def tiny_config(name):
    """The default config with only the families of ``workflow_configs/<name>.yaml`` on."""
    default = yaml.safe_load((ROOT / "config.yaml").read_text())
    test = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text())
    for key, block in default.items():
        if isinstance(block, dict) and "enabled" in block and key not in test:
            block["enabled"] = False
    return _merge(default, test)


def make_workdir(path, name="tiny"):
    """Create ``path`` with ``config.yaml`` = :func:`tiny_config` (name) and return it."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.yaml").write_text(yaml.safe_dump(tiny_config(name), sort_keys=True))
    return path


def env(extra=None):
    e = dict(os.environ)
    e.update(extra or {})
    return e


def snakemake_cmd(workdir, *args, cores=2):
    cmd = [
        str(SNAKEMAKE),
        "--snakefile",
        str(SNAKEFILE),
        "--directory",
        str(workdir),
        "--configfile",
        str(Path(workdir) / "config.yaml"),
        "--nocolor",
    ]
    if cores is not None:
        cmd += ["--cores", str(cores)]
    return cmd + [str(a) for a in args]


def run(workdir, *args, cores=2, check=True, timeout=300, extra_env=None, umask=None):
    """Run Snakemake in ``workdir`` (under ``umask`` when given); on failure the assertion
    shows the log's tail."""
    proc = subprocess.run(
        snakemake_cmd(workdir, *args, cores=cores),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(extra_env),
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(map(str, args))} failed ({proc.returncode}):\n"
            + proc.stderr[-6000:]
        )
    return proc


def data_dir(workdir, prefix):
    """The one data folder ``results/data/<prefix>-<key>`` of a source given by its
    folder (the key: a hash of the folder's path)."""
    found = sorted(Path(workdir, "results", "data").glob(f"{prefix}-*"))
    assert len(found) == 1, f"expected one results/data/{prefix}-* folder, found {found}"
    return found[0]


def table_digests(workdir, pattern="results/tables/*.csv"):
    """``{relative path: sha256}`` of the files matching ``pattern`` under ``workdir``."""
    workdir = Path(workdir)
    return {
        str(p.relative_to(workdir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(workdir.glob(pattern))
    }


BLAS_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_REFERENCE = {}


def reference_run(tmp_path_factory):
    """One uninterrupted local run of the tiny config (2 cores), shared by the test modules.

    The caller's BLAS thread variables say 2; the workflow must override them with the
    config's ``blas_threads`` (1 in the tiny config) in every job.  Returns
    ``(workdir, {table: sha256}, wall seconds)``.
    """
    if "tiny" not in _REFERENCE:
        work = make_workdir(tmp_path_factory.mktemp("tiny_reference"))
        t0 = time.monotonic()
        run(work, cores=2, extra_env=dict.fromkeys(BLAS_VARS, "2"))
        seconds = time.monotonic() - t0
        tables = table_digests(work)
        assert tables, "the reference run wrote no results/tables/*.csv"
        _REFERENCE["tiny"] = (work, tables, seconds)
    return _REFERENCE["tiny"]


def planned_jobs(text):
    """``{rule: count}`` of the jobs a dry run plans (its "Job stats" table), without the
    target rule ``all``; ``{}`` when there is nothing to be done."""
    counts, inside = {}, False
    for line in text.splitlines():
        if line.startswith("Job stats:"):
            inside = True
            continue
        if not inside:
            continue
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            if parts[0] == "total":
                break
            counts[parts[0]] = int(parts[1])
    counts.pop("all", None)
    return counts


def planned_job_list(text):
    """Sorted ``(rule, wildcards)`` of every job in a dry-run listing (``all`` left out)."""
    jobs, rule, wc = [], None, ""
    for line in text.splitlines():
        m = re.match(r"^(?:local)?(?:rule|checkpoint) (\w+):", line)
        if m:
            if rule is not None:
                jobs.append((rule, wc))
            rule, wc = m.group(1), ""
        elif rule is not None and line.strip().startswith("wildcards:"):
            wc = line.split(":", 1)[1].strip()
    if rule is not None:
        jobs.append((rule, wc))
    return sorted(j for j in jobs if j[0] != "all")


def dry_run(workdir, config=None, *targets):
    """Write ``config`` (if given) into the work folder; return the planned jobs as sorted
    ``(rule, wildcards)`` pairs, checked against the dry run's job counts."""
    import yaml

    if config is not None:
        (Path(workdir) / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=True))
    proc = run(workdir, "--dry-run", *targets, cores=1)
    out = proc.stdout + proc.stderr
    jobs = planned_job_list(out)
    counts = {}
    for rule, _ in jobs:
        counts[rule] = counts.get(rule, 0) + 1
    assert counts == planned_jobs(out), out[-3000:]
    return jobs
