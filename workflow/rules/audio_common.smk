# The audio family's plan (kclf_workflow.plans.audio): where the clips are, which the
# selection keeps, which shard holds which clip; the ESC-50 archive is listed once its
# checkpoint has run.
from kclf_workflow.plans.audio import AudioPlan

AUDIO = config["audio"]
AUDIO_PLAN = checked(AudioPlan, AUDIO, seed=config["seed"], cache_dir=config["cache_dir"])
AUDIO_DATASET = AUDIO_PLAN.dataset
AUDIO_DIR = AUDIO_PLAN.data_dir
AUDIO_SYNTH_ROOT = AUDIO_PLAN.synthetic_root
AUDIO_METHODS = {m: AUC_METHODS[m] for m in AUDIO["experiment"]["methods"]}
AUDIO_CHUNKS = trial_chunks(AUDIO["experiment"]["trials"], AUDIO["experiment"]["trials_per_job"])
# ESC-50 without a root: the GitHub archive (rule download_audio_ESC_50_master_zip),
# unpacked into AUDIO_PLAN.extract_dir by a checkpoint
AUDIO_ARCHIVE = download_path(AUDIO_PLAN.archive_name) if AUDIO_PLAN.archive_name else None


def audio_root():
    """The collection's folder (ESC-50 download: after the extraction checkpoint ran)."""
    if AUDIO_ARCHIVE:
        return AUDIO_PLAN.root(extracted=checkpoints.audio_extract.get().output[0])
    return AUDIO_PLAN.root()


def audio_listing(root=None):
    """The clips and their shards (kclf_workflow.plans.audio.ClipListing) under ``root``
    (default: :func:`audio_root`)."""
    return checked(AUDIO_PLAN.listing, audio_root() if root is None else root)


def audio_shard_ids(k):
    return [c for c, _ in audio_listing().shards[int(k)]]


def audio_shard_files(wildcards):
    return [p for _, p in audio_listing().shards[int(wildcards.k)]]
