"""Faults: a killed run resumes to the same tables; a corrupt input fails only its own
branch under --keep-going; a read-only or full results folder is a clear error.

Every test runs the repository's workflow on a tiny config in a temp folder
(tests/workflow_run.py).  Read-only and full-disk folders are real mounts when we are
root (root ignores permission bits), or a chmod when we are not.
"""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import workflow_run as wf

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    return wf.reference_run(tmp_path_factory)[1]


def _incomplete(work):
    """Outputs Snakemake has marked as being written (jobs running), as relative paths."""
    folder = Path(work) / ".snakemake" / "incomplete"
    if not folder.is_dir():
        return []
    out = []
    for f in folder.rglob("*"):
        if f.is_file():
            name = "".join(p.lstrip("@") for p in f.relative_to(folder).parts)
            try:
                out.append(base64.urlsafe_b64decode(name).decode())
            except ValueError:
                out.append(name)
    return out


def resume_cmd(work):
    """``make run`` (``python -m kclf_workflow.resume --cores 2``) on the test's work folder."""
    return [sys.executable, "-m", "kclf_workflow.resume", *wf.snakemake_cmd(work, cores=2)[1:]]


def test_make_run_is_the_resuming_module():
    dry = subprocess.run(
        ["make", "-n", "run", "CORES=2"], cwd=wf.ROOT, capture_output=True, text=True, check=True
    )
    assert "-m kclf_workflow.resume --cores 2" in dry.stdout, dry.stdout


def test_sigkill_during_fit_then_make_run_resumes_by_itself(tmp_path, reference):
    """A Snakemake killed outright leaves its lock and incomplete jobs; ``make run`` then
    completes in one go (no --unlock, no --rerun-incomplete by hand) and the tables equal
    an uninterrupted run's.  While the Snakemake started by hand runs, it refuses,
    naming it."""
    work = wf.make_workdir(tmp_path)
    with open(tmp_path / "killed.log", "w") as log:
        proc = subprocess.Popen(
            wf.snakemake_cmd(work, cores=2),
            stdout=log,
            stderr=subprocess.STDOUT,
            env=wf.env(),
            start_new_session=True,  # own process group: SIGKILL reaches every job too
        )
        deadline = time.monotonic() + 240
        running = []
        while time.monotonic() < deadline and proc.poll() is None:
            running = [p for p in _incomplete(work) if "records/lspc_toy/" in p]
            if running:
                break
            time.sleep(0.05)
        assert running, "no fit job was seen running:\n" + (tmp_path / "killed.log").read_text()
        os.killpg(proc.pid, signal.SIGSTOP)  # frozen mid-fit while make run looks
        busy = subprocess.run(resume_cmd(work), capture_output=True, text=True, timeout=120)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert busy.returncode != 0, busy.stdout + busy.stderr
    assert "is locked by a running Snakemake (pid" in busy.stderr and str(proc.pid) in busy.stderr
    assert (work / ".snakemake" / "locks").is_dir() and _incomplete(work)

    done = subprocess.run(resume_cmd(work), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-5000:]
    assert "removing the lock a killed Snakemake left" in done.stderr
    assert wf.table_digests(work) == reference
    again = subprocess.run(resume_cmd(work), capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


def test_cut_records_file_fails_its_table_in_one_line_and_recomputes(tmp_path, reference):
    """A records file cut short (a disk that filled during a copy): the table job fails
    and its log ends with one line naming the file and saying to delete it; deleted, it
    is recomputed and the tables equal an uninterrupted run's."""
    work = wf.make_workdir(tmp_path)
    wf.run(work, cores=2)
    cut = "results/records/lspc_toy/lspc_new_0-1.csv"
    raw = (work / cut).read_bytes()
    (work / cut).write_bytes(raw[: len(raw) // 2 - 7])
    failed = wf.run(work, cores=2, check=False)
    assert failed.returncode != 0
    log = (work / "results/logs/lspc_toy_report/all.log").read_text().strip().splitlines()
    assert log[-1] == (
        f"ValueError: {cut}: this records file is cut short (its last line has no end); "
        "delete it and run again to recompute it"
    ), log[-5:]
    assert "JSONDecodeError" not in "\n".join(log)
    (work / cut).unlink()
    wf.run(work, cores=2)
    assert wf.table_digests(work) == reference


def _error_blocks(text, rule):
    """The 'Error in rule <rule>:' blocks of a Snakemake log."""
    blocks, cur = [], None
    for line in text.splitlines():
        if line.startswith(f"Error in rule {rule}:"):
            cur = [line]
            blocks.append(cur)
        elif cur is not None:
            if line.startswith("    ") or not line.strip():
                cur.append(line)
            else:
                cur = None
    return ["\n".join(b) for b in blocks]


def test_corrupt_input_fails_only_its_branch(tmp_path):
    work = wf.make_workdir(tmp_path, "faults")
    bad = "results/data/lspc_toy/samples_0-1.npz"
    wf.run(work, bad, cores=1)
    (work / bad).write_bytes(b"not an npz archive\n" * 8)

    proc = wf.run(work, "--keep-going", cores=2, check=False, timeout=600)
    assert proc.returncode != 0, "a corrupt input must fail the run"

    # Everything downstream of the corrupt file is missing ...
    assert not (work / "results/tables/lspc_toy.csv").exists()
    # ... and the independent family's outputs are all there and valid.
    ida_tables = sorted((work / "results/tables").glob("ida_*.csv"))
    assert ida_tables, "the IDA family produced no tables:\n" + proc.stderr[-4000:]
    for table in ida_tables:
        df = pd.read_csv(table)  # every table parses; the agreement table may be empty
        for column in df.select_dtypes("number").columns:
            values = df[column].to_numpy(dtype=float)
            # only the paper's columns may be empty (no published value for a dataset)
            if column.startswith("paper"):
                values = values[~np.isnan(values)]
            assert np.isfinite(values).all(), (table.name, column)
    assert len(pd.read_csv(work / "results/tables/ida_error.csv")) > 0
    records = pd.read_csv(work / "results/records/ida/twonorm/klr_0-1.csv")
    assert set(records["dataset"]) == {"twonorm"} and records["value"].notna().all()

    # The failing jobs' error reports (Snakemake's log) name the corrupt file and the log.
    main_logs = sorted((work / ".snakemake" / "log").glob("*.snakemake.log"))
    blocks = _error_blocks(main_logs[-1].read_text(), "lspc_toy_fit")
    assert blocks, "no failing lspc_toy_fit job reported:\n" + main_logs[-1].read_text()[-4000:]
    for block in blocks:
        assert bad in block
        log = next(
            line.split("log:", 1)[1].split("(")[0].strip()
            for line in block.splitlines()
            if line.strip().startswith("log:")
        )
        assert (work / log).exists(), f"{log} missing"
        # the rule's log holds the job's traceback and its exception, not only Snakemake's
        text = (work / log).read_text()
        assert "Traceback (most recent call last)" in text, text
        assert text.strip().splitlines()[-1].startswith("ValueError: "), text


def _mount(*args):
    return subprocess.run(["mount", *args], capture_output=True, text=True).returncode == 0


@pytest.fixture(params=["read-only", "full"])
def broken_results(request, tmp_path):
    """A results/ folder that cannot be written: read-only, or a 16 KiB disk."""
    work = wf.make_workdir(tmp_path)
    results = work / "results"
    results.mkdir()
    mounted = False
    if os.geteuid() == 0:
        if request.param == "read-only":
            mounted = _mount("--bind", str(results), str(results)) and (
                _mount("-o", "remount,ro,bind", str(results))
                or (subprocess.run(["umount", str(results)]) and False)
            )
        else:
            mounted = _mount("-t", "tmpfs", "-o", "size=16k", "tmpfs", str(results))
        if not mounted:
            pytest.skip(f"cannot mount a {request.param} folder here (root without mount)")
    elif request.param == "read-only":
        results.chmod(0o555)
    else:
        pytest.skip("a full disk needs a tmpfs mount (root)")
    try:
        yield request.param, work
    finally:
        if mounted:
            subprocess.run(["umount", str(results)], check=True)
        else:
            results.chmod(0o755)


def test_unwritable_results_gives_clear_error(broken_results):
    kind, work = broken_results
    proc = wf.run(work, cores=1, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    expected = {
        "read-only": ("Read-only file system", "Permission denied"),
        "full": ("No space left on device",),
    }[kind]
    assert any(msg in out for msg in expected), out[-4000:]
    assert "results/" in out
