import logging

import numpy as np
from voc_auc_trials import run_trials

from kclf.records import write_records

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
p, e = snakemake.params, snakemake.params.experiment
first, last = map(int, snakemake.wildcards.trials.split("-"))
with np.load(snakemake.input[0]) as z:
    X, Y, classes = z["X"], z["Y"], [str(c) for c in z["classes"]]
rows = run_trials(
    X,
    Y,
    classes,
    p.method,
    range(first, last + 1),
    seed=p.seed,
    dataset=p.dataset,
    n_train=e["n_train"],
    folds=e["folds"],
    sigma_factors=e["sigma_factors"],
    lams=e["lams"],
    log=logging.info,
)
write_records(rows, snakemake.output[0])
