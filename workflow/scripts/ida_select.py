"""CV on each of the first n_select realisations of one dataset for one method; the
per-parameter median is used for every realisation (Raetsch's protocol)."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import json
from pathlib import Path

import numpy as np

from kclf_workflow.experiments.ida import select
from kclf_workflow.files import atomic_write
from kclf_workflow.readers import reading

p, w = snakemake.params, snakemake.wildcards
with reading(snakemake.input[0], "data archive"), np.load(snakemake.input[0]) as f:
    X, y, train = f["X"], f["y"], f["train"]
grids = p.grids
selection = select(X, y, train, w.method, grids, p.seed, w.dataset, len(train), grids["folds"])
atomic_write(
    snakemake.output[0],
    lambda f: Path(f).write_text(json.dumps(selection, indent=1, default=float)),
)
log.info("selected %s (per realisation %s)", selection["params"], selection["best"])
