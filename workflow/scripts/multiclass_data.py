"""Inputs and labels of one multi-class dataset (isolet and a user's train/test files: also
the fixed split). The K-fold trials are drawn by the fit jobs
(kclf_workflow.experiments.multiclass.trial_split), so more trials never rewrite this file."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import numpy as np

from kclf_workflow.datasets.user_data import load_user_dataset
from kclf_workflow.experiments.multiclass import prepare, prepare_user
from kclf_workflow.files import save_npz

inp, p, dataset = snakemake.input, snakemake.params, snakemake.wildcards.dataset
if p.user is not None:  # the user's data set (config datasets:)
    arrays = prepare_user(load_user_dataset(dataset, p.user))
else:
    data = prepare(
        dataset,
        p.seed,
        2,
        isolet_mat=inp.get("mat"),
        isolet_train=inp.get("train"),
        isolet_test=inp.get("test"),
        per_class=p.per_class,
        trials=1,
    )
    arrays = {"X": data["X"], "y": data["y"]}
    if dataset == "isolet":
        arrays["train_0"], arrays["test_0"] = data["train"][0], data["test"][0]
save_npz(snakemake.output[0], **arrays)
log.info("%s: X %s, %d classes", dataset, arrays["X"].shape, np.unique(arrays["y"]).size)
