"""IDA error and time tables and the error dot plot, from records."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.reports.ida import write_report

origins = {}
for path in snakemake.input.data:  # noqa: F821
    with np.load(path) as f:
        origins[path.rsplit("/", 1)[-1].removesuffix(".npz")] = str(f["origin"])
p = snakemake.params  # noqa: F821
summary, agree = write_report(
    snakemake.input.records,  # noqa: F821
    p.reference_error,
    p.reference_time,
    origins,
    snakemake.output,  # noqa: F821
    p.methods,
    folds=p.folds,
    n_select=p.n_select,
)
logging.info("\n%s\n%s", summary.to_string(), agree.to_string())
