"""The IDA family's realisations, trial chunks, the files a data job reads and the grids a
selection or fit reads (``workflow/rules/ida.smk``)."""

from __future__ import annotations

from .. import config_checks
from ..datasets import breiman
from ..datasets import ida as ida_data
from ..methods import spec
from ..seeding import chunk_trials
from .common import fit_keys, mirror_file, pick, trial_chunks


class IdaPlan:
    """The parse-time decisions of the IDA family for the ``ida`` block: ``user`` the
    user's data sets among ``ida.datasets`` (config ``datasets:``, their entries),
    ``mirror`` the data mirror, ``benchmarks_mat`` the path of the downloaded
    ``benchmarks.mat`` (None when not used); ``enabled``: whether the family runs (its
    realisations are checked only then)."""

    def __init__(self, ida, *, user, mirror, benchmarks_mat, enabled):
        self.cfg, self.user, self.mirror = ida, user, mirror
        self.benchmarks_mat = benchmarks_mat
        self.chunks = {
            d: trial_chunks(self.realisations(d), ida["trials_per_job"]) for d in ida["datasets"]
        }
        if enabled:
            config_checks.n_select_fits(
                ida["n_select"],
                {d: self.realisations(d) for d in ida["datasets"] if not self.fixed_split(d)},
            )

    def fixed_split(self, dataset):
        """A user data set given as train: + test: (one realisation, its own split)."""
        return dataset in self.user and self.user[dataset]["path"] is None

    def realisations(self, dataset):
        """Realisations of ``dataset``: 1 for a user's fixed split, ida.realisations, else
        the published count (100 for a user's path: set)."""
        if self.fixed_split(dataset):
            return 1
        if self.cfg["realisations"] is not None:
            return self.cfg["realisations"]
        return ida_data.PUBLISHED.get(dataset, ida_data.EXTRA.get(dataset, (0, 0, 100)))[2]

    def select_chunk(self, dataset):
        """The realisations whose CV optimum enters the median (a fixed split: its one)."""
        return "0-0" if self.fixed_split(dataset) else f"0-{self.cfg['n_select'] - 1}"

    def sources(self, dataset, trials, user_files):
        """The files the data job of ``dataset`` and the chunk ``trials`` reads
        (:func:`kclf_workflow.experiments.ida.prepare`'s order of sources): the user's files
        (``user_files``) for a name under datasets:; benchmarks.mat; nothing for wdbc and
        generated sets; else the mirror's pattern set and the IDA split files of the
        chunk's realisations."""
        if dataset in self.user:
            return user_files
        if self.benchmarks_mat and dataset in ida_data.PUBLISHED:
            return [self.benchmarks_mat]
        pattern_set = mirror_file(self.mirror, f"ida/unique_xt/{dataset}.mat")
        if dataset == "wdbc" or (
            dataset in breiman.GENERATORS and (dataset in self.cfg["generate"] or not pattern_set)
        ):
            return []
        files = [pattern_set] if pattern_set else []
        for r in chunk_trials(trials):
            asc = [
                mirror_file(
                    self.mirror, f"ida/splits_asc/{dataset}/{dataset}_{part}_{kind}_{r + 1}.asc"
                )
                for part in ("train", "test")
                for kind in ("data", "labels")
            ]
            if all(asc):
                files += asc
        return files

    def grids(self, method):
        """What a selection or fit of ``method`` reads: the widths, the folds, the method's
        own grid (its spec's) and, for LSPC-new, its variant (ida.lspc_new)."""
        keys = ["sigma_factors", "folds", *spec("ida", method).grid]
        return pick(self.cfg, fit_keys("ida", self.cfg, method, keys))
