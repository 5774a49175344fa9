"""Generated clips of shard k (Freesound-style layout; only changed files are written) and
the shard's manifest, with each clip's metadata."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from pathlib import Path

from kclf_workflow.datasets.synthetic_audio import write_clips
from kclf_workflow.manifests import manifest_rows, write_manifest

p = snakemake.params
meta = write_clips(p.root, p.ids, seed=p.seed, duration_range=tuple(p.duration_range))
paths = [str(Path(p.root) / m["file"]) for m in meta]
extra = [{k: v for k, v in m.items() if k != "id"} for m in meta]
write_manifest(snakemake.output[0], manifest_rows(p.ids, paths, extra))
log.info("%d generated clips in %s", len(meta), p.root)
