# One manifest definition for the families whose raw files are sharded (VOC images and
# audio clips): each calls manifest_rule for its own <family>_manifest.
from kclf_workflow.plans.common import file_signature


def manifest_rule(family, data_dir, shard_files, shard_ids):
    """Define <family>_manifest, the manifest (kclf_workflow.manifests) of shard k of a
    family's raw files, whose inputs are the shard's files (``shard_files(wildcards)``)
    and whose params their ids (``shard_ids(k)``) and sizes and times, so adding or
    changing a file rewrites only its shard's manifest."""

    rule:
        name:
            f"{family}_manifest"
        input:
            shard_files,
        output:
            f"{data_dir}/manifests/shard_{{k}}.tsv",
        log:
            f"results/logs/{family}_manifest/{{k}}.log",
        wildcard_constraints:
            k=r"\d+",
        conda:
            CORE_ENV
        resources:
            mem_mb=500,
            runtime=10,
        params:
            ids=lambda wildcards: shard_ids(wildcards.k),
            signature=lambda wildcards: file_signature(shard_files(wildcards)),
        script:
            "../scripts/manifest.py"
