from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.experiments.lspc_toy import make_samples
from kclf.records import atomic_write

cfg = snakemake.params.cfg
samples = make_samples(
    snakemake.params.seed, cfg["trials"], cfg["n_train_per_class"], cfg["n_test_per_class"]
)
atomic_write(snakemake.output[0], lambda p: np.savez(open(p, "wb"), **samples))
logging.info(
    "%d trials of %d + %d samples per class",
    cfg["trials"],
    cfg["n_train_per_class"],
    cfg["n_test_per_class"],
)
