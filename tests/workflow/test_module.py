"""The workflow as another project's Snakemake module (``module kclf:`` + ``use rule *``).

A project folder laid out as ``snakedeploy deploy-workflow`` writes one
(``workflow/Snakefile`` declaring the module, ``config/config.yaml`` its own config) with the
repository beside it as ``kclf/`` (a link standing for a clone); the run writes the same
tables, byte for byte, as the workflow run directly.  Its schemas, scripts, report
captions, conda files and lock are found beside the module's Snakefile, not in the
other project's folder.  A remote source for the module's Snakefile is refused in one line.
"""

from __future__ import annotations

import functools
import http.server
import json
import subprocess
import threading

import pytest
import workflow_run as wf
import yaml

pytestmark = pytest.mark.slow

MODULE_SNAKEFILE = """\
configfile: "config/config.yaml"


module kclf:
    snakefile:
        "{snakefile}"
    config:
        config


use rule * from kclf
"""


def make_project(path, snakefile):
    """A project folder with its own config (the tiny one) and ``workflow/Snakefile``
    declaring ``snakefile`` as the module kclf."""
    (path / "config").mkdir(parents=True)
    (path / "config" / "config.yaml").write_text(
        yaml.safe_dump(wf.tiny_config("tiny"), sort_keys=True)
    )
    (path / "workflow").mkdir()
    (path / "workflow" / "Snakefile").write_text(MODULE_SNAKEFILE.format(snakefile=snakefile))
    return path


def snakemake(project, *args):
    """Snakemake run in ``project`` on its own ``workflow/Snakefile`` (found by Snakemake
    itself: no --snakefile, no --directory)."""
    return subprocess.run(
        [str(wf.SNAKEMAKE), "--nocolor", *map(str, args)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env=wf.env(),
    )


def test_module_run_writes_the_tables_of_a_direct_run(tmp_path, tmp_path_factory):
    _, tables, _ = wf.reference_run(tmp_path_factory)
    project = tmp_path / "project"
    project.mkdir()
    (project / "kclf").symlink_to(wf.ROOT, target_is_directory=True)
    make_project(project, "../kclf/Snakefile")  # relative to workflow/Snakefile
    proc = snakemake(project, "--cores", 2)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert wf.table_digests(project) == tables
    # the provenance names the workflow's checkout (its lock, its commit), not the project
    prov = json.loads((project / "results" / "provenance.json").read_text())
    assert prov["config"]["seed"] == wf.tiny_config("tiny")["seed"]
    assert prov["git"]["commit"], prov["git"]
    # the HTML report finds the captions beside the module's rules
    report = snakemake(project, "--report", project / "report.html")
    assert report.returncode == 0, report.stderr[-6000:]
    assert (project / "report.html").stat().st_size > 0
    # a second run plans nothing
    again = snakemake(project, "--dry-run", "--cores", 1)
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.fixture
def served_repository():
    """The repository over HTTP on the loopback interface (a remote module source)."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(wf.ROOT))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_remote_module_source_is_refused_in_one_line(tmp_path, served_repository):
    project = make_project(tmp_path / "project", f"{served_repository}/Snakefile")
    proc = snakemake(project, "--dry-run", "--cores", 1)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "the kclf workflow runs from a local checkout" in out, out[-3000:]


def test_config_without_the_default_blocks_is_refused_in_one_line(tmp_path):
    """A module's config replaces config.yaml: a block left out is named, not a KeyError."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "kclf").symlink_to(wf.ROOT, target_is_directory=True)
    make_project(project, "../kclf/Snakefile")
    (project / "config" / "config.yaml").write_text("seed: 1\nlspc_toy:\n  enabled: true\n")
    proc = snakemake(project, "--dry-run", "--cores", 1)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "invalid config: no key 'mirror', 'audio', 'voc'" in out, out[-3000:]
    assert "start from a copy of" in out and "KeyError" not in out
