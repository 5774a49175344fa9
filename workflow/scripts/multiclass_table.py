import logging

import pandas as pd

from kclf.experiments.multiclass import multiclass_table
from kclf.records import read_records
from kclf.reporting import write_table

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
dataset = snakemake.wildcards.dataset
records = read_records(snakemake.input.records)
reference = (
    pd.read_csv(snakemake.input.reference[0])
    if snakemake.input.reference
    else pd.DataFrame(columns=["dataset"])
)
summary, md, tex, caption = multiclass_table(
    records, reference, dataset, snakemake.params.folds, snakemake.params.per_class
)
write_table(snakemake.output.csv[: -len(".csv")], summary, md, tex, caption)
logging.info("\n%s", md)
