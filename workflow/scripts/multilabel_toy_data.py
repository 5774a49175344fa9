"""The toy data of one chunk of trials (each trial from its own seed stream)."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)


from kclf_workflow.experiments.multilabel import make_toy
from kclf_workflow.files import save_npz
from kclf_workflow.seeding import chunk_trials

p = snakemake.params
trials = chunk_trials(snakemake.wildcards.trials)
data = make_toy(p.seed, trials, p.n_train, p.n_test, p.shift)
save_npz(snakemake.output[0], **data)
log.info("trials %d-%d of %d + %d points", trials[0], trials[-1], p.n_train, p.n_test)
