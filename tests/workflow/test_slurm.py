"""The workflow on a real single-node SLURM gives the same tables as a local run.

The fixture brings SLURM up with ``.ci/slurm/up.sh`` (Debian's slurm-wlm + munge,
installed with apt-get when missing) unless it is already up, and stops it afterwards
only if it started it.  It skips, with the reason, only where SLURM cannot be
installed or started (not root, no apt-get, a foreign slurm.conf).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import workflow_run as wf

pytestmark = pytest.mark.slurm

ROOT = wf.ROOT
UP = ROOT / ".ci" / "slurm" / "up.sh"
DOWN = ROOT / ".ci" / "slurm" / "down.sh"
STATE = Path(os.environ.get("KCLF_SLURM_STATE", "/var/tmp/kclf-slurm"))
PROFILE = ROOT / "workflow" / "profiles" / "slurm"
SUBMITTED = re.compile(r"has been submitted with SLURM jobid (\d+)")


def _slurm_up():
    if shutil.which("sinfo") is None:
        return False
    out = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True)
    return out.returncode == 0 and any(
        s in ("idle", "mixed", "allocated") for s in out.stdout.split()
    )


@pytest.fixture(scope="module")
def slurm():
    if _slurm_up():
        yield {"started": False}
        return
    if os.geteuid() != 0:
        pytest.skip("SLURM is not running and starting slurmctld/slurmd needs root")
    proc = subprocess.run(["bash", str(UP)], capture_output=True, text=True, timeout=900)
    if proc.returncode in (2, 3):
        pytest.skip(f"SLURM cannot be installed/started here: {proc.stderr.strip()[-500:]}")
    assert proc.returncode == 0, f".ci/slurm/up.sh failed:\n{proc.stderr[-3000:]}"
    try:
        yield {"started": True}
    finally:
        subprocess.run(["bash", str(DOWN)], capture_output=True, timeout=120)


def _job_state(job_id):
    """COMPLETED/FAILED/... from slurmctld (MinJobAge keeps finished jobs) or the jobcomp log."""
    out = subprocess.run(
        ["scontrol", "show", "job", "-o", job_id], capture_output=True, text=True
    ).stdout
    m = re.search(r"JobState=(\S+)", out)
    if m:
        return m.group(1)
    comp = STATE / "log" / "jobcomp.log"
    if comp.exists():
        for line in comp.read_text().splitlines():
            if re.search(rf"\bJobId={job_id}\b", line):
                return re.search(r"JobState=(\S+)", line).group(1)
    return None


def test_tiny_workflow_on_slurm_equals_local(tmp_path, tmp_path_factory, slurm):
    _, local_tables, t_local = wf.reference_run(tmp_path_factory)

    remote = wf.make_workdir(tmp_path / "slurm")
    t0 = time.monotonic()
    proc = wf.run(
        remote,
        "--profile",
        PROFILE,
        "--slurm-init-seconds-before-status-checks",
        "2",
        cores=2,
        timeout=600,
    )
    t_slurm = time.monotonic() - t0
    print(f"\ntiny workflow wall time: local {t_local:.1f} s, SLURM {t_slurm:.1f} s")

    # Every non-local job was an sbatch job that SLURM ran to completion.
    submitted = SUBMITTED.findall(proc.stderr)
    assert submitted, "no job was submitted to SLURM:\n" + proc.stderr[-3000:]
    for job_id in submitted:
        assert _job_state(job_id) == "COMPLETED", f"SLURM job {job_id}: {_job_state(job_id)}"
        logs = list((remote / "results" / "logs" / "slurm").rglob(f"{job_id}.log"))
        assert len(logs) == 1, f"no SLURM log for job {job_id}"
        assert "--executor slurm-jobstep" in logs[0].read_text(), f"{logs[0]}: not a job step"
    # Jobs run (top-level "rule x:" lines; group members are indented) = SLURM jobs
    # submitted, plus the groups' members; local rules ("localrule x:") excepted.
    top_rules = re.findall(r"^rule (\w+):$", proc.stderr, flags=re.M)
    groups = re.findall(r"Group job (\w+) \(jobs in lexicogr\. order\):$", proc.stderr, re.M)
    assert len(submitted) == len(top_rules) + len(groups), proc.stderr[-3000:]
    assert "localrule provenance:" in proc.stderr

    # Same tables, byte for byte.
    assert wf.table_digests(remote) == local_tables
