from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf.repro.experiments.mgpc import features
from kclf.repro.readers import load_npz
from kclf.repro.records import save_npz

data = load_npz(snakemake.input[0])
X = features(data, snakemake.wildcards.mgpc_repr, snakemake.params.gabor)
save_npz(snakemake.output[0], X=X)
logging.info("%s: %s", snakemake.wildcards.mgpc_repr, X.shape)
