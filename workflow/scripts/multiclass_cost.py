from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np
import pandas as pd

from kclf.kernels import median_sigma
from kclf_workflow.experiments.multiclass import cost_curve
from kclf_workflow.files import atomic_write
from kclf_workflow.readers import reading
from kclf_workflow.seeding import seed_for

cfg = snakemake.params.cfg
with reading(snakemake.input[0], "data archive"), np.load(snakemake.input[0]) as f:
    X, y = f["X"], f["y"]
sigma = cfg["sigma_factor"] * median_sigma(X)
rows = cost_curve(
    X,
    y,
    cfg["classes"],
    cfg["per_class"],
    sigma,
    cfg["lam"],
    seed_for(snakemake.params.seed, "multiclass", "cost"),
    cfg["repeats"],
)
df = pd.DataFrame(rows).assign(per_class=cfg["per_class"], sigma=sigma, lam=cfg["lam"])
atomic_write(snakemake.output[0], lambda p: df.to_csv(p, index=False, float_format="%.6g"))
logging.info("\n%s", df)
