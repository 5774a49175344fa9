"""One method on one chunk of trials: sigma and lambda by CV, records and trial curves."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)


from kclf_workflow.experiments.lspc_toy import fit_method
from kclf_workflow.files import save_npz
from kclf_workflow.readers import load_npz
from kclf_workflow.records import write_records

p = snakemake.params
samples = load_npz(snakemake.input[0])
rows, curves = fit_method(
    samples,
    snakemake.wildcards.method,
    p.seed,
    p.folds,
    p.sigmas,
    p.lams,
    p.n_bins,
    variant=p.variant,
)
write_records(rows, snakemake.output.records)
save_npz(snakemake.output.curves, **curves)
log.info("%d records", len(rows))
