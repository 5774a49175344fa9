from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf_workflow.experiments.mgpc import features
from kclf_workflow.files import save_npz
from kclf_workflow.readers import load_npz

data = load_npz(snakemake.input[0])
X = features(data, snakemake.wildcards.mgpc_repr, snakemake.params.gabor)
save_npz(snakemake.output[0], X=X)
logging.info("%s: %s", snakemake.wildcards.mgpc_repr, X.shape)
