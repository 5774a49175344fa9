from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.experiments.multilabel import make_toy
from kclf.records import atomic_write

toy = snakemake.params.toy
data = make_toy(snakemake.params.seed, toy["trials"], toy["n_train"], toy["n_test"], toy["shift"])
atomic_write(snakemake.output[0], lambda p: np.savez(open(p, "wb"), **data))
logging.info("%d trials of %d + %d points", toy["trials"], toy["n_train"], toy["n_test"])
