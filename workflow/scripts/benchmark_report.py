"""The benchmark's per-fold table, means, average ranks with the Friedman tests, the
critical-difference diagrams and the paper-vs-peer statements, from records."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from kclf_workflow.reports.benchmark import write_report

p = snakemake.params
folds, ranks, pairs = write_report(
    snakemake.input,
    snakemake.output,
    methods=p.methods,
    sources=p.sources,
    comparisons=p.comparisons,
    ropes=p.rope,
    seed=p.seed,
    folds_k=p.folds,
    inner_folds=p.inner_folds,
)
log.info("%d rows\n%s\n%s", len(folds), ranks.to_string(), pairs.to_string())
