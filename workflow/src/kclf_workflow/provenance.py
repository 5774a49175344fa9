"""Provenance of a workflow run: what produced these results, where, and how long it took.

:func:`collect` gathers, as one JSON-ready dict,

* ``config_sha256`` -- SHA-256 of the config as canonical JSON (sorted keys, no spaces),
  so two runs with equal configs have equal hashes whatever the YAML's key order;
* ``kclf_version`` and ``git`` (commit, branch, whether the work tree had uncommitted
  changes) of the code that ran;
* ``packages`` -- every installed distribution's version, and ``lock_mismatches``: the
  packages whose installed version differs from ``requirements.lock``;
* ``machine`` -- host, OS, Python, CPUs, memory, the BLAS/OpenMP libraries and their
  thread counts (threadpoolctl), and the thread-count environment variables;
* ``rules`` -- per-rule run times summarised from Snakemake's ``benchmark:`` files
  (``results/benchmarks/<rule>/<wildcards>.tsv``).

Nothing here imports Snakemake: the workflow's provenance script passes the config and
paths in.
"""

from __future__ import annotations

import csv
import datetime as _dt
import hashlib
import html
import io
import json
import os
import platform
import re
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from .files import atomic_write
from .readers import damaged, read_text

THREAD_ENV_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)

# Columns of Snakemake's benchmark TSV that are summed/maximised per rule.
_BENCH_SECONDS = "s"
_BENCH_MAX_RSS = "max_rss"
_BENCH_CPU = "cpu_time"


def canonical_json(obj):
    """``obj`` as compact JSON with sorted keys: equal data give equal bytes."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)


def config_hash(config):
    """SHA-256 (hex) of the config's canonical JSON; independent of key order."""
    if not isinstance(config, dict):
        raise ValueError(f"config must be a dict, got {type(config).__name__}")
    return hashlib.sha256(canonical_json(config).encode("utf-8")).hexdigest()


def git_info(path="."):
    """Commit, branch and dirtiness of the git work tree holding ``path``.

    Returns ``{"commit": None, ...}`` when ``path`` is not in a git work tree or git is
    missing (e.g. a workflow copied without its ``.git``).
    """
    info = {"commit": None, "branch": None, "dirty": None}

    def git(*args):
        out = subprocess.run(
            ["git", "-C", str(path), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return out.stdout.strip()

    try:
        info["commit"] = git("rev-parse", "HEAD")
        info["branch"] = git("rev-parse", "--abbrev-ref", "HEAD")
        info["dirty"] = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def _canonical_name(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_packages():
    """``{canonical name: version}`` of every installed distribution, sorted by name."""
    found = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            found.setdefault(_canonical_name(name), dist.version)
    return dict(sorted(found.items()))


def read_lock(path):
    """``{canonical name: version}`` from a ``name==version`` lock file.

    Blank lines, comments and ``-e``/``--`` option lines are ignored; a line that is
    neither raises ValueError naming the file and line.
    """
    pins = {}
    for lineno, raw in enumerate(Path(path).read_text().splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==\s*([^\s;]+)", line)
        if m is None:
            raise ValueError(f"{path}:{lineno}: not an exact 'name==version' pin: {raw!r}")
        pins[_canonical_name(m.group(1))] = m.group(3)
    return pins


def lock_mismatches(installed, pins):
    """Pinned packages whose installed version differs (None when not installed)."""
    return {
        name: {"pinned": version, "installed": installed.get(name)}
        for name, version in sorted(pins.items())
        if installed.get(name) != version
    }


def _memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _thread_pools():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    keep = ("user_api", "internal_api", "version", "num_threads", "threading_layer")
    return [{k: pool.get(k) for k in keep if k in pool} for pool in threadpool_info()]


def machine_info():
    """Host, OS, Python, CPUs, memory and thread settings of the running machine."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "hostname": socket.gethostname(),
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "memory_bytes": _memory_bytes(),
        "thread_env": {v: os.environ.get(v) for v in THREAD_ENV_VARS},
        "thread_pools": _thread_pools(),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
    }


def _float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def read_benchmark(path):
    """Rows of one Snakemake benchmark TSV as dicts of floats (``s``, ``max_rss``, ...);
    a file cut short is one clear line (:func:`kclf_workflow.readers.damaged`)."""
    rows = list(csv.DictReader(io.StringIO(read_text(path, "benchmark file")), delimiter="\t"))
    return [{k: (v if k == "h:m:s" else _float(v)) for k, v in row.items()} for row in rows]


def benchmark_summary(root):
    """Per-rule run-time summary from ``root/<rule>/**/*.tsv`` benchmark files.

    For each rule: ``jobs`` (files), ``total_s``, ``max_s`` and ``mean_s`` of wall seconds
    (the mean over a file's repeats counts as the job's time), ``cpu_s`` and the largest
    ``max_rss_mb``.  Rules are keyed by the first folder under ``root``.  A missing
    ``root`` gives ``{}``; a file without an ``s`` column raises ValueError naming it.
    """
    root = Path(root)
    if not root.is_dir():
        return {}
    per_rule = {}
    for path in sorted(root.rglob("*.tsv")):
        rel = path.relative_to(root)
        rule = rel.parts[0] if len(rel.parts) > 1 else path.stem
        rows = read_benchmark(path)
        if not rows:
            continue
        if _BENCH_SECONDS not in rows[0]:
            raise damaged(path, "not a Snakemake benchmark file (no 's' column)")
        n = len(rows)
        secs = sum(r[_BENCH_SECONDS] for r in rows) / n
        cpu = sum(r.get(_BENCH_CPU, float("nan")) for r in rows) / n
        rss = max(r.get(_BENCH_MAX_RSS, float("nan")) for r in rows)
        s = per_rule.setdefault(
            rule, {"jobs": 0, "total_s": 0.0, "max_s": 0.0, "cpu_s": 0.0, "max_rss_mb": 0.0}
        )
        s["jobs"] += 1
        s["total_s"] += secs
        s["max_s"] = max(s["max_s"], secs)
        s["cpu_s"] += cpu if cpu == cpu else 0.0
        if rss == rss:
            s["max_rss_mb"] = max(s["max_rss_mb"], rss)
    for s in per_rule.values():
        s["mean_s"] = s["total_s"] / s["jobs"]
        for k in ("total_s", "max_s", "mean_s", "cpu_s", "max_rss_mb"):
            s[k] = round(s[k], 3)
    return dict(sorted(per_rule.items()))


def collect(config, *, repo_dir=".", benchmarks_dir=None, lock_file=None, now=None):
    """The provenance record of a run as a JSON-ready dict (see the module docstring).

    Parameters
    ----------
    config : dict
        The workflow's config as Snakemake saw it (after schema defaults).
    repo_dir : path-like
        A path inside the code's git work tree (the workflow's base folder).
    benchmarks_dir : path-like or None
        Folder of ``benchmark:`` files, ``results/benchmarks``; None skips run times.
    lock_file : path-like or None
        ``requirements.lock``; when given, ``lock_mismatches`` lists installed versions
        that differ from its pins.
    now : datetime or None
        The time stamp to record (UTC now by default).
    """
    from kclf import __version__

    packages = installed_packages()
    mismatches = None
    if lock_file is not None and Path(lock_file).is_file():
        mismatches = lock_mismatches(packages, read_lock(lock_file))
    now = now or _dt.datetime.now(_dt.UTC)
    return {
        "created_utc": now.isoformat(timespec="seconds"),
        "config_sha256": config_hash(config),
        "kclf_version": __version__,
        "git": git_info(repo_dir),
        "packages": packages,
        "lock_file": None if lock_file is None else str(lock_file),
        "lock_mismatches": mismatches,
        "machine": machine_info(),
        "rules": benchmark_summary(benchmarks_dir) if benchmarks_dir is not None else {},
        "config": config,
    }


def write_json(prov, path):
    """Write the provenance dict as indented JSON, atomically."""

    def write(tmp):
        with open(tmp, "w") as fh:
            json.dump(prov, fh, indent=2, sort_keys=True, default=str)
            fh.write("\n")

    return atomic_write(path, write)


def to_html(prov):
    """A small self-contained HTML page of the provenance (for the Snakemake report)."""
    esc = html.escape
    git = prov.get("git") or {}
    m = prov.get("machine") or {}
    head = [
        ("config SHA-256", prov.get("config_sha256")),
        ("kclf version", prov.get("kclf_version")),
        ("git commit", f"{git.get('commit')} ({git.get('branch')}, dirty={git.get('dirty')})"),
        ("created (UTC)", prov.get("created_utc")),
        ("host", f"{m.get('hostname')} {m.get('platform')}"),
        ("Python", m.get("python")),
        ("CPUs (usable)", f"{m.get('cpu_count')} ({m.get('cpus_usable')})"),
        ("memory (GiB)", None if not m.get("memory_bytes") else f"{m['memory_bytes'] / 2**30:.1f}"),
        ("SLURM job", m.get("slurm_job_id")),
    ]
    out = ["<html><body>", "<h3>Run</h3>", "<table>"]
    out += [f"<tr><th align=left>{esc(k)}</th><td>{esc(str(v))}</td></tr>" for k, v in head]
    out.append("</table>")
    rules = prov.get("rules") or {}
    if rules:
        cols = ["jobs", "total_s", "mean_s", "max_s", "cpu_s", "max_rss_mb"]
        out += ["<h3>Run time per rule (benchmark files)</h3>", "<table border=1>"]
        out.append("<tr><th>rule</th>" + "".join(f"<th>{c}</th>" for c in cols) + "</tr>")
        for rule, s in rules.items():
            cells = "".join(f"<td align=right>{esc(str(s.get(c)))}</td>" for c in cols)
            out.append(f"<tr><td>{esc(rule)}</td>{cells}</tr>")
        out.append("</table>")
    mism = prov.get("lock_mismatches")
    if mism:
        out += ["<h3>Installed versions differing from the lock file</h3>", "<ul>"]
        out += [
            f"<li>{esc(n)}: pinned {esc(str(v['pinned']))}, "
            f"installed {esc(str(v['installed']))}</li>"
            for n, v in mism.items()
        ]
        out.append("</ul>")
    out += ["<h3>Packages</h3>", "<table>"]
    out += [
        f"<tr><td>{esc(n)}</td><td>{esc(v)}</td></tr>"
        for n, v in (prov.get("packages") or {}).items()
    ]
    out += ["</table>", "</body></html>"]
    return "\n".join(out) + "\n"


def write_html(prov, path):
    """Write :func:`to_html` of ``prov`` atomically."""
    return atomic_write(path, lambda tmp: Path(tmp).write_text(to_html(prov)))
