"""One method on one chunk of trials (outer folds) of a multi-class dataset."""

from _joblog import to_rule_log

to_rule_log(snakemake)

from kclf_workflow.experiments.multiclass import load_trials, run_trials
from kclf_workflow.records import write_records
from kclf_workflow.seeding import chunk_trials

p, wc = snakemake.params, snakemake.wildcards
trials = chunk_trials(wc.trials)
data = load_trials(snakemake.input[0], wc.dataset, trials, p.seed, p.folds)
rows = run_trials(data, trials, wc.method, p.seed, wc.dataset, p.cfg, p.n_bins)
write_records(rows, snakemake.output[0])
