"""The multilabel family's data sets, trial chunks, data files and fit params
(``workflow/rules/multilabel.smk``)."""

from __future__ import annotations

from ..methods import specs
from .common import trial_chunks

#: what a fit of each method reads from the multilabel block: the folds, its spec's grid
FIT_KEYS = {key: ["folds", *s.grid] for key, s in specs("multilabel").items()}


class MultilabelPlan:
    """The parse-time decisions of the multilabel family for the ``multilabel`` block;
    ``user``: the user's data sets among its datasets (config ``datasets:``, their
    entries); ``scene_available``: whether MULAN scene is in the mirror (or downloaded);
    ``voc_enabled``: whether the VOC family runs."""

    def __init__(self, multilabel, *, user, scene_available, voc_enabled, mirror=None):
        self.cfg, self.user = multilabel, user
        self.toy_chunks = trial_chunks(
            multilabel["toy"]["trials"], multilabel["toy"]["trials_per_job"]
        )
        self.datasets, self.left_out = [], []
        for name in multilabel["datasets"]:
            if name == "scene" and not (scene_available or multilabel["download_scene"]):
                self.left_out.append(
                    "multilabel: MULAN scene left out (no mulan/scene-*.arff under the mirror "
                    f"{mirror!r} and download_scene is false)"
                )
            elif name == "voc" and not voc_enabled:
                self.left_out.append("multilabel: VOC left out (the voc family is disabled)")
            else:
                self.datasets.append(name)

    @property
    def dataset_pattern(self):
        """The wildcard pattern of the family's data sets."""
        return "|".join(["toy", "scene", "voc", *self.user])

    def chunks(self, dataset):
        """The trial chunks of a data set: the toy's, a user's path: set in
        multilabel.trials, else one split (0-0)."""
        if dataset == "toy":
            return self.toy_chunks
        if dataset in self.user and self.user[dataset]["path"] is not None:
            return trial_chunks(self.cfg["trials"], self.cfg["trials_per_job"])
        return ["0-0"]

    def data_file(self, dataset, trials):
        """The data archive a fit of ``dataset`` and the chunk ``trials`` reads."""
        if dataset == "toy":
            return f"results/data/multilabel_toy/data_{trials}.npz"
        if dataset in self.user:
            return f"results/data/multilabel_user/{dataset}/data_{trials}.npz"
        return f"results/data/multilabel_{dataset}/data.npz"
