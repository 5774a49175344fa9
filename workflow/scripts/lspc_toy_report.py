from _joblog import to_rule_log

to_rule_log(snakemake)


from kclf_workflow.reports.lspc_toy import write_report

write_report(snakemake.input.records, snakemake.input.curves, snakemake.output)
