"""One method on a chunk of trials: seeded n_train/rest splits, the shared AUC trial."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.experiments.multitask_auc import make_splits, multitask_trial
from kclf.kernels import median_sigma
from kclf.records import write_records

p, e = snakemake.params, snakemake.params.experiment
with np.load(snakemake.input[0]) as z:
    X, Y, classes = z["X"], z["Y"], [str(c) for c in z["classes"]]
first, last = map(int, snakemake.wildcards.trials.split("-"))
splits = make_splits(len(X), min(e["n_train"], len(X) - 1), last + 1, p.seed, p.dataset)
sigma_factors = e["sigma_factors"]
rows = []
for trial in range(first, last + 1):
    train, test = splits[trial]
    sigmas = None  # None: the median-heuristic grid of LSPCCV on the training part
    if sigma_factors is not None:
        sigmas = median_sigma(X[train]) * np.asarray(sigma_factors, dtype=float)
    rows += multitask_trial(
        X,
        Y,
        train,
        test,
        [snakemake.wildcards.method],
        dataset=p.dataset,
        trial=trial,
        seed=p.seed,
        task_names=classes,
        cv=e["folds"],
        sigmas=sigmas,
        lams=e["lams"],
        svc_Cs=e["svc_Cs"],
        n_bins=p.n_bins,
    )
    logging.info("trial %d: %d train, %d test images", trial, train.size, test.size)
write_records(rows, snakemake.output[0])
