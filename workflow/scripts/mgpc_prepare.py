"""Raw inputs and labels of one MGPC task (digits: bundled with scikit-learn; scene: the
declared ARFF files)."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from pathlib import Path

from kclf.repro.experiments.mgpc import load_task
from kclf.repro.records import save_npz

dataset, task = snakemake.wildcards.mgpc_dataset, snakemake.wildcards.mgpc_task
scene_root = Path(snakemake.input[0]).parent if dataset == "scene" else None
data = load_task(dataset, task, scene_root)
save_npz(snakemake.output[0], **data)
log.info("%s %s: %d samples (%d positive)", dataset, task, data["y"].size, int(data["y"].sum()))
