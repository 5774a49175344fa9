"""A file the workflow reads back, cut short or damaged, is one line naming the file, what
is wrong and that deleting it recomputes it -- never a bare parser traceback."""

import json
import re

import numpy as np
import pytest

from kclf_workflow.datasets.audio_collections import read_tag_file, write_tag_file
from kclf_workflow.files import save_npz
from kclf_workflow.manifests import read_manifest, write_manifest
from kclf_workflow.provenance import read_benchmark
from kclf_workflow.readers import load_json, load_npz, read_text
from kclf_workflow.records import read_records, record, write_records


def assert_one_clear_line(exc, path):
    message = str(exc)
    assert "\n" not in message, message
    assert message.startswith(f"{path}: "), message
    assert message.endswith("delete it and run again to recompute it"), message


def _records(path):
    rows = [
        record("set", task, "LSPC", trial, metric, 0.25 * trial, 1.5, {"lam": 0.1})
        for task in ("a", "b")
        for trial in (0, 1, 2)
        for metric in ("accuracy", "brier", "log_loss")
    ]
    write_records(rows, path)
    return path.read_bytes()


def test_every_cut_of_a_records_file_is_refused_but_at_a_group_end(tmp_path):
    """Cut after each byte: refused with one clear line, except at the end of a line where
    what is left is a whole records file to any reader: right after the header (a method
    that wrote no rows), after a whole (task, trial) group of rows, or inside the first
    trial of a task (no other trial to compare its metrics with)."""
    path = tmp_path / "lspc_0-2.csv"
    raw = _records(path)
    line_ends = [m.end() for m in re.finditer(b"\n", raw)]
    # rows: tasks a, b; trials 0-2 each; 3 metrics per trial
    whole = [
        end
        for k, end in enumerate(line_ends[:-1])
        if k == 0 or (k - 1) % 3 == 2 or ((k - 1) % 9) // 3 == 0
    ]
    accepted = []
    for cut in range(len(raw)):
        path.write_bytes(raw[:cut])
        try:
            read_records(path)
        except ValueError as err:
            assert_one_clear_line(err, path)
        else:
            accepted.append(cut)
    assert accepted == whole


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda t: t.replace('{""lam"": 0.1}', "{lam"), "params"),
        (lambda t: t.replace(",1,accuracy", ",one,accuracy"), "trial"),
        (lambda t: t.replace(",0.25,", ",x0.25,"), "value"),
        (lambda t: t.replace("dataset,task", "datset,task"), "missing columns"),
        (lambda t: t.replace("\n", "\n\x00\x01\n", 1), None),
    ],
)
def test_a_damaged_records_file_names_itself(tmp_path, damage, why):
    path = tmp_path / "lspc_0-2.csv"
    path.write_text(damage(_records(path).decode()))
    with pytest.raises(ValueError, match=why) as err:
        read_records([path])
    assert_one_clear_line(err.value, path)


def test_an_empty_records_file_is_refused(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(b"")
    with pytest.raises(ValueError, match="empty") as err:
        read_records(path)
    assert_one_clear_line(err.value, path)


def test_cut_or_garbled_archives_name_themselves(tmp_path):
    path = tmp_path / "data.npz"
    save_npz(path, X=np.arange(200.0).reshape(40, 5), y=np.arange(40) % 2)
    raw = path.read_bytes()
    for cut in (0, 10, len(raw) // 2, len(raw) - 1):
        path.write_bytes(raw[:cut])
        with pytest.raises(ValueError) as err:
            load_npz(path)
        assert_one_clear_line(err.value, path)
    path.write_bytes(b"not an npz archive\n" * 8)
    with pytest.raises(ValueError, match="data archive") as err:
        load_npz(path)
    assert_one_clear_line(err.value, path)
    with pytest.raises(FileNotFoundError):  # missing is not damaged
        load_npz(tmp_path / "absent.npz")


def test_cut_json_text_manifest_tag_and_benchmark_files_name_themselves(tmp_path):
    """Cut anywhere but at the end of a line (a shorter whole file to any reader of lines),
    each is refused with one clear line."""
    cases = []
    summary = tmp_path / "kernel_summary.json"
    summary.write_text(json.dumps({"n_clips": 3, "tau": 0.5}, indent=1))
    cases.append((summary, load_json))
    listing = tmp_path / "bad_images.txt"
    listing.write_text("a.jpg\tunreadable\nb.jpg\tempty\n")
    cases.append((listing, read_text))
    manifest = tmp_path / "shard_0.tsv"
    (tmp_path / "img.jpg").write_bytes(b"jpeg")
    from kclf_workflow.manifests import manifest_rows

    write_manifest(manifest, manifest_rows(["img"], [tmp_path / "img.jpg"]))
    cases.append((manifest, read_manifest))
    tags = tmp_path / "tags.json"
    write_tag_file(tags, ["dog", "rain"], {"x": "one clip"}, "synthetic clips")
    cases.append((tags, read_tag_file))
    bench = tmp_path / "fit.tsv"
    bench.write_text("s\th:m:s\tmax_rss\n1.25\t0:00:01\t150.5\n")
    cases.append((bench, read_benchmark))
    for path, read in cases:
        whole = path.read_bytes()
        read(path)  # whole: fine
        for cut in range(1, len(whole) - 1):
            if whole[cut - 1 : cut] == b"\n" and path.suffix != ".json":
                continue
            path.write_bytes(whole[:cut])
            with pytest.raises(ValueError) as err:
                read(path)
            assert_one_clear_line(err.value, path)
        path.write_bytes(whole)
