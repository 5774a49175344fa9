"""One method on a chunk of trials: seeded splits of the HMM kernel, shared AUC trial."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.experiments.multitask_auc import make_splits, multitask_trial
from kclf.records import write_records
from kclf.seeding import rng_for

e = snakemake.params.experiment
seed, dataset = snakemake.params.seed, snakemake.params.dataset
with np.load(snakemake.input[0], allow_pickle=False) as z:
    K, Y, tags = z["K"], z["Y"], z["tags"].tolist()
n = K.shape[0]
n_train, n_test = e["n_train"], e["n_test"]
if n_train + n_test > n:  # fewer clips than asked: keep the train:test ratio
    n_train = max(4, min(n - 2, round(n * n_train / (n_train + n_test))))
    n_test = n - n_train
    logging.info("only %d clips: %d train / %d test per trial", n, n_train, n_test)
first, last = map(int, snakemake.wildcards.trials.split("-"))
splits = make_splits(n, n_train, last + 1, seed, dataset)
rows = []
for trial in range(first, last + 1):
    train, test = splits[trial]
    if test.size > n_test:
        test = np.sort(rng_for(seed, dataset, "test", trial).choice(test, n_test, replace=False))
    # a tag is scored only with enough positives and negatives on both sides
    m = e["min_positives"]
    ok = [
        k
        for k in range(Y.shape[1])
        if min(Y[train, k].sum(), (1 - Y[train, k]).sum()) >= m
        and min(Y[test, k].sum(), (1 - Y[test, k]).sum()) >= m
    ]
    rows += multitask_trial(
        K,
        Y[:, ok],
        train,
        test,
        [snakemake.wildcards.method],
        dataset=dataset,
        trial=trial,
        seed=seed,
        task_names=[tags[k] for k in ok],
        kernel="precomputed",
        cv=e["folds"],
        lams=e["lams"],
        svc_Cs=None if e["lams"] is None else [1.0 / v for v in e["lams"]],
        n_bins=snakemake.params.n_bins,
    )
    logging.info(
        "trial %d: %d train, %d test, %d of %d tags",
        trial,
        train.size,
        test.size,
        len(ok),
        Y.shape[1],
    )
write_records(rows, snakemake.output[0])
