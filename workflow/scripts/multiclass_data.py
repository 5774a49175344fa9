from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.experiments.multiclass import prepare
from kclf.records import atomic_write

inp = snakemake.input
data = prepare(
    snakemake.wildcards.dataset,
    snakemake.params.seed,
    snakemake.params.folds,
    isolet_mat=inp.get("mat"),
    isolet_train=inp.get("train"),
    isolet_test=inp.get("test"),
    per_class=snakemake.params.per_class,
)
arrays = {"X": data["X"], "y": data["y"]}
for k, (tr, te) in enumerate(zip(data["train"], data["test"])):
    arrays[f"train_{k}"], arrays[f"test_{k}"] = tr, te
atomic_write(snakemake.output[0], lambda p: np.savez(open(p, "wb"), **arrays))
logging.info(
    "%s: X %s, %d classes, %d trials",
    snakemake.wildcards.dataset,
    data["X"].shape,
    np.unique(data["y"]).size,
    len(data["train"]),
)
