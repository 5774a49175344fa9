"""One method on one chunk of realisations with the selected hyper-parameters: error,
timing and probability-quality records."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import numpy as np

from kclf_workflow.experiments.ida import evaluate
from kclf_workflow.readers import load_json, reading
from kclf_workflow.records import write_records

p, w = snakemake.params, snakemake.wildcards
with reading(snakemake.input.data, "data archive"), np.load(snakemake.input.data) as f:
    X, y, realisations = f["X"], f["y"], f["realisations"].tolist()
    train = dict(zip(realisations, f["train"]))
    test = dict(zip(realisations, f["test"]))
selection = load_json(snakemake.input.selection, "selection")
rows = evaluate(
    X,
    y,
    train,
    test,
    w.method,
    selection,
    w.dataset,
    p.grids,
    realisations,
    seed=p.seed,
    n_bins=p.n_bins,
)
write_records(rows, snakemake.output[0])
errors = [r["value"] for r in rows if r["metric"] == "error"]
log.info("realisations %s: error %.2f +- %.2f %%", w.trials, np.mean(errors), np.std(errors))
