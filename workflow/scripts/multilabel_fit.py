from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
import warnings

import numpy as np

from kclf.repro.experiments.multilabel import fit_method
from kclf.repro.records import save_npz, write_records

warnings.simplefilter("default")
with np.load(snakemake.input[0]) as f:
    data = {k: f[k] for k in f.files}
rows, preds = fit_method(
    data,
    snakemake.wildcards.dataset,
    snakemake.wildcards.method,
    snakemake.params.cfg,
    snakemake.params.seed,
    n_bins=snakemake.params.n_bins,
)
write_records(rows, snakemake.output.records)
save_npz(snakemake.output.predictions, **preds)
logging.info("%d records", len(rows))
