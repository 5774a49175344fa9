"""IDA error and time tables and the error dot plot, from records."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from kclf_workflow.reports.ida import data_origins, write_report

inp, p = snakemake.input, snakemake.params
summary, agree = write_report(
    inp.records,
    inp.reference_error[0] if inp.reference_error else None,
    inp.reference_time[0] if inp.reference_time else None,
    data_origins(inp.data),
    snakemake.output,
    p.methods,
    folds=p.folds,
    n_select=p.n_select,
    user=p.user,
)
log.info("\n%s\n%s", summary.to_string(), agree.to_string())
