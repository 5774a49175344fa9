"""A table names the data it was computed from.

A finished run of the generated sources, then a paper config or another source of the
user's: the dry run plans that source's whole data chain, and no planned job reads a data
file the finished run wrote for another source (the VOC and audio families keep each
source's data in its own folder; the other families key theirs by data set name).  And
every ``snakemake`` command shown in the README and in the paper configs' comments runs
as written (its dry run)."""

from __future__ import annotations

import hashlib
import re
import shlex
import shutil
import subprocess
import tarfile

import pytest
import workflow_run as wf

from kclf_workflow.datasets.synthetic_voc import make_synthetic_voc

pytestmark = pytest.mark.slow

ROOT = wf.ROOT
PAPER_CONFIGS = sorted((ROOT / "workflow" / "configs").glob("*.yaml"))

TINY = {
    "voc": {
        "enabled": True,
        "synthetic": {"n_images": 24, "size": [96, 72]},
        "features": {"images_per_shard": 12},
        "vocabulary": {"n_words": 8, "sample_size": 2000},
        "experiment": {
            "n_train": 12,
            "trials": 1,
            "trials_per_job": 1,
            "methods": ["LSPC-new"],
            "sigma_factors": [1.0],
            "lams": [0.1],
        },
    },
    "audio": {
        "enabled": True,
        "synthetic": {"n_clips": 12, "min_seconds": 3.0, "max_seconds": 3.2},
        "features": {"sample_rate": 8000, "n_shards": 1},
        "hmm": {"n_states": 2, "n_iter": 2},
        "kernel": {"n_shards": 1},
        "experiment": {
            "n_train": 6,
            "n_test": 6,
            "min_positives": 1,
            "trials": 1,
            "trials_per_job": 1,
            "methods": ["LSPC-new"],
            "lams": [0.1],
        },
    },
}


def _tiny_config(**over):
    cfg = wf.tiny_config("tiny")
    cfg["lspc_toy"]["enabled"] = False
    cfg["scene"]["enabled"] = False
    cfg["mirror"] = str(ROOT.parent / "shared" / "data")  # as ../shared/data from the clone
    for key, block in TINY.items():
        cfg[key] = wf._merge(cfg[key], block)
    for key, block in over.items():
        cfg[key] = wf._merge(cfg[key], block)
    return cfg


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run of the generated VOC images and audio clips (tables included)."""
    work = wf.make_workdir(tmp_path_factory.mktemp("sources"))
    (work / "config.yaml").write_text(wf.yaml.safe_dump(_tiny_config(), sort_keys=True))
    wf.run(work, cores=2, timeout=600)
    assert (work / "results/tables/voc_auc.csv").is_file()
    assert (work / "results/tables/audio_auc.csv").is_file()
    return work


def _plan(work, *args):
    """``[(rule, inputs, outputs)]`` of a dry run in ``work`` with extra arguments."""
    proc = subprocess.run(
        [str(wf.SNAKEMAKE), "-s", str(wf.SNAKEFILE), "-n", "--nocolor", *map(str, args)],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    jobs, current = [], None
    for line in (proc.stdout + proc.stderr).splitlines():
        m = re.match(r"^(?:local)?(?:rule|checkpoint) (\w+):", line)
        if m:
            current = (m.group(1), [], [])
            jobs.append(current)
        elif current is not None and re.match(r"^\s+(input|output): ", line):
            kind, files = line.strip().split(": ", 1)
            current[1 if kind == "input" else 2].extend(files.split(", "))
    return [j for j in jobs if j[0] != "all"]


def _stale_reads(work, jobs):
    """Data files of the finished run that a planned job would read without any planned
    job writing them again."""
    written = {f for _, _, outs in jobs for f in outs}
    return sorted(
        (rule, f)
        for rule, ins, _ in jobs
        for f in ins
        if f.startswith("results/data/") and (work / f).exists() and f not in written
    )


def _header_command(config):
    """The snakemake command in a paper config's header comment."""
    text = config.read_text()
    lines = [line[1:].strip() for line in text.splitlines() if line.startswith("#")]
    joined = "\n".join(lines).replace("\\\n", " ")
    shown = [line for line in joined.splitlines() if line.startswith("snakemake ")]
    return shown[0] if shown else None


@pytest.mark.parametrize("config", PAPER_CONFIGS, ids=lambda p: p.stem)
def test_a_paper_config_after_the_generated_run_reads_only_its_own_data(finished, config):
    command = _header_command(config)
    assert command, f"{config.name} shows no snakemake command in its header"
    args = shlex.split(command)[1:]
    args = [str(ROOT / a) if a.startswith("workflow/configs/") else a for a in args]
    args = ["2" if a == "N" else a for a in args]
    jobs = _plan(finished, *args)
    assert jobs, f"{config.name}: nothing planned"
    assert _stale_reads(finished, jobs) == []
    rules = {r for r, _, _ in jobs}
    text = config.read_text()
    if re.search(r"^voc:\n(?:\s.*\n)*?\s+source: download", text, re.M):
        assert {"download_voc_VOCtrainval_03_May_2010_tar", "voc_extract"} <= rules, rules
    if re.search(r"^audio:\n(?:\s.*\n)*?\s+source: esc50", text, re.M):
        assert "audio_extract" in rules, rules


def _devkit_tar(tmp_path):
    src = tmp_path / "src" / "VOCdevkit" / "VOC2010"
    make_synthetic_voc(src, n_images=16, seed=5, size=(96, 72), png_fraction=0.0)
    tar_path = tmp_path / "mirror" / "voc" / "VOCtrainval_03-May-2010.tar"
    tar_path.parent.mkdir(parents=True)
    with tarfile.open(tar_path, "w") as tar:
        tar.add(src.parent, arcname="VOCdevkit")
    return src, tar_path


def test_voc_download_devkit_and_folder_each_plan_their_whole_chain(finished, tmp_path):
    src, tar_path = _devkit_tar(tmp_path)
    data = tar_path.read_bytes()
    download = {
        "url": "https://example.invalid/VOCtrainval_03-May-2010.tar",  # never contacted
        "sha256": hashlib.sha256(data).hexdigest(),
        "md5": None,
    }
    folder = tmp_path / "imgs"
    images = sorted((src / "JPEGImages").iterdir())
    for k, name in enumerate(["a b", "c, d"]):
        (folder / name).mkdir(parents=True)
        for image in images[k::2]:
            shutil.copy(image, folder / name / image.name)
    sources = {
        "download": {"source": "download", "download": download},
        "devkit": {"voc_root": str(src)},
        "folder": {"image_folder": str(folder)},
    }
    work = finished
    original = (work / "config.yaml").read_text()
    try:
        for name, block in sources.items():
            cfg = _tiny_config(voc=block, audio={"enabled": False})
            cfg["mirror"] = str(tmp_path / "mirror")
            (work / "config.yaml").write_text(wf.yaml.safe_dump(cfg, sort_keys=True))
            jobs = _plan(work, "results/tables/voc_auc.csv")
            rules = [r for r, _, _ in jobs]
            assert _stale_reads(work, jobs) == [], name
            chain = {"download": ["download_voc_VOCtrainval_03_May_2010_tar", "voc_extract"]}.get(
                name, ["voc_manifest", "voc_surf_shard", "voc_vocabulary", "voc_bow_shard"]
            )
            assert set(chain) <= set(rules), (name, rules)
            assert {"voc_dataset", "voc_fit", "voc_table"} <= set(rules), (name, rules)
            assert not any("voc-synthetic" in f for _, ins, _ in jobs for f in ins), name
    finally:
        (work / "config.yaml").write_text(original)
    assert wf.planned_jobs(wf.run(work, "-n", cores=1).stdout) == {}  # back: nothing to do


def test_audio_folder_after_the_generated_run_plans_its_chain(finished, tmp_path):
    import numpy as np
    import soundfile as sf

    rng = np.random.default_rng(0)
    for tag in ("Rain, heavy", "001 - Dog bark"):
        (tmp_path / "clips" / tag).mkdir(parents=True)
        for i in range(5):
            sf.write(tmp_path / "clips" / tag / f"{i}.wav", rng.normal(size=8000) * 0.1, 8000)
    work = finished
    original = (work / "config.yaml").read_text()
    try:
        cfg = _tiny_config(
            voc={"enabled": False},
            audio={
                "source": "folder",
                "root": str(tmp_path / "clips"),
                "selection": {"min_seconds": 0.5},
            },
        )
        (work / "config.yaml").write_text(wf.yaml.safe_dump(cfg, sort_keys=True))
        jobs = _plan(work, "results/tables/audio_auc.csv")
    finally:
        (work / "config.yaml").write_text(original)
    rules = {r for r, _, _ in jobs}
    assert {"audio_manifest", "audio_clips", "audio_hmm_shard", "audio_kernel"} <= rules, rules
    assert _stale_reads(work, jobs) == []


def test_records_of_the_table_name_the_data_in_its_caption(finished):
    import pandas as pd

    records = pd.concat(pd.read_csv(p) for p in (finished / "results/records/voc").glob("*.csv"))
    assert set(records["source"]) == {"Generated VOCdevkit images (offline stand-in for VOC2010)"}
    md = (finished / "results/tables/voc_auc.md").read_text()
    assert md.startswith("Generated VOCdevkit images (offline stand-in for VOC2010): test AUC")


# --- every command shown runs as written ------------------------------------------------


def _shown_commands():
    """(where, command) of every snakemake command in the README's and the user guide's
    code blocks and inline code, and in the paper configs' comments; report, unlock and
    lint commands, and the Makefile's ``$(CORES)``, are not dry-runnable and left out."""
    found = []
    pages = [ROOT / "README.md", *sorted((ROOT / "docs" / "user_guide").glob("*.md"))]
    for page in pages:
        text, where = page.read_text(encoding="utf-8"), str(page.relative_to(ROOT))
        for block in re.findall(r"```(?:bash|sh)?\n(.*?)```", text, re.S):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split(" #", 1)[0].strip()
                if line.startswith("snakemake "):
                    found.append((where, line))
        for inline in re.findall(r"`(snakemake [^`]+)`", text):
            found.append((where, inline))
    for config in PAPER_CONFIGS:
        command = _header_command(config)
        if command:
            found.append((config.name, command))
    skip = ("--report", "--unlock", "--lint", "$(")
    return sorted({(w, c) for w, c in found if not any(s in c for s in skip)})


SHOWN = _shown_commands()


def test_the_readme_and_the_configs_show_commands():
    assert len(SHOWN) >= 8, SHOWN
    assert any(w.endswith(".yaml") for w, _ in SHOWN)


@pytest.mark.parametrize("where,command", SHOWN, ids=[c for _, c in SHOWN])
def test_a_shown_command_runs_as_written(where, command):
    """Its dry run from the repository root, as a reader would type it (no lock taken,
    so a run in progress there is left alone)."""
    args = ["2" if a == "N" else a for a in shlex.split(command)[1:]]
    proc = subprocess.run(
        [str(wf.SNAKEMAKE), *args, "--dry-run", "--quiet", "rules", "--nolock"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"{where}: {command}\n{(proc.stdout + proc.stderr)[-3000:]}"
