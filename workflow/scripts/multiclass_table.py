from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import pandas as pd

from kclf_workflow.records import read_records
from kclf_workflow.reports.multiclass import write_tables

out = snakemake.output
records = read_records(snakemake.input.records)
reference = (
    pd.read_csv(snakemake.input.reference[0])
    if snakemake.input.reference
    else pd.DataFrame(columns=["dataset"])
)
md = write_tables(
    records,
    reference,
    snakemake.wildcards.dataset,
    snakemake.params.folds,
    snakemake.params.per_class,
    out.csv[: -len(".csv")],
    reliability=out.reliability,
    trials=snakemake.params.trials,
    source=snakemake.params.source,
)
logging.info("\n%s", md)
