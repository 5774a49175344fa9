"""The multilabel table of one data set, its calibration companions (table and
reliability diagram of the per-label probabilities) and the training-time table."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf_workflow.records import read_records
from kclf_workflow.reports.multilabel import write_calibration, write_multilabel_time, write_table

out = snakemake.output
dataset = snakemake.params.dataset
records = read_records(snakemake.input)
stem = str(out.csv)[: -len(".csv")]
write_table(records, dataset, out.csv)
write_calibration(records, dataset, stem, out.reliability)
write_multilabel_time(records, dataset, stem)
logging.info("%s: %d records from %d files", dataset, len(records), len(snakemake.input))
