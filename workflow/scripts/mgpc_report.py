from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf_workflow.reports.mgpc import (
    calibration_report,
    plot_lambda,
    plot_roc,
    skipped_methods,
    write_tables,
)

out = snakemake.output
reference = snakemake.input.reference[0] if snakemake.input.reference else None
skipped = skipped_methods(snakemake.input.curves)
write_tables(snakemake.input.records, reference, str(out.csv)[:-4], snakemake.params.user, skipped)
for method, why in skipped.items():
    logging.info("%s not run: %s", method, why)
plot_roc(snakemake.input.curves, out.roc)
plot_lambda(snakemake.input.curves, out.lam)
calibration_report(snakemake.input.records, str(out.calibration_csv), out.reliability)
logging.info("%d record files", len(snakemake.input.records))
