"""Generated images of shard k (only changed files are written) and the shard's manifest."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from kclf_workflow.datasets.synthetic_voc import write_images
from kclf_workflow.manifests import manifest_rows, write_manifest

p = snakemake.params
s = p.synthetic
paths = write_images(
    p.root,
    p.ids,
    p.classes,
    p.seed,
    tuple(s["size"]),
    s["max_objects"],
    s["difficult_fraction"],
    s["grey_fraction"],
    s["cmyk_fraction"],
    s["png_fraction"],
)
write_manifest(snakemake.output[0], manifest_rows(p.ids, paths))
log.info("%d generated images in %s", len(paths), p.root)
