"""SURF (or SIFT) descriptors of the images of one shard, listed by its manifest."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from kclf_workflow.manifests import read_manifest
from kclf_workflow.shards.images import extract_shard, save_shard

p = snakemake.params
rows = read_manifest(snakemake.input[0])
shard = extract_shard(
    [r["id"] for r in rows],
    [r["path"] for r in rows],
    p.detector,
    p.detector_params,
    p.skip_bad_images,
)
save_shard(shard, snakemake.output[0])
log.info(
    "%d images, %d descriptors, %d bad", len(shard["ids"]), shard["counts"].sum(), len(shard["bad"])
)
