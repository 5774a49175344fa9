"""One method on a chunk of trials of a feature data set (rules voc_fit and scene_fit):
seeded n_train/rest splits (scene: trial 0 is MULAN's own split), the shared AUC trial."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import numpy as np

from kclf_workflow.experiments.multitask_auc import feature_trials
from kclf_workflow.readers import reading
from kclf_workflow.records import write_records
from kclf_workflow.seeding import chunk_trials

p, family = snakemake.params, snakemake.rule.removesuffix("_fit")
with reading(snakemake.input[0], "data archive"), np.load(snakemake.input[0]) as z:
    X, Y, classes = z["X"], z["Y"], [str(c) for c in z["classes"]]
    own_n_train = int(z["n_train"]) if "n_train" in z.files else None
    source = str(z["title"]) if "title" in z.files else None
rows = feature_trials(
    X,
    Y,
    classes,
    chunk_trials(snakemake.wildcards.trials),
    snakemake.wildcards.method,
    dataset=getattr(p, "dataset", family),
    family=family,
    seed=p.seed,
    experiment=p.experiment,
    own_n_train=own_n_train,
    source=snakemake.input[0],
    n_bins=p.n_bins,
)
write_records(rows, snakemake.output[0], source=source)
