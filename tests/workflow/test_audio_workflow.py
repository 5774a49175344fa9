"""The audio family of the workflow on a tiny Freesound-style folder: bad clips stop the run
with their path, or (skip_bad) are left out and listed; the table comes out."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import yaml
from workflow_run import ROOT, data_dir, run  # noqa: E402

from kclf_workflow.datasets.synthetic_audio import make_synthetic_collection  # noqa: E402


def _workdir(tmp_path, collection, **features):
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    for block in cfg.values():
        if isinstance(block, dict) and "enabled" in block:
            block["enabled"] = False
    cfg["audio"] = {
        "enabled": True,
        "source": "freesound",
        "root": str(collection),
        "reference": str(ROOT.parent / "shared" / "reference" / "lspc_freesound_auc.csv"),
        "features": {"sample_rate": 8000, "n_shards": 2, **features},
        "hmm": {"n_states": 3, "n_iter": 5},
        "kernel": {"n_shards": 2},
        "experiment": {
            "n_train": 10,
            "n_test": 10,
            "trials": 2,
            "trials_per_job": 2,
            "methods": ["LSPC-new", "KLR"],
        },
    }
    work = tmp_path / "work"
    work.mkdir()
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    return work


@pytest.fixture
def collection(tmp_path):
    root = tmp_path / "fs"
    meta = make_synthetic_collection(root, 22, seed=5, duration_range=(3.0, 3.5))
    (root / "audio" / "broken.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk" + bytes(64))
    sf.write(root / "audio" / "quiet.wav", np.zeros(8000 * 4), 8000)
    # a WAV cut in the middle: decoders return the first half without an error
    sf.write(root / "audio" / "cut.wav", 0.3 * np.sin(np.arange(8000 * 4) / 5.0), 8000)
    whole = (root / "audio" / "cut.wav").read_bytes()
    (root / "audio" / "cut.wav").write_bytes(whole[: len(whole) // 2])
    extra = pd.DataFrame(
        {
            "id": ["broken", "quiet", "cut"],
            "file": ["audio/broken.wav", "audio/quiet.wav", "audio/cut.wav"],
            "tags": ["tone", "noise", "tone"],
            "duration": [4.0, 4.0, 4.0],
        }
    )
    pd.concat([meta[["id", "file", "tags", "duration"]], extra]).to_csv(
        root / "metadata.csv", index=False
    )
    return root


@pytest.mark.slow
def test_bad_clip_stops_the_run_naming_its_path(tmp_path, collection):
    work = _workdir(tmp_path, collection, skip_bad=False)
    proc = run(work, "results/logs/bad_audio.txt", check=False)
    assert proc.returncode != 0
    logs = "".join(p.read_text() for p in (work / "results/logs/audio_hmm_shard").glob("*.log"))
    assert "broken.wav: cannot decode audio" in logs + proc.stderr


@pytest.mark.slow
def test_skip_bad_lists_them_and_the_table_comes_out(tmp_path, collection):
    work = _workdir(tmp_path, collection, skip_bad=True)
    run(work, "results/tables/audio_auc.csv", timeout=600)
    bad = (work / "results/logs/bad_audio.txt").read_text().splitlines()
    names = sorted(Path(line.split("\t")[0]).name for line in bad)
    assert names == ["broken.wav", "cut.wav", "quiet.wav"]
    assert "silent" in "".join(bad) and "truncated" in "".join(bad)
    summary = json.loads((data_dir(work, "freesound") / "kernel_summary.json").read_text())
    assert summary["n_clips"] == 22 and summary["n_bad_clips"] == 3
    caption = (work / "results/tables/audio_auc.md").read_text().split("\n\n")[0]
    assert "Left out as undecodable or unusable" in caption
    assert all(n in caption for n in names), caption
    assert 0 <= summary["clipped_mass"] < 0.5 and summary["max_asymmetry"] == 0.0
    table = pd.read_csv(work / "results/tables/audio_auc.csv")
    assert set(table["method"]) == {"LSPC-new", "KLR"}
    pooled = table[table["task"] == "AUC, all tags x trials"]
    assert len(pooled) == 2 and pooled["mean"].between(0, 1).all()
    if (ROOT.parent / "shared" / "reference").is_dir():
        assert pooled.set_index("method").loc["LSPC-new", "paper_mean"] == 70.1
    assert (work / "results/figures/audio_auc.png").stat().st_size > 0
    # timings only in their own table; calibration companions beside the AUC table
    assert not table["task"].str.contains("time").any()
    assert "time" not in (work / "results/tables/audio_auc.md").read_text().split("\n\n")[1]
    times = pd.read_csv(work / "results/tables/audio_auc_time.csv")
    assert list(times["method"]) == ["LSPC-new", "KLR"] and (times["trial_seconds_mean"] > 0).all()
    cal = pd.read_csv(work / "results/tables/audio_auc_calibration.csv")
    assert sorted(cal["method"]) == ["KLR", "LSPC-new"]
    # the long jobs' logs say how far they got: units done of all, the seconds elapsed
    for rule, what in (
        ("audio_hmm_shard", r"clips \(features and HMM\)"),
        ("audio_loglik_shard", "log-likelihood blocks"),
        ("audio_fit", "(?:lspc_new|klr) trials"),
    ):
        logs = "".join(p.read_text() for p in (work / "results/logs" / rule).rglob("*.log"))
        assert re.search(rf"{what} (\d+)/\1\b.*; \d+\.\d s elapsed", logs), (rule, logs[-400:])
    # the assembled kernel is symmetric and PSD after the projection
    with np.load(data_dir(work, "freesound") / "kernel.npz") as z:
        K = z["K"]
    assert np.allclose(K, K.T) and np.linalg.eigvalsh(K).min() > -1e-9


@pytest.mark.slow
def test_random_bytes_clip_in_a_tag_folder_stops_or_is_listed_naming_the_decoders(tmp_path):
    """Its header gives no duration: the selection keeps it for the feature step to report."""
    root = tmp_path / "clips"
    rng = np.random.default_rng(4)
    for tag, f in (("low", 300.0), ("high", 1200.0)):
        (root / tag).mkdir(parents=True)
        for k in range(3):
            t = np.arange(8000 * 3 + 1600) / 8000
            y = 0.4 * np.sin(2 * np.pi * f * (1 + 0.1 * k) * t) + 0.01 * rng.normal(size=t.size)
            sf.write(root / tag / f"c{k}.wav", y, 8000)
    garbled = root / "low" / "garbled.ogg"
    garbled.write_bytes(rng.bytes(4096))
    work = _workdir(tmp_path, root, skip_bad=False, n_shards=1)
    cfg = yaml.safe_load((work / "config.yaml").read_text())
    cfg["audio"].update(source="folder", hmm={"n_states": 2, "n_iter": 3})
    cfg["audio"]["experiment"].update(n_train=4, n_test=2)
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = run(work, "results/logs/bad_audio.txt", check=False)
    assert proc.returncode != 0
    log = (work / "results/logs/audio_hmm_shard/0.log").read_text()
    line = next(x for x in log.splitlines() if x.startswith("kclf.features.audio.BadAudioError"))
    assert f"BadAudioError: {garbled}: cannot decode audio: soundfile " in line
    assert "audioread " in line and "convert the file to WAV or FLAC" in line
    cfg["audio"]["features"]["skip_bad"] = True
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    run(work, "results/logs/bad_audio.txt")
    bad = (work / "results/logs/bad_audio.txt").read_text().splitlines()
    assert len(bad) == 1 and bad[0].split("\t") == [str(garbled), line.split(f"{garbled}: ")[1]]


def test_esc50_source_plans_the_verified_download_and_root_is_required(tmp_path):
    work = _workdir(tmp_path, tmp_path)
    cfg = yaml.safe_load((work / "config.yaml").read_text())
    cfg["audio"].update({"source": "esc50", "root": None})
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = run(work, "-n", "results/tables/audio_auc.csv")
    assert "download_audio_ESC_50_master_zip" in proc.stdout
    assert "results/records/audio/esc50/" in proc.stdout
    cfg["audio"].update({"source": "urbansound8k", "root": None})
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = run(work, "-n", "results/tables/audio_auc.csv", check=False)
    assert proc.returncode != 0
    assert "audio.root' is required for source urbansound8k" in proc.stdout + proc.stderr
