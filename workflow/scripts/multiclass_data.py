"""Inputs and labels of one multi-class dataset (isolet: also its UCI train/test split).
The K-fold trials are drawn by the fit jobs (kclf.repro.experiments.multiclass.trial_split), so
more trials never rewrite this file."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import numpy as np

from kclf.repro.experiments.multiclass import prepare
from kclf.repro.records import save_npz

inp, dataset = snakemake.input, snakemake.wildcards.dataset
data = prepare(
    dataset,
    snakemake.params.seed,
    2,
    isolet_mat=inp.get("mat"),
    isolet_train=inp.get("train"),
    isolet_test=inp.get("test"),
    per_class=snakemake.params.per_class,
    trials=1,
)
arrays = {"X": data["X"], "y": data["y"]}
if dataset == "isolet":
    arrays["train_0"], arrays["test_0"] = data["train"][0], data["test"][0]
save_npz(snakemake.output[0], **arrays)
log.info("%s: X %s, %d classes", dataset, data["X"].shape, np.unique(data["y"]).size)
