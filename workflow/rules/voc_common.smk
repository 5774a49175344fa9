# The VOC family's plan (kclf_workflow.plans.voc): where the images are, which shard holds
# which image, the trial chunks; a download is listed once its checkpoint has run.
from kclf_workflow.plans.voc import VocPlan

VOC = config["voc"]
VOC_PLAN = checked(
    VocPlan, VOC, seed=config["seed"], cache_dir=config["cache_dir"], enabled=enabled("voc")
)
VOC_DIR = VOC_PLAN.data_dir
VOC_SYNTH_ROOT = VOC_PLAN.synthetic_root
VOC_CLASS_NAMES = VOC_PLAN.class_names
VOC_METHODS = {m: AUC_METHODS[m] for m in VOC["experiment"]["methods"]}  # name -> slug
VOC_CHUNKS = trial_chunks(VOC["experiment"]["trials"], VOC["experiment"]["trials_per_job"])


def voc_root():
    """The VOC<year> folder (for a download: after the extraction checkpoint ran), or the
    user's image folder."""
    if VOC_PLAN.source != "download":
        return VOC_PLAN.root()
    return VOC_PLAN.root(extracted=checkpoints.voc_extract.get().output[0])


def voc_listing(root=None):
    """The images and their shards (kclf_workflow.plans.voc.ImageListing) under ``root``
    (default: :func:`voc_root`)."""
    return checked(VOC_PLAN.listing, voc_root() if root is None else root)


def voc_shard_ids(k):
    return [i for i, _ in voc_listing().shards[int(k)]]


def voc_shard_files(wildcards):
    """The image files of shard k (inputs of its manifest)."""
    return [p for _, p in voc_listing().shards[int(wildcards.k)]]


def voc_all(pattern):
    return lambda wildcards: expand(pattern, k=sorted(voc_listing().shards))
