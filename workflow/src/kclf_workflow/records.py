"""Tidy result records: one row per (dataset, task, method, trial, metric).

Every fit job writes such rows; tables and figures are computed from records only,
so adding a method or a trial never recomputes the others (README, "Records, tables and figures").
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from kclf.metrics import EPS, calibration_by_task

from .files import atomic_write
from .readers import damaged, reading

COLUMNS = ["dataset", "task", "method", "trial", "metric", "value", "fit_seconds", "params"]
#: optional last column: what the data the fit read were (the data job's own description,
#: e.g. "PASCAL VOC2010 train -> val"); tables name their data from it
SOURCE = "source"


def record(dataset, task, method, trial, metric, value, fit_seconds=float("nan"), params=None):
    """One record as a dict; ``params`` (chosen hyper-parameters) is stored as sorted JSON."""
    return {
        "dataset": str(dataset),
        "task": str(task),
        "method": str(method),
        "trial": int(trial),
        "metric": str(metric),
        "value": float(value),
        "fit_seconds": float(fit_seconds),
        "params": json.dumps(params or {}, sort_keys=True, default=float),
    }


def write_records(rows, path, source=None):
    """Write records (dicts from :func:`record`) to CSV atomically, in a stable order;
    ``source`` (the description of the data the rows come from) fills the column
    :data:`SOURCE` of every row."""
    df = pd.DataFrame(list(rows), columns=COLUMNS)
    if source is not None:
        df[SOURCE] = str(source)
    df = df.sort_values(["dataset", "task", "method", "trial", "metric"], kind="stable")
    atomic_write(path, lambda tmp: df.to_csv(tmp, index=False, float_format="%.10g"))
    return df


def read_records(paths):
    """Concatenate record files into one DataFrame (columns :data:`COLUMNS`).

    A file cut short or otherwise damaged (:func:`check_records`) is a ``ValueError`` of
    one line naming it and saying to delete it to recompute it."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    frames = []
    for p in paths:
        with reading(p, "records file"):
            raw = Path(p).read_bytes()
        if not raw.endswith(b"\n"):
            what = "empty" if not raw else "cut short (its last line has no end)"
            raise damaged(p, f"this records file is {what}")
        with reading(p, "records file"):
            df = pd.read_csv(
                io.BytesIO(raw),
                dtype={"dataset": str, "task": str, "method": str, "params": str, SOURCE: str},
                keep_default_na=False,
                na_values={c: [""] for c in ("value", "fit_seconds")},
            )
        check_records(df, p)
        if len(df):  # a header alone (a skipped method) would turn the values to objects
            frames.append(df[COLUMNS + [SOURCE]] if SOURCE in df else df[COLUMNS])
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(frames, ignore_index=True)


def check_records(df, path):
    """``ValueError`` (:func:`kclf_workflow.readers.damaged`) unless the rows read from
    ``path`` are records: the :data:`COLUMNS`, names that are not empty, an integer
    trial, numbers for value and fit_seconds, a JSON object of params (as
    :func:`record` writes them), and a last trial with the metrics of the others
    (:func:`_check_last_group`)."""
    missing = set(COLUMNS) - set(df.columns)
    if missing:
        raise damaged(path, f"not a records file, missing columns {sorted(missing)}")
    bad = {}
    for col in ("dataset", "task", "method", "metric"):
        bad[col] = df[col].isna().to_numpy() | (df[col].astype(str) == "").to_numpy()
    trial = pd.to_numeric(df["trial"], errors="coerce")
    bad["trial"] = (trial.isna() | (trial % 1 != 0)).to_numpy()
    for col in ("value", "fit_seconds"):
        number = pd.to_numeric(df[col], errors="coerce")
        bad[col] = (number.isna() & df[col].notna()).to_numpy()
    bad["params"] = ~df["params"].map(_json_object).to_numpy(dtype=bool)
    for col, rows in bad.items():
        if rows.any():
            i = int(np.flatnonzero(rows)[0])
            raise damaged(
                path,
                f"line {i + 2}: {col} {df[col].iloc[i]!r} is not what a record holds there",
            )
    if len(df):
        _check_last_group(df, path)


def _check_last_group(df, path):
    """A file cut at the end of a line loses the last metrics (in sorted order) of its
    last (dataset, task, method, trial): they must include every metric the other trials
    of that (dataset, task, method) all have."""
    dataset, task, method, trial = df.iloc[-1][["dataset", "task", "method", "trial"]]
    same = (df["dataset"] == dataset) & (df["task"] == task) & (df["method"] == method)
    mine = set(df.loc[same & (df["trial"] == trial), "metric"])
    others = [set(g) for _, g in df.loc[same & (df["trial"] != trial)].groupby("trial")["metric"]]
    lacking = sorted(set.intersection(*others) - mine) if others else []
    if lacking:
        raise damaged(
            path,
            f"this records file is cut short: its last trial ({trial}) of task {task!r}, "
            f"method {method!r} lacks {len(lacking)} metric(s) its other trials have "
            f"({', '.join(lacking[:3])}{', ...' if len(lacking) > 3 else ''})",
        )


def _json_object(text):
    try:
        return isinstance(json.loads(text), dict)
    except (TypeError, ValueError):
        return False


def records_source(records, fallback=None):
    """The one data description the records carry (column :data:`SOURCE`), else
    ``fallback`` (records written without one).  Records from different data in one
    table are an error naming them."""
    if SOURCE not in records:
        return fallback
    sources = [s for s in dict.fromkeys(records[SOURCE].fillna("")) if s]
    if len(sources) > 1:
        raise ValueError(
            "the records come from different data: "
            + "; ".join(repr(s) for s in sources)
            + " (rerun the fits of the data now configured)"
        )
    return sources[0] if sources else fallback


def calibration_records(
    y_true,
    proba,
    *,
    dataset,
    task,
    method,
    trial,
    labels=None,
    n_bins=10,
    eps=EPS,
    fit_seconds=float("nan"),
    params=None,
):
    """Records (:func:`record` rows) of the probability metrics of one fit: one row per
    metric of :func:`kclf.metrics.calibration_by_task` (reliability bins included, so that
    diagrams can be pooled from records alone:
    :func:`kclf_workflow.reports.calibration.pool_reliability`).

    ``task`` is the task's name, or one name per label of a multilabel input; ``params``
    (the chosen hyper-parameters) is stored with every row.
    """
    per_task = calibration_by_task(y_true, proba, task=task, labels=labels, n_bins=n_bins, eps=eps)
    return [
        record(dataset, name, method, trial, metric, value, fit_seconds, params)
        for name, values in per_task
        for metric, value in values.items()
    ]
