"""Same config, same bytes: results/tables/*.csv do not depend on the run or on --cores.

Every random step is seeded from the config's one seed plus names (kclf_workflow.seeding), and
BLAS threads are fixed by the config (``blas_threads``), so two runs from scratch, and
runs with 1 or 2 cores, must write identical tables.  The SLURM run is compared with a
local one in tests/workflow/test_slurm.py.
"""

from __future__ import annotations

import pytest
import workflow_run as wf

pytestmark = pytest.mark.slow

BLAS_VARS = wf.BLAS_VARS


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One run from scratch with 2 cores (and BLAS variables of 2 in the caller's env)."""
    work, tables, _ = wf.reference_run(tmp_path_factory)
    return work, tables


def test_second_run_from_scratch_is_byte_identical(tmp_path, reference):
    _, tables = reference
    work = wf.make_workdir(tmp_path)
    wf.run(work, cores=2)
    assert wf.table_digests(work) == tables


def test_one_core_equals_two_cores(tmp_path, reference):
    _, tables = reference
    work = wf.make_workdir(tmp_path)
    wf.run(work, cores=1)
    assert wf.table_digests(work) == tables


def test_blas_threads_are_pinned_in_jobs(reference):
    """Jobs see the config's BLAS thread count, not the caller's environment."""
    import json

    work, _ = reference
    prov = json.loads((work / "results" / "provenance.json").read_text())
    want = str(prov["config"]["blas_threads"])
    assert want != "2", "the tiny config must pin a thread count other than the caller's"
    env = prov["machine"]["thread_env"]
    assert all(env[v] == want for v in BLAS_VARS), env
    blas = [p for p in prov["machine"]["thread_pools"] if p["user_api"] == "blas"]
    assert blas and all(p["num_threads"] == int(want) for p in blas)


def test_rerun_with_nothing_changed_runs_nothing(reference):
    work, tables = reference
    proc = wf.run(work, "--dry-run", cores=1)
    assert "Nothing to be done" in proc.stdout + proc.stderr
    assert wf.table_digests(work) == tables


def test_provenance_json_and_report(reference):
    import json

    from kclf_workflow.provenance import config_hash

    work, _ = reference
    prov = json.loads((work / "results" / "provenance.json").read_text())
    assert prov["config_sha256"] == config_hash(prov["config"])
    assert prov["config"]["lspc_toy"]["trials"] == wf.tiny_config("tiny")["lspc_toy"]["trials"]
    assert prov["rules"]["lspc_toy_fit"]["jobs"] == 3  # one benchmark file per method
    assert prov["lock_mismatches"] == {}
    wf.run(work, "--report", work / "report.html", cores=None)
    assert "provenance.html" in (work / "report.html").read_text()
