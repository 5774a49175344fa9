"""Manifest of one shard of raw files (kclf_workflow.manifests): id, path, size, mtime, sha256."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from kclf_workflow.manifests import manifest_rows, write_manifest

ids = list(snakemake.params.ids)
rows = manifest_rows(ids, list(snakemake.input))
write_manifest(snakemake.output[0], rows)
log.info("%d files, %d bytes", len(rows), sum(r["size"] for r in rows))
