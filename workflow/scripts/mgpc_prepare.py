"""Raw inputs and labels of one MGPC task (digits: bundled with scikit-learn; scene: the
declared ARFF files; a user's data set: its declared files)."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from pathlib import Path

from kclf_workflow.datasets.user_data import load_user_dataset
from kclf_workflow.experiments.mgpc import load_task, user_task
from kclf_workflow.files import save_npz

dataset, task = snakemake.wildcards.mgpc_dataset, snakemake.wildcards.mgpc_task
if snakemake.params.user is not None:  # the user's data set (config datasets:)
    data = user_task(load_user_dataset(dataset, snakemake.params.user), task)
else:
    scene_root = Path(snakemake.input[0]).parent if dataset == "scene" else None
    data = load_task(dataset, task, scene_root)
save_npz(snakemake.output[0], **data)
log.info("%s %s: %d samples (%d positive)", dataset, task, data["y"].size, int(data["y"].sum()))
