"""The trials of one chunk of the user's multi-label data set (config datasets:)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf_workflow.datasets.user_data import load_user_dataset
from kclf_workflow.experiments.multilabel import user_trials
from kclf_workflow.files import save_npz
from kclf_workflow.seeding import chunk_trials

w, p = snakemake.wildcards, snakemake.params
d = load_user_dataset(w.dataset, p.user)
data = user_trials(d, p.seed, list(chunk_trials(w.trials)), p.test_size)
save_npz(snakemake.output[0], **data)
logging.info("%s: %s, %d labels, trials %s", w.dataset, d.files, len(d.classes), w.trials)
