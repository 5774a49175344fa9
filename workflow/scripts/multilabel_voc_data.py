from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf_workflow.files import save_npz
from kclf_workflow.readers import reading
from kclf_workflow.seeding import rng_for

with reading(snakemake.input[0], "data archive"), np.load(snakemake.input[0]) as z:
    X, Y = z["X"].astype(float), (z["Y"] > 0).astype(int)
    names = z["classes"] if "classes" in z.files else None
# one seeded half/half split of the image pipeline's images (trial 0)
perm = rng_for(snakemake.params.seed, "multilabel", "voc", "split", 0).permutation(len(X))
tr, te = perm[: len(X) // 2], perm[len(X) // 2 :]
data = {"X_0": X[tr], "Y_0": Y[tr], "Xt_0": X[te], "Yt_0": Y[te]}
if names is not None:
    data["label_names"] = names
save_npz(snakemake.output[0], **data)
logging.info(
    "VOC bag-of-words %s, %d labels: %d train, %d test", X.shape, Y.shape[1], len(tr), len(te)
)
