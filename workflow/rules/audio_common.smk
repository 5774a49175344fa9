# Config, listing and input functions of the audio family (workflow/rules/audio.smk).
import functools

import pandas as pd

from kclf.repro.datasets import synthetic_audio
from kclf.repro.datasets.audio_collections import METADATA_FILES, load_collection, select_clips
from kclf.repro.shards import shard_of

AUDIO = config["audio"]
AUDIO_DATASET = {
    "synthetic": "audio-synthetic",
    "freesound": "freesound",
    "esc50": "esc50",
    "urbansound8k": "urbansound8k",
    "folder": "audio-folder",
}[AUDIO["source"]]
# a collection given by its folder: the folder's own data directory (see voc_data_key)
AUDIO_DIR = (
    f"results/data/{AUDIO_DATASET}-{path_key(AUDIO['root'])}"
    if AUDIO["root"] and AUDIO["source"] != "synthetic"
    else f"results/data/{AUDIO_DATASET}"
)
AUDIO_SYNTH_ROOT = f"{AUDIO_DIR}/collection"
AUDIO_LAYOUT = "freesound" if AUDIO["source"] == "synthetic" else AUDIO["source"]
AUDIO_METHODS = {m: AUC_METHODS[m] for m in AUDIO["experiment"]["methods"]}
AUDIO_FEATURE_SHARDS = list(range(AUDIO["features"]["n_shards"]))
AUDIO_KERNEL_SHARDS = list(range(AUDIO["kernel"]["n_shards"]))
# audio.kernel.landmarks: m landmark clips drawn from the config's seed (stream "audio",
# "landmarks"); absent or null = the full kernel, whose rules then read neither key
AUDIO_LANDMARK_PARAMS = (
    {}
    if AUDIO["kernel"].get("landmarks") is None
    else {"landmarks": AUDIO["kernel"]["landmarks"], "seed": config["seed"]}
)
AUDIO_CHUNKS = trial_chunks(AUDIO["experiment"]["trials"], AUDIO["experiment"]["trials_per_job"])
# the paper's Table 2 beside ours, never beside the user's own tag folders
AUDIO_REFERENCE = [] if AUDIO["source"] == "folder" else existing_file(AUDIO["reference"])
AUDIO_TITLE = (
    f"Your clips ({Path(AUDIO['root']).name}: one subfolder per tag, each tag one-vs-rest)"
    if AUDIO["source"] == "folder" and AUDIO["root"]
    else AUDIO_DATASET
)

checked(_checks.audio_root_required, AUDIO)
# ESC-50 without a root: the GitHub archive (rule download_audio_ESC_50_master_zip),
# unpacked into AUDIO_EXTRACTED by a checkpoint
AUDIO_ARCHIVE_NAME = "audio/ESC-50-master.zip"
AUDIO_ARCHIVE = (
    download_path(AUDIO_ARCHIVE_NAME) if AUDIO["source"] == "esc50" and not AUDIO["root"] else None
)
AUDIO_EXTRACTED = f"{config['cache_dir']}/audio/ESC-50"


def audio_root():
    """The collection's folder (ESC-50 download: after the extraction checkpoint ran)."""
    if AUDIO["source"] == "synthetic":
        return AUDIO_SYNTH_ROOT
    if AUDIO_ARCHIVE:
        extracted = Path(checkpoints.audio_extract.get().output[0])
        return str(next(extracted.glob("*/meta/esc50.csv")).parent.parent)
    return AUDIO["root"]


@functools.cache
def _audio_listing(root):
    """``(listed, dropped, shards)``: the clips the metadata lists (a table), the listed
    paths missing on disk (missing_files: drop) and the shards {k: [(id, path), ...]} of
    the clips the paper's selection keeps."""
    dropped = []
    if AUDIO["source"] == "synthetic":
        s = AUDIO["synthetic"]
        ids = synthetic_audio.clip_ids(s["n_clips"])
        info = [
            synthetic_audio.clip_info(config["seed"], c, (s["min_seconds"], s["max_seconds"]))
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
                AUDIO_LAYOUT, root, missing=AUDIO["missing_files"], dropped=dropped
            )
        except (FileNotFoundError, ValueError) as exc:
            raise WorkflowError(f"audio collection {root}: {exc}") from None
    sel = AUDIO["selection"]
    clips, tags = select_clips(listed, sel["n_top_tags"], sel["min_seconds"], sel["max_seconds"])
    if len(clips) < 4:
        raise WorkflowError(
            f"audio collection {root}: only {len(clips)} clips pass the selection "
            f"(key 'audio.selection': {sel})"
        )
    checked(
        _checks.leaves_test_items,
        "audio.experiment.n_train",
        AUDIO["experiment"]["n_train"],
        len(clips),
        f"test clip ({len(clips)} clips of {root} pass the selection)",
    )
    n = len(AUDIO_FEATURE_SHARDS)
    shards = {k: [] for k in range(n)}
    for cid, path in zip(clips["id"], clips["path"]):
        shards[shard_of(cid, n)].append((cid, str(path)))
    return listed, dropped, shards


def audio_shards():
    return _audio_listing(audio_root())[2]


def audio_generated_ids(k):
    """Generated clips of shard k: every listed one (the metadata lists them all), the
    selected ones among them are the shard's HMM clips."""
    listed = _audio_listing(AUDIO_SYNTH_ROOT)[0]
    n = len(AUDIO_FEATURE_SHARDS)
    return [c for c in listed["id"] if shard_of(c, n) == int(k)]


def audio_shard_ids(k):
    return [c for c, _ in audio_shards()[int(k)]]


def audio_shard_files(wildcards):
    return [p for _, p in audio_shards()[int(wildcards.k)]]


def audio_metadata(wildcards):
    """What audio_clips reads: the metadata file, for ESC-50 and metadata
    without durations also the clips whose header gives the duration; a tag-folder
    collection: every clip (no metadata; the folders are the tags)."""
    root = audio_root()
    listed = _audio_listing(root)[0]
    if AUDIO_LAYOUT == "folder":
        return [str(p) for p in listed["path"]]
    files = [f"{root}/{METADATA_FILES[AUDIO_LAYOUT]}"]
    if AUDIO["source"] != "synthetic" and (
        AUDIO_LAYOUT == "esc50"
        or (AUDIO_LAYOUT == "freesound" and _metadata_lacks_durations(files[0]))
    ):
        files += [str(p) for p in listed["path"]]
    return files


def audio_root_of(metadata):
    """The collection folder of its metadata file."""
    return str(Path(metadata).parents[len(Path(METADATA_FILES[AUDIO_LAYOUT]).parts) - 1])


@functools.cache
def _metadata_lacks_durations(path):
    meta = pd.read_csv(path)
    return "duration" not in meta or bool(meta["duration"].isna().any())
