"""Audio collections: generated clips, Freesound-style folders, ESC-50, UrbanSound8K."""

import os
import zipfile

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from kclf_workflow.datasets.audio_collections import (
    COLUMNS,
    ESC50_ARCHIVE,
    fetch_esc50,
    load_collection,
    load_esc50,
    load_freesound_folder,
    load_urbansound8k,
    parse_tags,
    select_clips,
    tag_matrix,
    top_tags,
)
from kclf_workflow.datasets.synthetic_audio import EVENT_KINDS, make_synthetic_collection

URBAN = "urbansound8k_sample/UrbanSound8K"


def test_synthetic_collection_layout_and_variety(tmp_path):
    meta = make_synthetic_collection(tmp_path, 24, seed=3)
    assert list(meta["id"]) == [f"synth{k:05d}" for k in range(1, 25)]
    for row in meta.itertuples():
        info = sf.info(str(tmp_path / row.file))
        assert info.samplerate == row.sample_rate
        assert info.channels == row.channels
        assert info.subtype == row.subtype
        assert info.duration == pytest.approx(row.duration, abs=1e-4)
        tags = row.tags.split()
        assert 1 <= len(tags) <= 3 and set(tags) <= set(EVENT_KINDS)
    # the collection's variety: mixed rates, some stereo, several WAV sample formats
    assert meta["sample_rate"].nunique() >= 3
    assert (meta["channels"] == 2).any() and (meta["channels"] == 1).any()
    assert meta["subtype"].nunique() >= 2
    assert set(" ".join(meta["tags"]).split()) == set(EVENT_KINDS)


def test_synthetic_collection_is_stable_and_not_rewritten(tmp_path):
    make_synthetic_collection(tmp_path / "a", 5, seed=3)
    first = (tmp_path / "a" / "audio" / "synth00002.wav").read_bytes()
    past = 1_000_000_000
    os.utime(tmp_path / "a" / "audio" / "synth00002.wav", (past, past))
    meta = make_synthetic_collection(tmp_path / "a", 8, seed=3)
    assert (tmp_path / "a" / "audio" / "synth00002.wav").stat().st_mtime == past
    assert (tmp_path / "a" / "audio" / "synth00002.wav").read_bytes() == first
    assert len(meta) == 8
    other = make_synthetic_collection(tmp_path / "b", 2, seed=4)
    assert (tmp_path / "b" / "audio" / "synth00002.wav").read_bytes() != first
    assert len(other) == 2
    with pytest.raises(ValueError, match="n_clips"):
        make_synthetic_collection(tmp_path / "c", 0)


def test_freesound_folder_round_trip(tmp_path):
    meta = make_synthetic_collection(tmp_path, 6, seed=1)
    df = load_collection("freesound", tmp_path)
    assert list(df.columns) == COLUMNS
    assert df["id"].tolist() == meta["id"].tolist()
    assert all(os.path.isabs(p) and os.path.isfile(p) for p in df["path"])
    assert [" ".join(t) for t in df["tags"]] == meta["tags"].tolist()
    # duration read from the header when the csv leaves it out
    pd.DataFrame({"id": meta["id"], "file": meta["file"], "tags": meta["tags"]}).to_csv(
        tmp_path / "nodur.csv", index=False
    )
    df2 = load_freesound_folder(tmp_path, metadata="nodur.csv")
    np.testing.assert_allclose(df2["duration"], meta["duration"], atol=1e-4)
    (tmp_path / meta["file"][0]).unlink()
    with pytest.raises(FileNotFoundError, match="1 audio files"):
        load_freesound_folder(tmp_path)
    assert len(load_freesound_folder(tmp_path, missing="drop")) == 5
    pd.DataFrame({"id": ["a"], "tags": ["x"]}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="missing columns"):
        load_freesound_folder(tmp_path, metadata="bad.csv")
    with pytest.raises(ValueError, match="layout"):
        load_collection("freesounds", tmp_path)


def test_parse_tags():
    assert parse_tags("Dog  bark,street dog") == ("dog", "bark", "street")
    assert parse_tags(float("nan")) == ()
    assert parse_tags("") == ()


def test_selection_follows_the_paper():
    # tag counts: a x4, b x3, c x2, d x1 ; top-2 = a, b
    df = pd.DataFrame(
        {
            "id": list("123456"),
            "path": ["/x"] * 6,
            "duration": [2.0, 3.0, 10.0, 60.0, 61.0, 30.0],
            "tags": [("a",), ("a", "c"), ("b", "c"), ("a", "b"), ("a", "b"), ("d",)],
        }
    )
    assert top_tags(df, 2) == ["a", "b"]
    assert top_tags(df, 3) == ["a", "b", "c"]
    out, tags = select_clips(df, n_top_tags=2, min_seconds=3, max_seconds=60)
    # clip 1 too short, clip 5 too long, clip 6 has no top tag
    assert out["id"].tolist() == ["2", "3", "4"]
    assert out["tags"].tolist() == [("a",), ("b",), ("a", "b")]
    assert tags == ["a", "b"]
    Y = tag_matrix(out, tags)
    np.testing.assert_array_equal(Y, [[1, 0], [0, 1], [1, 1]])
    out2, _ = select_clips(df, n_top_tags=50, min_seconds=None, max_seconds=None)
    assert len(out2) == 6
    # an unreadable header (no duration) is kept for the feature step to report
    df.loc[0, "duration"] = np.nan
    assert select_clips(df, n_top_tags=2, min_seconds=3, max_seconds=60)[0]["id"].tolist() == [
        "1",
        "2",
        "3",
        "4",
    ]
    with pytest.raises(ValueError, match="min_seconds"):
        select_clips(df, min_seconds=10, max_seconds=5)
    with pytest.raises(ValueError, match="n_top_tags"):
        select_clips(df, n_top_tags=0)


def _esc50_tree(root):
    rows = []
    for k, (cat, target) in enumerate([("dog", 0), ("rain", 10), ("dog", 0)]):
        name = f"1-{100 + k}-A-{target}.wav"
        (root / "audio").mkdir(parents=True, exist_ok=True)
        sf.write(root / "audio" / name, 0.1 * np.ones(5 * 8000), 8000)
        rows.append(
            {
                "filename": name,
                "fold": 1,
                "target": target,
                "category": cat,
                "esc10": True,
                "src_file": 100 + k,
                "take": "A",
            }
        )
    (root / "meta").mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(root / "meta" / "esc50.csv", index=False)


def test_esc50_layout(tmp_path):
    _esc50_tree(tmp_path / "ESC-50-master")
    df = load_esc50(tmp_path / "ESC-50-master")
    assert df["id"].tolist() == ["1-100-A-0", "1-101-A-10", "1-102-A-0"]
    assert df["tags"].tolist() == [("dog",), ("rain",), ("dog",)]
    np.testing.assert_allclose(df["duration"], 5.0)
    with pytest.raises(FileNotFoundError, match="esc50.csv"):
        load_esc50(tmp_path)


def test_fetch_esc50_from_a_mirror_archive(tmp_path):
    from kclf_workflow.download import ChecksumError
    from kclf_workflow.files import file_sha256

    _esc50_tree(tmp_path / "src" / "ESC-50-master")
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    archive = mirror / ESC50_ARCHIVE
    with zipfile.ZipFile(archive, "w") as z:
        for p in sorted((tmp_path / "src").rglob("*")):
            z.write(p, p.relative_to(tmp_path / "src"))
    url = "https://example.invalid/ESC-50-master.zip"  # never contacted: the mirror has it
    root = fetch_esc50(tmp_path / "cache", file_sha256(archive), url, mirror=mirror)
    assert root.name == "ESC-50-master"
    assert len(load_esc50(root)) == 3
    with pytest.raises(ChecksumError):
        fetch_esc50(tmp_path / "cache2", "0" * 64, url, mirror=mirror)


def test_urbansound8k_real_sample(shared_data):
    root = shared_data / URBAN
    with pytest.raises(FileNotFoundError, match="missing"):
        load_urbansound8k(root)  # the csv excerpt lists 36 clips, 15 are present
    df = load_urbansound8k(root, missing="drop")
    assert len(df) == 15
    assert all(os.path.isfile(p) for p in df["path"])
    # labels from the csv agree with the class id in the file name ([fsID]-[classID]-...)
    meta = pd.read_csv(root / "metadata" / "UrbanSound8K.csv")
    names = dict(zip(meta["classID"], meta["class"]))
    for cid, tags in zip(df["id"], df["tags"]):
        assert tags == (names[int(cid.split("-")[1])],)
    # the csv's fold column does not match the folder: files are found anyway
    assert set(
        meta.set_index("slice_file_name").loc[[os.path.basename(p) for p in df["path"]], "fold"]
    ) != {1}
    row = meta.set_index("slice_file_name").loc["100648-1-0-0.wav"]
    got = df.set_index("id").loc["100648-1-0-0", "duration"]
    assert got == pytest.approx(row["end"] - row["start"])
    assert sorted({t[0] for t in df["tags"]}) == [
        "air_conditioner",
        "car_horn",
        "children_playing",
        "dog_bark",
        "street_music",
    ]
