from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.experiments.lspc_toy import fit_method
from kclf.records import atomic_write, write_records

cfg = snakemake.params.cfg
with np.load(snakemake.input[0]) as f:
    samples = dict(f)
rows, curves = fit_method(
    samples,
    snakemake.wildcards.method,
    snakemake.params.seed,
    cfg["folds"],
    cfg["sigmas"],
    cfg["lams"],
    snakemake.params.n_bins,
)
write_records(rows, snakemake.output.records)
atomic_write(snakemake.output.curves, lambda p: np.savez(open(p, "wb"), **curves))
logging.info("%d records", len(rows))
