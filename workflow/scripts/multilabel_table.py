import logging

from kclf.experiments.multilabel import write_table
from kclf.records import read_records

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
write_table(read_records(snakemake.input), snakemake.params.dataset, snakemake.output.csv)
