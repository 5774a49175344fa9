"""CV on the first realisations, then every realisation, for one dataset and method:
error, timing and probability-quality records."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import json
import logging
from pathlib import Path

import numpy as np

from kclf.experiments.ida import evaluate, select
from kclf.records import atomic_write, write_records

cfg = snakemake.params.cfg  # noqa: F821
dataset, method = snakemake.wildcards.dataset, snakemake.wildcards.method  # noqa: F821
with np.load(snakemake.input[0]) as f:  # noqa: F821
    X, y, train, test = f["X"], f["y"], f["train"], f["test"]
selection = select(
    X,
    y,
    train,
    method,
    cfg,
    snakemake.params.seed,
    dataset,
    cfg["n_select"],
    cfg["folds"],  # noqa: F821
)
logging.info("selected %s (per realisation %s)", selection["params"], selection["best"])
rows = evaluate(
    X,
    y,
    train,
    test,
    method,
    selection,
    dataset,
    cfg,
    seed=snakemake.params.seed,  # noqa: F821
    n_bins=snakemake.params.n_bins,  # noqa: F821
)
write_records(rows, snakemake.output.records)  # noqa: F821
atomic_write(
    snakemake.output.selection,  # noqa: F821
    lambda p: Path(p).write_text(json.dumps(selection, indent=1, default=float)),
)
errors = [r["value"] for r in rows if r["metric"] == "error"]
logging.info("%d realisations, error %.2f +- %.2f %%", len(errors), np.mean(errors), np.std(errors))
