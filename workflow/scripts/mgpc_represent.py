from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.repro.experiments.mgpc import features
from kclf.repro.records import save_npz

with np.load(snakemake.input[0]) as f:
    data = dict(f)
X = features(data, snakemake.wildcards.mgpc_repr, snakemake.params.gabor)
save_npz(snakemake.output[0], X=X)
logging.info("%s: %s", snakemake.wildcards.mgpc_repr, X.shape)
