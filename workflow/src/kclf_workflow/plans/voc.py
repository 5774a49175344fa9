"""Where the VOC family's images come from, how they fall into shards, and which label
files its dataset rule reads (``workflow/rules/voc.smk``).

The images come from a VOCdevkit (``voc.voc_root``), a folder with one subfolder per class
(``voc.image_folder``), the offline generator (``source: synthetic``) or the PASCAL
archive (``source: download``, listed only once a checkpoint has unpacked it).  Each image
goes to the shard :func:`kclf_workflow.shards.shard_of` its id names.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from .. import config_checks
from ..datasets import synthetic_voc
from ..datasets.user_data import IMAGE_EXTENSIONS, list_class_folders
from ..datasets.voc import VOC_CLASSES, image_paths, list_image_ids, resolve_voc_root
from ..shards import n_shards_for, shard_members
from .common import existing_file, path_key


class ClassFolders(NamedTuple):
    """An image folder listed: its files, their class indices and the class names."""

    files: list
    labels: object
    classes: list


class ImageListing(NamedTuple):
    """The images of the family: their ``ids`` in order, and ``shards`` ``{k: [(id,
    path), ...]}``."""

    ids: list
    shards: dict


class VocPlan:
    """The parse-time decisions of the VOC family for the ``voc`` config block.

    ``seed`` and ``cache_dir`` are the top-level keys; ``enabled`` whether the family runs
    (an image folder is listed, and the source's keys checked, only then).
    """

    def __init__(self, voc, *, seed, cache_dir, enabled):
        self.cfg, self.seed = voc, seed
        self.download_dir = f"{cache_dir}/voc"
        # one extraction folder per archive: another year's tar never reads the last one's
        self.extract_dir = f"{self.download_dir}/{Path(voc['download']['url']).stem}"
        self.folder = voc["image_folder"] if enabled else None
        self.folder_listing = None
        if enabled:
            config_checks.voc_source(voc)
        if self.folder is not None:
            try:
                self.folder_listing = ClassFolders(
                    *list_class_folders(self.folder, IMAGE_EXTENSIONS)
                )
            except (OSError, ValueError) as e:
                raise config_checks.ConfigError(
                    f"invalid config: key 'voc.image_folder': {e}"
                ) from None
        if self.folder_listing:
            self.class_names = list(self.folder_listing.classes)
        else:
            self.class_names = list(voc["classes"] or VOC_CLASSES)
        if self.folder is not None:
            self.source = "folder"
        else:
            self.source = "devkit" if voc["voc_root"] else voc["source"]
        self.data_dir = f"results/data/{self.data_key()}"
        self.synthetic_root = f"{self.data_dir}/VOCdevkit/VOC{voc['year']}"
        # voc.test_image_set: the devkit's own train / test split (its lists name the images)
        self.image_sets = [voc["image_set"]] + (
            [voc["test_image_set"]] if voc["test_image_set"] else []
        )
        # the dataset rule reads the test set only when there is one
        self.split_params = (
            {"test_image_set": voc["test_image_set"]} if len(self.image_sets) > 1 else {}
        )
        self._listings = {}

    @property
    def dataset(self):
        """The records' data set name."""
        if self.folder is not None:
            return "image-folder"
        if self.cfg["voc_root"] is None and self.cfg["source"] == "synthetic":
            return "voc-synthetic"
        return f"voc{self.cfg['year']}"

    @property
    def title(self):
        """How the tables name the data."""
        voc = self.cfg
        if self.folder is not None:
            return (
                f"Your images ({Path(self.folder).name}: one subfolder per class, each class "
                "one-vs-rest)"
            )
        if self.dataset == "voc-synthetic":
            return "Generated VOCdevkit images (offline stand-in for VOC2010)"
        return (
            f"PASCAL VOC{voc['year']} {voc['image_set']}"
            + (f" -> {voc['test_image_set']}" if voc["test_image_set"] else "")
            + " (LSPC-new paper, Table 1)"
        )

    def data_key(self):
        """The folder name of the family's data under results/data: the kind of source and,
        for raw data outside the project, which data (the archive, or a short hash of the
        folder's absolute path).  Switching the source, the devkit or the image folder
        gives another folder, so its data chain runs from its own raw files, and switching
        back finds the earlier features again; image sets, classes and the images'
        contents of one source reach the jobs through their params and manifests."""
        if self.source == "synthetic":
            return "voc-synthetic"
        if self.source == "download":
            return f"voc-download-{Path(self.cfg['download']['url']).stem}"
        where = self.folder if self.source == "folder" else self.cfg["voc_root"]
        return f"voc-{self.source}-{path_key(where)}"

    def root(self, extracted=None):
        """The VOC<year> folder, or the user's image folder; for a download the folder
        under ``extracted``, the archive's unpacked folder."""
        if self.source == "folder":
            return self.folder
        if self.source == "devkit":
            return str(resolve_voc_root(self.cfg["voc_root"], self.cfg["year"]))
        if self.source == "synthetic":
            return self.synthetic_root
        return str(Path(extracted) / "VOCdevkit" / f"VOC{self.cfg['year']}")

    def listing(self, root):
        """The :class:`ImageListing` of the images under ``root`` (listed once per root);
        a :class:`~kclf_workflow.config_checks.ConfigError` when the image sets overlap or
        leave no test image."""
        if root not in self._listings:
            self._listings[root] = self._list(root)
        return self._listings[root]

    def _list(self, root):
        voc = self.cfg
        if self.source == "synthetic":
            s = voc["synthetic"]
            ids = synthetic_voc.image_ids(s["n_images"], voc["year"])
            names = [
                synthetic_voc.image_filename(
                    self.seed, i, s["grey_fraction"], s["cmyk_fraction"], s["png_fraction"]
                )
                for i in ids
            ]
            paths = [f"{root}/JPEGImages/{n}" for n in names]
        elif self.source == "folder":  # id: "<class folder>/<file name>"
            files, y, classes = self.folder_listing
            ids = [f"{classes[k]}/{f.name}" for f, k in zip(files, y)]
            paths = [str(f) for f in files]
        else:
            listed = [(s, list_image_ids(root, s, self.class_names)) for s in self.image_sets]
            config_checks.voc_test_sets_disjoint(voc["image_set"], listed)
            ids = [i for _, of_set in listed for i in of_set]
            paths = [str(p) for p in image_paths(root, ids)]
        if len(self.image_sets) == 1:
            config_checks.leaves_test_items(
                "voc.experiment.n_train",
                voc["experiment"]["n_train"],
                len(ids),
                f"test image (the image set has {len(ids)} images)",
            )
        features = voc["features"]
        n = features["n_shards"] or n_shards_for(len(ids), features["images_per_shard"])
        members = shard_members(ids, n)
        by_id = dict(zip(ids, paths))
        return ImageListing(ids, {k: [(i, by_id[i]) for i in v] for k, v in members.items()})

    def label_files(self, root):
        """The ImageSets lists the labels are read from: <image_set>.txt (when present) and
        <class>_<image_set>.txt of every class; none for an image folder (its labels are
        its class folders, in the image ids)."""
        if self.source == "folder":
            return []
        main = Path(root) / "ImageSets" / "Main"
        files = []
        for image_set in self.image_sets:
            listing = main / f"{image_set}.txt"
            files += [str(listing)] if self.source == "synthetic" or listing.is_file() else []
            files += [str(main / f"{c}_{image_set}.txt") for c in self.class_names]
        return files

    def reference(self):
        """The paper's Table 1 CSV when configured and present (else nothing; never beside
        the user's image folder)."""
        return [] if self.source == "folder" else existing_file(self.cfg["reference"])
