# Helpers of the VOC family (workflow/rules/voc.smk): where the images are, which shard
# holds which image, the trial chunks.
import functools

from kclf.repro.datasets import synthetic_voc
from kclf.repro.datasets.voc import VOC_CLASSES, image_paths, list_image_ids, resolve_voc_root
from kclf.repro.datasets.user_data import IMAGE_EXTENSIONS, list_class_folders
from kclf.repro.shards import n_shards_for, shard_members

VOC = config["voc"]
VOC_DOWNLOAD_DIR = f"{config['cache_dir']}/voc"
# one extraction folder per archive: another year's tar never reads the last one's images
VOC_EXTRACT_DIR = f"{VOC_DOWNLOAD_DIR}/{Path(VOC['download']['url']).stem}"
# voc.image_folder: the user's images, one subfolder per class (listed when parsed)
VOC_FOLDER = VOC["image_folder"] if enabled("voc") else None
VOC_FOLDER_LISTING = None
if enabled("voc"):
    checked(_checks.voc_source, VOC)
if VOC_FOLDER is not None:
    try:
        VOC_FOLDER_LISTING = list_class_folders(VOC_FOLDER, IMAGE_EXTENSIONS)
    except (OSError, ValueError) as _e:
        raise WorkflowError(f"invalid config: key 'voc.image_folder': {_e}")
VOC_CLASS_NAMES = (
    list(VOC_FOLDER_LISTING[2]) if VOC_FOLDER_LISTING else list(VOC["classes"] or VOC_CLASSES)
)
VOC_METHODS = {m: AUC_METHODS[m] for m in VOC["experiment"]["methods"]}  # name -> slug
VOC_CHUNKS = trial_chunks(VOC["experiment"]["trials"], VOC["experiment"]["trials_per_job"])
VOC_DATASET = (
    "image-folder"
    if VOC_FOLDER is not None
    else (
        "voc-synthetic"
        if VOC["voc_root"] is None and VOC["source"] == "synthetic"
        else (f"voc{VOC['year']}")
    )
)
VOC_TITLE = (
    f"Your images ({Path(VOC_FOLDER).name}: one subfolder per class, each class one-vs-rest)"
    if VOC_FOLDER is not None
    else (
        "Generated VOCdevkit images (offline stand-in for VOC2010)"
        if VOC_DATASET == "voc-synthetic"
        else (
            f"PASCAL VOC{VOC['year']} {VOC['image_set']}"
            + (f" -> {VOC['test_image_set']}" if VOC["test_image_set"] else "")
            + " (LSPC-new paper, Table 1)"
        )
    )
)


def voc_source():
    """The checked voc_source of kclf.repro.config_checks; a folder only when enabled."""
    if VOC_FOLDER is not None:
        return "folder"
    return "devkit" if VOC["voc_root"] else VOC["source"]


def voc_data_key():
    """The folder name of the family's data under results/data: the kind of source and,
    for raw data outside the project, which data (the archive, or a short hash of the
    folder's absolute path).  Switching the source, the devkit or the image folder gives
    another folder, so its data chain runs from its own raw files, and switching back
    finds the earlier features again; image sets, classes and the images' contents of
    one source reach the jobs through their params and manifests."""
    src = voc_source()
    if src == "synthetic":
        return "voc-synthetic"
    if src == "download":
        return f"voc-download-{Path(VOC['download']['url']).stem}"
    where = VOC_FOLDER if src == "folder" else VOC["voc_root"]
    return f"voc-{src}-{path_key(where)}"


VOC_DIR = f"results/data/{voc_data_key()}"
VOC_SYNTH_ROOT = f"{VOC_DIR}/VOCdevkit/VOC{VOC['year']}"


# voc.test_image_set: the devkit's own train / test split (its lists name the images)
VOC_IMAGE_SETS = [VOC["image_set"]] + ([VOC["test_image_set"]] if VOC["test_image_set"] else [])
# the dataset rule reads the test set only when there is one
VOC_SPLIT_PARAMS = {"test_image_set": VOC["test_image_set"]} if len(VOC_IMAGE_SETS) > 1 else {}


def voc_root():
    """The VOC<year> folder (for a download: after the extraction checkpoint ran), or the
    user's image folder."""
    src = voc_source()
    if src == "folder":
        return VOC_FOLDER
    if src == "devkit":
        return str(resolve_voc_root(VOC["voc_root"], VOC["year"]))
    if src == "synthetic":
        return VOC_SYNTH_ROOT
    return str(Path(checkpoints.voc_extract.get().output[0]) / "VOCdevkit" / f"VOC{VOC['year']}")


@functools.cache
def _voc_listing(root):
    if voc_source() == "synthetic":
        s = VOC["synthetic"]
        ids = synthetic_voc.image_ids(s["n_images"], VOC["year"])
        names = [
            synthetic_voc.image_filename(
                config["seed"],
                i,
                s["grey_fraction"],
                s["cmyk_fraction"],
                s["png_fraction"],
            )
            for i in ids
        ]
        paths = [f"{root}/JPEGImages/{n}" for n in names]
    elif voc_source() == "folder":  # id: "<class folder>/<file name>"
        files, y, classes = VOC_FOLDER_LISTING
        ids = [f"{classes[k]}/{f.name}" for f, k in zip(files, y)]
        paths = [str(f) for f in files]
    else:
        listed = [(s, list_image_ids(root, s, VOC_CLASS_NAMES)) for s in VOC_IMAGE_SETS]
        checked(_checks.voc_test_sets_disjoint, VOC["image_set"], listed)
        ids = [i for _, of_set in listed for i in of_set]
        paths = [str(p) for p in image_paths(root, ids)]
    if len(VOC_IMAGE_SETS) == 1:
        checked(
            _checks.leaves_test_items,
            "voc.experiment.n_train",
            VOC["experiment"]["n_train"],
            len(ids),
            f"test image (the image set has {len(ids)} images)",
        )
    n = VOC["features"]["n_shards"] or n_shards_for(len(ids), VOC["features"]["images_per_shard"])
    members = shard_members(ids, n)
    by_id = dict(zip(ids, paths))
    return ids, {k: [(i, by_id[i]) for i in v] for k, v in members.items()}


def voc_shards():
    return _voc_listing(voc_root())[1]


def voc_shard_ids(k):
    return [i for i, _ in voc_shards()[int(k)]]


def voc_shard_files(wildcards):
    """The image files of shard k (inputs of its manifest)."""
    return [p for _, p in voc_shards()[int(wildcards.k)]]


def voc_all(pattern):
    return lambda wildcards: expand(pattern, k=sorted(voc_shards()))


def voc_label_files(wildcards):
    """The ImageSets lists the labels are read from: <image_set>.txt (when present) and
    <class>_<image_set>.txt of every class; none for an image folder."""
    if voc_source() == "folder":  # labels: the class folders, in the image ids
        return []
    main = Path(voc_root()) / "ImageSets" / "Main"
    files = []
    for image_set in VOC_IMAGE_SETS:
        listing = main / f"{image_set}.txt"
        files += [str(listing)] if voc_source() == "synthetic" or listing.is_file() else []
        files += [str(main / f"{c}_{image_set}.txt") for c in VOC_CLASS_NAMES]
    return files


def voc_reference():
    """The paper's Table 1 CSV when configured and present (else nothing; never beside the
    user's image folder)."""
    return [] if voc_source() == "folder" else existing_file(VOC["reference"])
