"""Pattern set and realisations of one IDA dataset -> results/data/ida/<dataset>.npz."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.experiments.ida import prepare
from kclf.records import atomic_write

p = snakemake.params  # noqa: F821
d = prepare(
    snakemake.wildcards.dataset,  # noqa: F821
    p.seed,
    mirror=p.mirror,
    benchmarks_mat=snakemake.input[0] if len(snakemake.input) else None,  # noqa: F821
    generate=p.generate,
    n_realisations=p.realisations,
)
atomic_write(snakemake.output[0], lambda f: np.savez(open(f, "wb"), **d))  # noqa: F821
logging.info(
    "%s: patterns %s, %d realisations of %d train / %d test; %s",
    snakemake.wildcards.dataset,  # noqa: F821
    d["X"].shape,
    *d["train"].shape,
    d["test"].shape[1],
    d["origin"],
)
