"""One method on a chunk of scene trials: trial 0 is MULAN's own split, trial t > 0 a
seeded random re-split with the same training size; the shared AUC trial."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.kernels import median_sigma
from kclf.repro.experiments.multitask_auc import make_splits, multitask_trial
from kclf.repro.records import write_records
from kclf.repro.seeding import chunk_trials

seed, e = snakemake.params.seed, snakemake.params.experiment
with np.load(snakemake.input[0]) as z:
    X, Y, classes, n_train = z["X"], z["Y"], [str(c) for c in z["classes"]], int(z["n_train"])
trials = chunk_trials(snakemake.wildcards.trials)
splits = make_splits(len(X), n_train, trials[-1] + 1, seed, "scene")
splits[0] = (np.arange(n_train), np.arange(n_train, len(X)))
rows = []
for trial in trials:
    train, test = splits[trial]
    sigmas = None
    if e["sigma_factors"] is not None:
        sigmas = median_sigma(X[train]) * np.asarray(e["sigma_factors"], dtype=float)
    rows += multitask_trial(
        X,
        Y,
        train,
        test,
        [snakemake.wildcards.method],
        dataset="scene",
        trial=trial,
        seed=seed,
        task_names=classes,
        cv=e["folds"],
        sigmas=sigmas,
        lams=e.get("lams"),
        svc_Cs=e.get("svc_Cs"),
        n_bins=snakemake.params.n_bins,
    )
    logging.info("trial %d: %d train, %d test", trial, train.size, test.size)
write_records(rows, snakemake.output[0])
