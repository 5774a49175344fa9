"""The audio family's raw inputs are declared: on a finished run over real clips (a copy of
the mirror's 15 UrbanSound8K clips, in their own layout and in the Freesound layout), a
clip whose bytes change reruns its shard's manifest and HMMs and what follows, nothing
else; a tag changed in the metadata reruns the clip list, the fits and the table (no HMM,
no kernel), and the table then carries the new label."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf
import workflow_run as wf
import yaml

from kclf_workflow.datasets.audio_collections import decode_tags
from kclf_workflow.shards import shard_of

pytestmark = pytest.mark.slow

SAMPLE = wf.ROOT.parent / "shared" / "data" / "urbansound8k_sample" / "UrbanSound8K"
N_SHARDS = 2
CLIP = "100648-1-0-0"  # a car_horn clip present on disk
ROW_SHARDS = 2


def _freesound_copy(dest):
    """The sample's clips in the Freesound layout: audio/<id>.wav and metadata.csv (id,
    file, tags, duration), plus the first two listed clips that are not on disk."""
    meta = pd.read_csv(SAMPLE / "metadata" / "UrbanSound8K.csv")
    meta["present"] = [(SAMPLE / "audio" / "fold1" / n).is_file() for n in meta["slice_file_name"]]
    meta = pd.concat([meta[meta["present"]], meta[~meta["present"]].head(2)])
    (dest / "audio").mkdir(parents=True)
    for name in meta.loc[meta["present"], "slice_file_name"]:
        shutil.copy2(SAMPLE / "audio" / "fold1" / name, dest / "audio" / name)
    pd.DataFrame(
        {
            "id": [Path(n).stem for n in meta["slice_file_name"]],
            "file": [f"audio/{n}" for n in meta["slice_file_name"]],
            "tags": meta["class"],
            "duration": meta["end"] - meta["start"],
        }
    ).to_csv(dest / "metadata.csv", index=False)


@pytest.fixture(scope="module", params=["urbansound8k", "freesound"])
def finished(request, tmp_path_factory):
    if not SAMPLE.is_dir():
        pytest.skip(f"real-audio sample {SAMPLE} not present")
    base = tmp_path_factory.mktemp(f"audio_{request.param}")
    root = base / "collection"
    if request.param == "urbansound8k":
        shutil.copytree(SAMPLE, root)
        metadata = root / "metadata" / "UrbanSound8K.csv"
        audio = root / "audio" / "fold1"
    else:
        _freesound_copy(root)
        metadata = root / "metadata.csv"
        audio = root / "audio"
    work = wf.make_workdir(base / "work", "tiny")
    cfg = yaml.safe_load((work / "config.yaml").read_text())
    cfg["lspc_toy"]["enabled"] = False
    cfg["audio"] = {
        "enabled": True,
        "source": request.param,
        "root": str(root),
        "missing_files": "drop",
        "reference": None,
        "selection": {"n_top_tags": 50, "min_seconds": 0.0, "max_seconds": 60.0},
        "features": {"sample_rate": 8000, "n_shards": N_SHARDS},
        "hmm": {"n_states": 2, "n_iter": 3},
        "kernel": {"n_shards": ROW_SHARDS},
        "experiment": {
            "n_train": 8,
            "n_test": 7,
            "trials": 2,
            "trials_per_job": 2,
            "min_positives": 1,
            "methods": ["LSPC-new"],
            "lams": [0.1],
        },
    }
    (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True))
    wf.run(work, cores=2, timeout=900)
    return work, request.param, metadata, audio


def test_dropped_clips_are_named_in_log_and_caption(finished):
    work, layout, metadata, _ = finished
    dropped = wf.data_dir(work, layout).joinpath("dropped.txt").read_text().split()
    listed = pd.read_csv(metadata)
    assert len(dropped) == len(listed) - 15 == (20 if layout == "urbansound8k" else 2)
    caption = (work / "results/tables/audio_auc.md").read_text().split("\n\n")[0]
    log = (work / "results/logs/audio_clips/all.log").read_text()
    for path in dropped:
        assert Path(path).name in caption
        assert f"dropped (listed in the metadata, missing on disk): {path}" in log
    assert f"{len(dropped)} clip(s) listed in the metadata but missing on disk" in caption


def test_changed_clip_reruns_its_shard_and_what_follows(finished):
    work, layout, _, audio = finished
    assert wf.dry_run(work) == []
    clip = audio / f"{CLIP}.wav"
    original, st = clip.read_bytes(), clip.stat()
    x, sr = sf.read(clip, always_2d=True)
    info = sf.info(clip)
    sf.write(clip, np.clip(-0.5 * x, -1, 1), sr, subtype=info.subtype)  # new bytes, same clip
    try:
        k = shard_of(CLIP, N_SHARDS)
        expected = [
            ("audio_manifest", f"k={k}"),
            ("audio_hmm_shard", f"k={k}"),
            ("audio_bad_clips", ""),
            ("audio_kernel", ""),
            ("audio_fit", "method=lspc_new, trials=0-1"),
            ("audio_table", ""),
            ("provenance", ""),
        ] + [("audio_loglik_shard", f"r={r}") for r in range(ROW_SHARDS)]
        assert wf.dry_run(work) == sorted(expected)
    finally:
        clip.write_bytes(original)
        os.utime(clip, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert wf.dry_run(work) == []  # the same bytes, size and time: nothing to do


def test_changed_tag_reruns_labels_fits_and_table_only(finished):
    work, layout, metadata, _ = finished
    text = metadata.read_text()
    column = "class" if layout == "urbansound8k" else "tags"
    meta = pd.read_csv(metadata)
    key = meta["slice_file_name"] if layout == "urbansound8k" else meta["file"]
    row = [i for i, f in enumerate(key) if Path(f).stem == CLIP][0]
    assert meta.loc[row, column] == "car_horn"
    meta.loc[row, column] = "dog_bark"
    meta.to_csv(metadata, index=False)
    try:
        assert wf.dry_run(work) == sorted(
            [
                ("audio_clips", ""),
                ("audio_fit", "method=lspc_new, trials=0-1"),
                ("audio_table", ""),
                ("provenance", ""),
            ]
        )
        wf.run(work, cores=2, timeout=600)
        clips = pd.read_csv(wf.data_dir(work, layout) / "clips.csv", dtype={"id": str})
        assert decode_tags(clips.set_index("id").loc[CLIP, "tags"]) == ("dog_bark",)
        assert wf.dry_run(work) == []
    finally:
        metadata.write_text(text)
