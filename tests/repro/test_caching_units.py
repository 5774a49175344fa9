"""The pieces the workflow's caching rests on: trial t drawn from the seed and t alone in
every family, the per-shard manifests, files written with the umask's mode, rule logs
that hold the job's traceback, and the edge cases caught with one clear line."""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kclf_workflow.files import atomic_directory, atomic_write, save_npz
from kclf_workflow.records import record
from kclf_workflow.seeding import chunk_trials

ROOT = Path(__file__).resolve().parents[2]


# --- trial t from the seed and t alone ---------------------------------------------------


def test_chunk_labels():
    assert list(chunk_trials("0-4")) == [0, 1, 2, 3, 4]
    assert list(chunk_trials("7-7")) == [7]
    for bad in ("4-2", "x", "1-2-3", "-1-2"):
        with pytest.raises(ValueError, match="trial chunk"):
            chunk_trials(bad)


def test_lspc_toy_and_multilabel_trials_do_not_depend_on_the_count():
    from kclf_workflow.experiments.lspc_toy import make_samples
    from kclf_workflow.experiments.multilabel import make_toy, trial_indices

    all3, only2 = make_samples(5, 3, 10, 10), make_samples(5, [2], 10, 10)
    assert set(only2) == {"X_2", "y_2", "Xt_2", "yt_2"}
    for k, v in only2.items():
        np.testing.assert_array_equal(v, all3[k])
    all3, only2 = make_toy(5, 3, 20, 20), make_toy(5, [2], 20, 20)
    assert trial_indices(only2) == [2]
    for k, v in only2.items():
        np.testing.assert_array_equal(v, all3[k])


def test_mgpc_ida_and_multiclass_splits_do_not_depend_on_the_count():
    from kclf_workflow.datasets.ida import stratified_splits
    from kclf_workflow.experiments import mgpc, multiclass

    y = np.repeat([0, 1], [40, 60])
    full = mgpc.make_splits(y, 4, 3, "digits/3v8")
    np.testing.assert_array_equal(mgpc.make_splits(y, [3, 1], 3, "digits/3v8"), full[[3, 1]])

    tr, te = stratified_splits(np.where(y, 1, -1), "banana", 3, 20, 30, n_realisations=4)
    tr2, te2 = stratified_splits(np.where(y, 1, -1), "banana", 3, 20, 30, n_realisations=[2, 3])
    np.testing.assert_array_equal(tr2, tr[2:])
    np.testing.assert_array_equal(te2, te[2:])

    d = multiclass.prepare("digits", 3, 3, per_class=15)  # trials = folds: one partition
    more = multiclass.prepare("digits", 3, 3, per_class=15, trials=7)
    for t in range(3):  # the K-fold trials are those of the plain K-fold CV ...
        np.testing.assert_array_equal(more["test"][t], d["test"][t])
    for t in range(7):  # ... and every trial is computable on its own
        train, test = multiclass.trial_split(d["y"], "digits", 3, 3, t)
        np.testing.assert_array_equal(test, more["test"][t])
        assert np.intersect1d(train, test).size == 0 and train.size + test.size == d["y"].size
    assert not np.array_equal(more["test"][3], more["test"][0])  # a new partition


# --- manifests ---------------------------------------------------------------------------


def test_manifest_round_trip_with_size_time_and_content_hash(tmp_path):
    from kclf_workflow.manifests import manifest_rows, read_manifest, write_manifest

    files = []
    for k, payload in enumerate([b"abc", b"", b"x" * 5000]):
        files.append(tmp_path / f"f{k}.bin")
        files[-1].write_bytes(payload)
    rows = manifest_rows(["a", "b", "c"], files, [{"tags": "t1"}, {"tags": ""}, {"tags": "t3"}])
    path = write_manifest(tmp_path / "m" / "shard_0.tsv", rows)
    back = read_manifest(path)
    assert [r["id"] for r in back] == ["a", "b", "c"]
    assert [r["size"] for r in back] == [3, 0, 5000]
    digests = [hashlib.sha256(f.read_bytes()).hexdigest() for f in files]
    assert [r["sha256"] for r in back] == digests
    assert [r["mtime_ns"] for r in back] == [f.stat().st_mtime_ns for f in files]
    assert [r["tags"] for r in back] == ["t1", "", "t3"]
    with pytest.raises(FileNotFoundError):
        manifest_rows(["z"], [tmp_path / "absent.wav"])
    with pytest.raises(ValueError, match="cut short.*delete it"):
        read_manifest(tmp_path / "f0.bin")  # "abc": no end of line
    (tmp_path / "other.tsv").write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match="not a manifest.*delete it"):
        read_manifest(tmp_path / "other.tsv")


# --- modes -------------------------------------------------------------------------------


@pytest.mark.parametrize("mask,mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_atomic_write_gives_the_umask_mode(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        p = atomic_write(tmp_path / "t.csv", lambda f: Path(f).write_text("a,b\n"))
        q = save_npz(tmp_path / "n.npz", x=np.ones(2))
    finally:
        os.umask(old)
    assert stat.S_IMODE(p.stat().st_mode) == mode and stat.S_IMODE(q.stat().st_mode) == mode
    assert sorted(x.name for x in tmp_path.iterdir()) == ["n.npz", "t.csv"]  # no temp left
    with np.load(q) as z:
        np.testing.assert_array_equal(z["x"], np.ones(2))


def test_atomic_write_failure_leaves_nothing(tmp_path):
    def boom(f):
        Path(f).write_text("half")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        atomic_write(tmp_path / "t.csv", boom)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("mask,mode", [(0o022, 0o755), (0o077, 0o700)])
def test_atomic_directory_appears_whole_or_not_at_all(tmp_path, mask, mode):
    def fill(folder):
        (Path(folder) / "a").mkdir()
        (Path(folder) / "a" / "x.txt").write_text("x\n")

    def half(folder):
        (Path(folder) / "a.txt").write_text("half")
        raise RuntimeError("killed mid-extraction")

    out = tmp_path / "extracted"
    with pytest.raises(RuntimeError):
        atomic_directory(out, half)
    assert list(tmp_path.iterdir()) == []
    out.mkdir()  # an older run's folder is replaced
    (out / "stale.txt").write_text("old")
    old = os.umask(mask)
    try:
        atomic_directory(out, fill)
    finally:
        os.umask(old)
    assert [p.name for p in tmp_path.iterdir()] == ["extracted"]
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["a", "a/x.txt"]
    assert stat.S_IMODE(out.stat().st_mode) == mode


# --- rule logs ---------------------------------------------------------------------------


def test_rule_log_holds_warnings_c_level_output_and_the_traceback(tmp_path):
    """workflow/scripts/_joblog.py, driven like Snakemake's script directive does: the
    script's own folder on sys.path and a `snakemake` object with the log path."""
    log = tmp_path / "logs" / "fit" / "x.log"
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys, types
            sys.path.append({str(ROOT / "workflow" / "scripts")!r})
            snakemake = types.SimpleNamespace(log=[{str(log)!r}], rule="fit")
            from _joblog import to_rule_log
            log = to_rule_log(snakemake)
            import os, warnings
            log.info("started")
            warnings.warn("grid too coarse")
            os.write(2, b"C-level stderr line\\n")
            # a stream library that asks whether the stream is closed (PyStan's build output)
            from clikit.io.output_stream import StreamOutputStream
            StreamOutputStream(sys.stderr).write("Building: found in cache\\n")
            raise ValueError("fold 3 has one class only")
            """
        )
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert proc.returncode == 1
    text = log.read_text()
    for want in (
        "INFO fit: started",
        "UserWarning: grid too coarse",
        "C-level stderr line",
        "Building: found in cache",
        "Traceback (most recent call last)",
        "ValueError: fold 3 has one class only",
    ):
        assert want in text, text
    assert "ValueError: fold 3 has one class only" in proc.stderr  # still on the console


# --- edge cases --------------------------------------------------------------------------


def test_truncated_wav_is_a_bad_clip(tmp_path):
    import soundfile as sf

    from kclf.features.audio import BadAudioError, load_audio, wav_frames

    path = tmp_path / "clip.wav"
    sf.write(path, 0.1 * np.sin(np.arange(16000) / 3.0), 8000, subtype="PCM_16")
    assert wav_frames(path) == (16000, 16000)
    y, _ = load_audio(path, 8000)
    assert y.size == 16000
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 2 * 6000])  # 6000 frames of 16-bit mono missing
    assert wav_frames(path) == (16000, 10000)
    with pytest.raises(BadAudioError, match="truncated: the header declares 16000 frames"):
        load_audio(path, 8000)
    assert wav_frames(ROOT / "pyproject.toml") is None  # not a WAV: left to the decoder


def test_average_row_coverage_is_stated_and_warned(caplog):
    from kclf_workflow.reports.auc import coverage_note

    rows = [
        record("d", t, "LSPC-new", trial, "auc", 0.8)
        for t, trials in (("cat", (0, 1)), ("dog", (0, 1)), ("cow", (1,)))
        for trial in trials
    ]
    records = pd.DataFrame(rows)
    with caplog.at_level(logging.WARNING):
        note = coverage_note(records, ["cat", "dog", "cow", "sheep"], "classes")
    assert note.startswith(
        " 'Average' covers 3 of the 4 classes (cat, dog, cow); not sheep: no positives or no "
        "negatives"
    )
    assert "cow only in the trials whose test part holds both classes" in note
    assert "sheep" in caplog.text
    assert coverage_note(records, ["cat", "dog", "cow"], "tags").startswith(
        " 'Average' covers 3 of the 3 tags"
    )
    assert coverage_note(records, None) == ""
