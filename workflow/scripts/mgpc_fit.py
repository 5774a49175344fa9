from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.experiments.mgpc import run
from kclf.records import atomic_write, write_records

w = snakemake.wildcards
with np.load(snakemake.input.data) as f:
    data = dict(f)
with np.load(snakemake.input.features) as f:
    X = f["X"]
rows, curves = run(
    data,
    X,
    w.mgpc_method,
    snakemake.params.seed,
    snakemake.params.cfg,
    w.mgpc_dataset,
    w.mgpc_task,
    w.mgpc_repr,
    n_bins=snakemake.params.n_bins,
)
write_records(rows, snakemake.output.records)
atomic_write(snakemake.output.curves, lambda f: np.savez(open(f, "wb"), **curves))
ce = [r["value"] for r in rows if r["metric"] == "ce"]
logging.info("%d records; mean CE %.4f", len(rows), float(np.mean(ce)))
