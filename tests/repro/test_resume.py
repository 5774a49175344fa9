"""make run's resuming wrapper (kclf_workflow.resume): whose lock is whose."""

import os
from pathlib import Path

import pytest

from kclf_workflow import resume


def test_the_folder_is_the_directory_argument_or_the_working_one(tmp_path):
    assert resume.workdir_of(["--cores", "2"], tmp_path) == tmp_path.resolve()
    assert resume.workdir_of(["-d", "w", "--cores", "2"], tmp_path) == (tmp_path / "w").resolve()
    assert resume.workdir_of(["--directory=/x/y"], tmp_path) == Path("/x/y")


@pytest.mark.parametrize(
    "cmdline, cwd, folder",
    [
        (["/v/bin/python", "/v/bin/snakemake", "--cores", "2"], "/w", "/w"),
        (["/v/bin/snakemake", "--directory", "/t", "-n"], "/w", "/t"),
        (["python3", "-m", "snakemake", "-d", "t"], "/w", "/w/t"),
        (["/v/bin/python", "/t/.snakemake/scripts/tmpab12.fit.py"], "/w", "/t"),
        (["/v/bin/python", "-m", "pytest", "tests/workflow"], "/w", None),
        (["make", "run"], "/w", None),
    ],
)
def test_snakemake_and_its_job_scripts_are_told_from_other_processes(cmdline, cwd, folder):
    got = resume._process_workdir(cmdline, cwd)
    assert got == (None if folder is None else Path(folder).resolve())


def test_a_second_run_in_the_folder_stops_at_once(tmp_path):
    fd = resume.take_folder_lock(tmp_path)
    try:
        with pytest.raises(SystemExit, match="another `make run` is running in"):
            resume.take_folder_lock(tmp_path)
    finally:
        os.close(fd)  # the OS lock goes with its descriptor, as with the process
    os.close(resume.take_folder_lock(tmp_path))


def test_no_snakemake_runs_in_a_fresh_folder(tmp_path):
    assert resume.running_snakemakes(tmp_path) == []
    assert resume.snakemake_locks(tmp_path) == []
