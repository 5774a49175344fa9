from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.experiments.multiclass import run_trial
from kclf.records import write_records

cfg = snakemake.params.cfg
dataset, method = snakemake.wildcards.dataset, snakemake.wildcards.method
with np.load(snakemake.input[0]) as f:
    n_trials = sum(k.startswith("train_") for k in f.files)
    data = {
        "X": f["X"],
        "y": f["y"],
        "train": [f[f"train_{k}"] for k in range(n_trials)],
        "test": [f[f"test_{k}"] for k in range(n_trials)],
    }
rows = []
for trial in range(n_trials):
    rows += run_trial(
        data,
        trial,
        method,
        snakemake.params.seed,
        dataset,
        cfg["sigma_factors"],
        cfg["lams"],
        cfg["lspc_lams"],
        cfg["svc_Cs"],
        cfg["cv"],
        snakemake.params.n_bins,
    )
    logging.info("trial %d: %s", trial, rows[-1])
write_records(rows, snakemake.output[0])
