"""Where the audio family's clips come from, which of them the paper's selection keeps,
how they fall into shards, and what its clip-list rule reads
(``workflow/rules/audio.smk``).

The clips come from the offline generator (``source: synthetic``, in the Freesound-style
layout), a Freesound-style folder, ESC-50 (a folder, or the GitHub archive a checkpoint
unpacks), UrbanSound8K, or a folder with one subfolder per tag.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from .. import config_checks
from ..datasets import synthetic_audio
from ..datasets.audio_collections import (
    ESC50_ARCHIVE,
    METADATA_FILES,
    load_collection,
    select_clips,
)
from ..shards import shard_of
from .common import existing_file, path_key

#: audio.source -> the records' data set name
DATASETS = {
    "synthetic": "audio-synthetic",
    "freesound": "freesound",
    "esc50": "esc50",
    "urbansound8k": "urbansound8k",
    "folder": "audio-folder",
}


class ClipListing(NamedTuple):
    """A collection listed: the clips its metadata ``listed`` (a table), the listed paths
    ``dropped`` as missing on disk (``missing_files: drop``), and the ``shards`` ``{k:
    [(id, path), ...]}`` of the clips the paper's selection keeps."""

    listed: pd.DataFrame
    dropped: list
    shards: dict


class AudioPlan:
    """The parse-time decisions of the audio family for the ``audio`` config block
    (``seed`` and ``cache_dir``: the top-level keys)."""

    def __init__(self, audio, *, seed, cache_dir):
        config_checks.audio_root_required(audio)
        self.cfg, self.seed = audio, seed
        self.dataset = DATASETS[audio["source"]]
        # a collection given by its folder: the folder's own data directory
        if audio["root"] and audio["source"] != "synthetic":
            self.data_dir = f"results/data/{self.dataset}-{path_key(audio['root'])}"
        else:
            self.data_dir = f"results/data/{self.dataset}"
        self.synthetic_root = f"{self.data_dir}/collection"
        self.layout = "freesound" if audio["source"] == "synthetic" else audio["source"]
        self.feature_shards = list(range(audio["features"]["n_shards"]))
        self.kernel_shards = list(range(audio["kernel"]["n_shards"]))
        # ESC-50 without a root: the GitHub archive, unpacked into extract_dir by a checkpoint
        self.archive_name = (
            f"audio/{ESC50_ARCHIVE}" if audio["source"] == "esc50" and not audio["root"] else None
        )
        self.extract_dir = f"{cache_dir}/audio/ESC-50"
        self._listings = {}

    @property
    def landmark_params(self):
        """``audio.kernel.landmarks``: m landmark clips drawn from the config's seed (stream
        "audio", "landmarks"); absent or null: the full kernel, whose rules then read
        neither key."""
        if self.cfg["kernel"].get("landmarks") is None:
            return {}
        return {"landmarks": self.cfg["kernel"]["landmarks"], "seed": self.seed}

    @property
    def tau_params(self):
        """The width grid of the fits' tau search: read by the kernel job only when it
        searches (tau null, the full kernel); a fixed tau or landmarks keep one width."""
        kernel = self.cfg["kernel"]
        if (
            kernel["tau"] is None
            and kernel.get("landmarks") is None
            and kernel.get("tau_factors") is not None
        ):
            return {"tau_factors": kernel["tau_factors"]}
        return {}

    @property
    def reference(self):
        """The paper's Table 2 beside ours, never beside the user's own tag folders."""
        return [] if self.cfg["source"] == "folder" else existing_file(self.cfg["reference"])

    @property
    def title(self):
        """How the tables name the data."""
        if self.cfg["source"] == "folder" and self.cfg["root"]:
            return (
                f"Your clips ({Path(self.cfg['root']).name}: one subfolder per tag, each tag "
                "one-vs-rest)"
            )
        return self.dataset

    def root(self, extracted=None):
        """The collection's folder; for the ESC-50 archive the one under ``extracted``,
        the unpacked archive."""
        if self.cfg["source"] == "synthetic":
            return self.synthetic_root
        if self.archive_name:
            return str(next(Path(extracted).glob("*/meta/esc50.csv")).parent.parent)
        return self.cfg["root"]

    def listing(self, root):
        """The :class:`ClipListing` of the collection under ``root`` (listed once per root);
        a :class:`~kclf_workflow.config_checks.ConfigError` naming the collection when it
        cannot be read or too few clips pass the selection."""
        if root not in self._listings:
            self._listings[root] = self._list(root)
        return self._listings[root]

    def _list(self, root):
        audio = self.cfg
        dropped = []
        if audio["source"] == "synthetic":
            s = audio["synthetic"]
            ids = synthetic_audio.clip_ids(s["n_clips"])
            info = [
                synthetic_audio.clip_info(self.seed, c, (s["min_seconds"], s["max_seconds"]))
                for c in ids
            ]
            listed = pd.DataFrame(
                {
                    "id": ids,
                    "path": [f"{root}/audio/{c}.wav" for c in ids],
                    "duration": [d for _, d, _ in info],
                    "tags": [tuple(t) for t, _, _ in info],
                }
            )
        else:
            try:
                listed = load_collection(
                    self.layout, root, missing=audio["missing_files"], dropped=dropped
                )
            except (FileNotFoundError, ValueError) as exc:
                raise config_checks.ConfigError(f"audio collection {root}: {exc}") from None
        sel = audio["selection"]
        clips, _ = select_clips(listed, sel["n_top_tags"], sel["min_seconds"], sel["max_seconds"])
        if len(clips) < 4:
            raise config_checks.ConfigError(
                f"audio collection {root}: only {len(clips)} clips pass the selection "
                f"(key 'audio.selection': {sel})"
            )
        config_checks.leaves_test_items(
            "audio.experiment.n_train",
            audio["experiment"]["n_train"],
            len(clips),
            f"test clip ({len(clips)} clips of {root} pass the selection)",
        )
        n = len(self.feature_shards)
        shards = {k: [] for k in range(n)}
        for cid, path in zip(clips["id"], clips["path"]):
            shards[shard_of(cid, n)].append((cid, str(path)))
        return ClipListing(listed, dropped, shards)

    def generated_ids(self, k):
        """Generated clips of shard ``k``: every listed one (the metadata lists them all),
        the selected ones among them are the shard's HMM clips."""
        listed = self.listing(self.synthetic_root).listed
        n = len(self.feature_shards)
        return [c for c in listed["id"] if shard_of(c, n) == int(k)]

    def metadata_files(self, root):
        """What the clip-list rule reads: the metadata file, for ESC-50 and metadata without
        durations also the clips whose header gives the duration; a tag-folder collection:
        every clip (no metadata; the folders are the tags)."""
        listed = self.listing(root).listed
        if self.layout == "folder":
            return [str(p) for p in listed["path"]]
        files = [f"{root}/{METADATA_FILES[self.layout]}"]
        if self.cfg["source"] != "synthetic" and (
            self.layout == "esc50"
            or (self.layout == "freesound" and _metadata_lacks_durations(files[0]))
        ):
            files += [str(p) for p in listed["path"]]
        return files

    def root_of(self, metadata):
        """The collection folder of its metadata file."""
        return str(Path(metadata).parents[len(Path(METADATA_FILES[self.layout]).parts) - 1])


@functools.cache
def _metadata_lacks_durations(path):
    meta = pd.read_csv(path)
    return "duration" not in meta or bool(meta["duration"].isna().any())
