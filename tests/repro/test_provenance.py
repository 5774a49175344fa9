"""kclf_workflow.provenance: config hash, git, package versions, machine, benchmark run times."""

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kclf import __version__
from kclf_workflow import provenance

ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def test_config_hash_is_sha256_of_canonical_json():
    cfg = {"b": [1, 2.5], "a": {"y": "z", "x": None}}
    expected = hashlib.sha256(b'{"a":{"x":null,"y":"z"},"b":[1,2.5]}').hexdigest()
    assert provenance.config_hash(cfg) == expected


def test_config_hash_ignores_key_order_but_not_values():
    a = {"seed": 0, "lspc_toy": {"trials": 2, "enabled": True}}
    b = {"lspc_toy": {"enabled": True, "trials": 2}, "seed": 0}
    c = {"lspc_toy": {"enabled": True, "trials": 3}, "seed": 0}
    assert provenance.config_hash(a) == provenance.config_hash(b)
    assert provenance.config_hash(a) != provenance.config_hash(c)


def test_config_hash_rejects_non_dict():
    with pytest.raises(ValueError, match="config must be a dict"):
        provenance.config_hash(["seed", 0])


def test_read_lock_and_mismatches(tmp_path):
    lock = tmp_path / "req.lock"
    lock.write_text("# pinned\nNumPy==2.4.6\nscikit_learn==1.9.1  # comment\n\n-e .\nabsent==1.0\n")
    pins = provenance.read_lock(lock)
    assert pins == {"numpy": "2.4.6", "scikit-learn": "1.9.1", "absent": "1.0"}
    installed = {"numpy": "2.4.6", "scikit-learn": "1.8.0"}
    assert provenance.lock_mismatches(installed, pins) == {
        "absent": {"pinned": "1.0", "installed": None},
        "scikit-learn": {"pinned": "1.9.1", "installed": "1.8.0"},
    }


def test_read_lock_names_the_bad_line(tmp_path):
    lock = tmp_path / "req.lock"
    lock.write_text("numpy==2.4.6\nscipy>=1.0\n")
    with pytest.raises(ValueError, match=r"req\.lock:2: not an exact"):
        provenance.read_lock(lock)


def test_this_environment_matches_the_lock_file():
    installed = provenance.installed_packages()
    pins = provenance.read_lock(ROOT / "requirements.lock")
    assert provenance.lock_mismatches(installed, pins) == {}


def test_git_info_outside_a_repo_is_empty(tmp_path):
    assert provenance.git_info(tmp_path) == {"commit": None, "branch": None, "dirty": None}


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_git_info_reads_commit_and_dirtiness(tmp_path):
    def git(*args):
        return subprocess.run(
            ["git", "-C", str(tmp_path), *args], check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q", "-b", "trunk")
    (tmp_path / "f.txt").write_text("1\n")
    git("add", "f.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    info = provenance.git_info(tmp_path)
    assert info == {"commit": git("rev-parse", "HEAD"), "branch": "trunk", "dirty": False}
    (tmp_path / "f.txt").write_text("2\n")
    assert provenance.git_info(tmp_path)["dirty"] is True


def _write_bench(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time"
    lines = [header] + [f"{s}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}" for s, rss, cpu in rows]
    path.write_text("\n".join(lines) + "\n")


def test_benchmark_summary_sums_per_rule(tmp_path):
    _write_bench(tmp_path / "fit" / "a" / "m1.tsv", [(2.0, 100.0, 1.5)])
    _write_bench(tmp_path / "fit" / "b" / "m1.tsv", [(4.0, 300.0, 3.0), (6.0, 200.0, 5.0)])
    _write_bench(tmp_path / "prepare" / "a.tsv", [(0.5, 50.0, 0.25)])
    got = provenance.benchmark_summary(tmp_path)
    # repeats within one file count as one job of their mean time (5 s for fit/b).
    assert got["fit"] == {
        "jobs": 2,
        "total_s": 7.0,
        "max_s": 5.0,
        "mean_s": 3.5,
        "cpu_s": 1.5 + 4.0,
        "max_rss_mb": 300.0,
    }
    assert got["prepare"]["jobs"] == 1 and got["prepare"]["total_s"] == 0.5
    assert list(got) == ["fit", "prepare"]
    assert provenance.benchmark_summary(tmp_path / "missing") == {}


def test_benchmark_summary_rejects_foreign_tsv(tmp_path):
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "x.tsv").write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match=r"x\.tsv: not a Snakemake benchmark"):
        provenance.benchmark_summary(tmp_path)


@pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed in this venv")
def test_benchmark_summary_reads_real_snakemake_benchmarks(tmp_path):
    (tmp_path / "Snakefile").write_text(
        "rule all:\n"
        "    input: expand('out/{i}.txt', i=[1, 2])\n"
        "rule nap:\n"
        "    output: 'out/{i}.txt'\n"
        "    benchmark: 'results/benchmarks/nap/{i}.tsv'\n"
        "    shell: 'sleep 0.3; touch {output}'\n"
    )
    subprocess.run(
        [str(SNAKEMAKE), "--cores", "1", "--quiet", "all"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    got = provenance.benchmark_summary(tmp_path / "results" / "benchmarks")
    assert got["nap"]["jobs"] == 2
    assert got["nap"]["max_s"] >= 0.3
    assert got["nap"]["total_s"] >= 0.6


def test_collect_is_json_and_complete(tmp_path):
    _write_bench(tmp_path / "bench" / "fit" / "x.tsv", [(1.25, 10.0, 1.0)])
    cfg = {"seed": 1}
    prov = provenance.collect(
        cfg,
        repo_dir=ROOT,
        benchmarks_dir=tmp_path / "bench",
        lock_file=ROOT / "requirements.lock",
    )
    back = json.loads(json.dumps(prov))
    assert back["config_sha256"] == provenance.config_hash(cfg)
    assert back["kclf_version"] == __version__
    assert back["packages"]["numpy"] == provenance.installed_packages()["numpy"]
    assert back["lock_mismatches"] == {}
    assert back["rules"]["fit"]["total_s"] == 1.25
    assert back["machine"]["cpu_count"] >= 1
    assert set(back["machine"]["thread_env"]) == set(provenance.THREAD_ENV_VARS)
    if shutil.which("git") and (ROOT / ".git").exists():
        assert len(back["git"]["commit"]) == 40


def test_write_json_and_html(tmp_path):
    prov = provenance.collect({"seed": 0, "note": "<b>&</b>"}, repo_dir=tmp_path)
    prov["rules"] = {"fit<x>": {"jobs": 1, "total_s": 1.0}}
    provenance.write_json(prov, tmp_path / "p.json")
    assert json.loads((tmp_path / "p.json").read_text())["config_sha256"] == prov["config_sha256"]
    provenance.write_html(prov, tmp_path / "p.html")
    page = (tmp_path / "p.html").read_text()
    assert prov["config_sha256"] in page
    assert "fit&lt;x&gt;" in page and "fit<x>" not in page
