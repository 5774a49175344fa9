"""The multi-class family's trials, captions, fit params and the files a data job reads
(``workflow/rules/multiclass.smk``)."""

from __future__ import annotations

from .. import config_checks
from ..methods import spec
from .common import trial_chunks


class MulticlassPlan:
    """The parse-time decisions of the multi-class family for the ``multiclass`` block;
    ``user``: the user's data sets among its datasets (config ``datasets:``, their
    entries)."""

    def __init__(self, multiclass, *, user):
        self.cfg, self.user = multiclass, user

    @property
    def dataset_pattern(self):
        """The wildcard pattern of the family's data sets."""
        return "|".join(["digits", "isolet1", "isolet", *self.user])

    @property
    def uses_isolet(self):
        """Whether the UCI ISOLET files are needed (the data set, or the cost curve's)."""
        return "isolet" in self.cfg["datasets"] or self.cfg["cost"]["dataset"] == "isolet"

    def fixed_split(self, dataset):
        """isolet's UCI split, or a user data set given as train: + test:."""
        return dataset == "isolet" or (dataset in self.user and self.user[dataset]["path"] is None)

    def trials(self, dataset):
        """Trials of a dataset: multiclass.trials (null: one K-fold partition, `folds`
        trials); a fixed split (isolet's UCI one, a user's train/test): one."""
        return 1 if self.fixed_split(dataset) else (self.cfg["trials"] or self.cfg["folds"])

    def chunks(self, dataset):
        return trial_chunks(self.trials(dataset), self.cfg["trials_per_job"])

    def source(self, dataset, caption):
        """The caption's account of a user data set (``caption`` how captions name it;
        None for the paper's data)."""
        if dataset not in self.user:
            return None
        return {"text": caption, "fixed": self.fixed_split(dataset)}

    def fit_params(self, method):
        """What a fit of ``method`` reads from the multiclass block (not the cost block,
        the other methods' grids or the trial count): its spec's grid as ``grid``; LSPC-new's
        also its variant (multiclass.lspc_new)."""
        method_spec = spec("multiclass", method)
        (grid_key,) = method_spec.grid
        cfg = {
            "sigma_factors": self.cfg["sigma_factors"],
            "cv": self.cfg["cv"],
            "grid": self.cfg[grid_key],
        }
        variant = method_spec.variant
        return cfg | ({variant: self.cfg[variant]} if variant else {})

    def sources(self, dataset, *, user_files, isolet_mat, isolet_files, mirror):
        """Input files of one dataset: none for digits, the mirror's .mat (``isolet_mat``),
        the UCI files (``isolet_files``, {} when not declared), or the user's files."""
        if dataset in self.user:
            return {"user": user_files}
        if dataset == "isolet1":
            if isolet_mat is None:
                raise config_checks.ConfigError(
                    "multiclass dataset isolet1 needs isolet/isolet.mat in the mirror "
                    f"({mirror}); use 'isolet' (downloads the UCI files) instead"
                )
            return {"mat": isolet_mat}
        if dataset == "isolet":
            if not isolet_files:
                raise config_checks.ConfigError(
                    "add isolet to multiclass.datasets to download the UCI files"
                )
            return isolet_files
        return {}
