"""Table 1 of the LSPC-new paper from records (VOC; MULAN scene with the same layout), the
paper's figures beside ours when a reference is given, the per-class figure, and the
calibration companions (kclf.reports.auc_table, shared with the audio table)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf.reports.auc_table import write_auc_report

out = snakemake.output
write_auc_report(
    snakemake.input.records,
    str(out.csv)[: -len(".csv")],
    out.figure,
    title=snakemake.params.title,
    reference=snakemake.input.reference[0] if snakemake.input.reference else None,
    reliability=out.reliability,
    methods=snakemake.params.methods,
)
logging.info("table %s from %d record files", out.csv, len(snakemake.input.records))
