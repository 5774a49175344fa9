"""Training and test samples of one chunk of trials (each trial from its own seed stream)."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)


from kclf_workflow.experiments.lspc_toy import make_samples
from kclf_workflow.files import save_npz
from kclf_workflow.seeding import chunk_trials

p = snakemake.params
trials = chunk_trials(snakemake.wildcards.trials)
samples = make_samples(p.seed, trials, p.n_train_per_class, p.n_test_per_class)
save_npz(snakemake.output[0], **samples)
log.info(
    "trials %d-%d of %d + %d samples per class",
    trials[0],
    trials[-1],
    p.n_train_per_class,
    p.n_test_per_class,
)
