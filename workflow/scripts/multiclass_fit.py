"""One method on one chunk of trials (outer folds) of a multi-class dataset."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import numpy as np

from kclf.repro.experiments.multiclass import run_trial, trial_split
from kclf.repro.records import write_records
from kclf.repro.seeding import chunk_trials

cfg, p = snakemake.params.cfg, snakemake.params
dataset, method = snakemake.wildcards.dataset, snakemake.wildcards.method
trials = chunk_trials(snakemake.wildcards.trials)
with np.load(snakemake.input[0]) as f:
    data = {"X": f["X"], "y": f["y"], "train": {}, "test": {}}
    if "train_0" in f.files:  # a fixed split (isolet: the UCI one): one trial
        if list(trials) != [0]:
            raise ValueError(f"{snakemake.input[0]} has one fixed split: trial chunk must be 0-0")
        data["train"][0], data["test"][0] = f["train_0"], f["test_0"]
    else:
        for t in trials:
            data["train"][t], data["test"][t] = trial_split(data["y"], dataset, p.seed, p.folds, t)
rows = []
for trial in trials:
    rows += run_trial(
        data,
        trial,
        method,
        p.seed,
        dataset,
        cfg["sigma_factors"],
        cfg["grid"] if method.startswith("klr") else None,  # lams
        cfg["grid"] if method == "lspc_new" else None,  # lspc_lams
        cfg["grid"] if method == "svc" else None,  # svc_Cs
        cfg["cv"],
        p.n_bins,
    )
    log.info("trial %d: %s", trial, rows[-1])
write_records(rows, snakemake.output[0])
