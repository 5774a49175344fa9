import logging

from kclf.reports.lspc_toy import write_report

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
write_report(snakemake.input.records, snakemake.input.curves, snakemake.output)
