"""The shared AUC report (VOC, scene; the audio table reuses its time table): wall-clock
timings go to ``<stem>_time.{csv,md}`` only, so the AUC table and its calibration
companions are the same bytes whatever the fits cost."""

import hashlib

import numpy as np
import pandas as pd
import pytest

from kclf_workflow.records import calibration_records, record, write_records
from kclf_workflow.reports.auc import TIME_ROW, auc_time_table, write_auc_report

METHODS = ["LSPC-new", "KLR", "SVC"]
TASKS = ["aeroplane", "bicycle", "bird"]


def _records(seconds_scale, seed=0):
    rng = np.random.default_rng(seed)
    timing = np.random.default_rng(seconds_scale)  # the timings differ, nothing else does
    rows = []
    for trial in range(3):
        for m in METHODS:
            secs = float(timing.uniform(0.1, 2.0))
            for task in TASKS:
                y = np.r_[np.zeros(15, int), np.ones(15, int)]
                p = np.clip(0.5 + (y - 0.5) * rng.uniform(0, 0.8, 30), 0, 1)
                auc = float(rng.uniform(0.6, 0.9))
                rows.append(record("voc", task, m, trial, "auc", auc, secs / len(TASKS)))
                rows += calibration_records(
                    y,
                    p,
                    labels=[0, 1],
                    dataset="voc",
                    task=task,
                    method=m,
                    trial=trial,
                    n_bins=5,
                    fit_seconds=secs / len(TASKS),
                )
    return rows


@pytest.fixture()
def reference(tmp_path):
    path = tmp_path / "paper.csv"
    pd.DataFrame(
        {
            "class": ["aeroplane", "average", "train_time_s"],
            "lspc_new_mean": [82.6, 73.2, 0.7],
            "lspc_new_std": [1.0, np.nan, np.nan],
            "klr_mean": [83.0, 71.9, 24.6],
            "klr_std": [1.3, np.nan, np.nan],
        }
    ).to_csv(path, index=False)
    return path


def _report(tmp_path, name, scale, reference):
    out = tmp_path / name
    out.mkdir()
    rec = out / "records.csv"
    write_records(_records(scale), rec)
    stem = out / "voc_auc"
    write_auc_report(
        [rec],
        stem,
        out / "fig.png",
        title="VOC",
        reference=reference,
        reliability=out / "rel.png",
        methods=METHODS,
    )
    return out


def _digests(folder):
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.glob("voc_auc*"))
        if "_time" not in p.name
    }


def test_auc_table_holds_no_timing_and_does_not_change_with_it(tmp_path, reference):
    fast = _report(tmp_path, "fast", 1, reference)
    slow = _report(tmp_path, "slow", 2, reference)
    for ext in ("md", "tex"):
        text = (fast / f"voc_auc.{ext}").read_text()
        assert TIME_ROW not in text and "train time" not in text.lower()
        assert "24.6" not in text  # the paper's KLR time belongs to the time table
    table = pd.read_csv(fast / "voc_auc.csv")
    assert not any("time" in str(t).lower() for t in table["task"])
    assert not any("second" in c or "time" in c for c in table.columns)
    # main and calibration tables: identical bytes although every fit took another time
    assert _digests(fast) == _digests(slow)
    assert set(_digests(fast)) == {
        "voc_auc.csv",
        "voc_auc.md",
        "voc_auc.tex",
        "voc_auc_calibration.csv",
        "voc_auc_calibration.md",
    }
    assert (fast / "voc_auc_time.csv").read_bytes() != (slow / "voc_auc_time.csv").read_bytes()


def test_time_table_one_row_per_method_with_paper_seconds(tmp_path, reference):
    out = _report(tmp_path, "run", 1, reference)
    t = pd.read_csv(out / "voc_auc_time.csv")
    assert list(t["method"]) == METHODS and (t["n_trials"] == 3).all()
    recs = pd.DataFrame(_records(1))
    auc = recs[recs["metric"] == "auc"]
    want = auc.groupby(["method", "trial"])["fit_seconds"].sum().groupby("method").mean()
    np.testing.assert_allclose(t.set_index("method")["trial_seconds_mean"], want[METHODS], 1e-5)
    paper = t.set_index("method")["paper_seconds"]
    assert paper["LSPC-new"] == 0.7 and paper["KLR"] == 24.6 and np.isnan(paper["SVC"])
    md = (out / "voc_auc_time.md").read_text()
    assert all(m in md for m in METHODS) and "24.6" in md


def test_time_table_without_reference_has_no_paper_column():
    t = auc_time_table(pd.DataFrame(_records(1)), METHODS)
    assert "paper_seconds" not in t and len(t) == len(METHODS)


def test_caption_names_a_non_paper_lspc_new_variant():
    """The records' params say which LSPC-new ran: the paper's method (or records without
    the keys) add nothing, any other setting is named once, and a table mixing two
    variants names both."""
    from kclf_workflow.reports.tables import variant_note

    def recs(*params):
        return pd.DataFrame(
            [record("d", "t", "LSPC-new", i, "auc", 0.5, params=p) for i, p in enumerate(params)]
        )

    paper = {"sigma": 1.0, "lam": 0.1, "basis": "full", "class_weight": None}
    assert variant_note(recs({"sigma": 1.0}, paper, {"C": 1.0})) == ""
    classwise = {**paper, "basis": "classwise"}
    note = variant_note(recs(paper, classwise, classwise))
    assert note.count("basis=classwise, class_weight=none") == 1
    both = variant_note(recs(classwise, {**paper, "class_weight": "balanced"}))
    assert "basis=classwise, class_weight=none" in both
    assert (
        "basis=full, class_weight=balanced;" in both
        or "basis=full, class_weight=balanced (" in both
    )
