"""Task names as people write them stay whole through the files between rules and the
table writers; tags that are no task of their own are named and left out; records of two
data sources never make one table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from kclf_workflow.datasets.audio_collections import (
    decode_tags,
    degenerate_tags,
    encode_tags,
    experiment_clips,
    read_tag_file,
    write_tag_file,
)
from kclf_workflow.records import read_records, record, records_source, write_records
from kclf_workflow.reports.tables import md_escape, tex_escape

NAMES = ["001 - Dog bark", "Rain, heavy", "v1.2-beta", "Ålesund ünd Straße", "a|b", "NA"]


def test_tags_survive_the_clip_table_and_the_tag_file(tmp_path):
    cells = [encode_tags([n]) for n in NAMES] + [encode_tags(NAMES)]
    pd.DataFrame({"tags": cells}).to_csv(tmp_path / "clips.csv", index=False)
    back = pd.read_csv(tmp_path / "clips.csv")["tags"]
    assert [decode_tags(c) for c in back] == [(n,) for n in NAMES] + [tuple(NAMES)]
    assert decode_tags("") == () and decode_tags(float("nan")) == ()
    write_tag_file(tmp_path / "tags.json", NAMES, {"x y": "why"}, "my clips")
    assert read_tag_file(tmp_path / "tags.json") == {
        "tags": NAMES,
        "left_out": {"x y": "why"},
        "source": "my clips",
    }


def test_degenerate_tags_are_the_constant_and_the_repeated_ones():
    Y = np.array([[1, 1, 1, 0, 1], [1, 0, 0, 1, 1], [0, 1, 1, 0, 1], [0, 0, 0, 1, 1]])
    tags = ["dog", "bark", "barking", "rain", "-"]
    assert degenerate_tags(Y, tags) == {
        "barking": "the same clips as 'bark'",
        "-": "carried by every clip",
    }
    assert degenerate_tags(np.eye(3), ["a", "b", "c"]) == {}


def test_experiment_clips_keep_folder_names_whole_and_leave_out_duplicates(tmp_path):
    rng = np.random.default_rng(0)
    root = tmp_path / "meta"
    root.mkdir()
    rows = []
    for i in range(8):
        sf.write(root / f"c{i}.wav", 0.1 * rng.normal(size=8000), 8000)
        tags = "dog bark" if i < 4 else "rain"  # 'bark' always with 'dog': one task
        rows.append({"id": f"c{i}", "file": f"c{i}.wav", "tags": tags, "duration": 1.0})
    pd.DataFrame(rows).to_csv(root / "metadata.csv", index=False)
    selection = {"n_top_tags": 50, "min_seconds": 0.5, "max_seconds": 60.0}
    clips, tags, dropped, left_out = experiment_clips("freesound", root, "error", selection)
    assert tags == ["bark", "rain"] and left_out == {"dog": "the same clips as 'bark'"}

    folders = tmp_path / "folders"
    for name in ("001 - Dog bark", "002 - Rain, heavy"):
        (folders / name).mkdir(parents=True)
        for i in range(3):
            sf.write(folders / name / f"{i}.ogg", 0.1 * rng.normal(size=8000), 8000)
    (folders / "README.txt").write_text("the collection's own notes")
    clips, tags, _, left_out = experiment_clips("folder", folders, "error", selection)
    assert tags == ["001 - Dog bark", "002 - Rain, heavy"] and left_out == {}
    assert sorted(decode_tags(t) for t in clips["tags"]) == sorted(
        [("001 - Dog bark",)] * 3 + [("002 - Rain, heavy",)] * 3
    )


def test_markup_escapes():
    assert md_escape("a|b") == "a\\|b"
    assert tex_escape("co_50% & $x$ #1 {y} ~^\\") == (
        r"co\_50\% \& \$x\$ \#1 \{y\} \textasciitilde{}\textasciicircum{}\textbackslash{}"
    )


def test_records_keep_the_data_source_and_task_names_like_na(tmp_path):
    rows = [record("d", n, "LSPC-new", 0, "auc", 0.5) for n in NAMES]
    write_records(rows, tmp_path / "a.csv", source="PASCAL VOC2010 train -> val")
    write_records(rows, tmp_path / "b.csv", source="PASCAL VOC2010 train -> val")
    write_records(rows, tmp_path / "old.csv")
    recs = read_records([tmp_path / "a.csv", tmp_path / "b.csv"])
    assert sorted(set(recs["task"])) == sorted(NAMES)
    assert records_source(recs, "config title") == "PASCAL VOC2010 train -> val"
    assert records_source(read_records(tmp_path / "old.csv"), "config title") == "config title"
    write_records(rows, tmp_path / "c.csv", source="Generated VOCdevkit images")
    with pytest.raises(ValueError, match="different data: 'PASCAL VOC2010 train -> val'; "):
        records_source(read_records([tmp_path / "a.csv", tmp_path / "c.csv"]))
