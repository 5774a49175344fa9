import logging

import numpy as np

from kclf.experiments.multilabel import make_toy
from kclf.records import atomic_write

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
toy = snakemake.params.toy
data = make_toy(snakemake.params.seed, toy["trials"], toy["n_train"], toy["n_test"], toy["shift"])
atomic_write(snakemake.output[0], lambda p: np.savez(open(p, "wb"), **data))
logging.info("%d trials of %d + %d points", toy["trials"], toy["n_train"], toy["n_test"])
