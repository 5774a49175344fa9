"""One method on one chunk of trials of a (task, representation): seeded stratified
splits (trial t from its own stream), records and curves."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import numpy as np

from kclf_workflow.experiments.mgpc import make_splits, run
from kclf_workflow.files import save_npz
from kclf_workflow.readers import load_npz, reading
from kclf_workflow.records import write_records
from kclf_workflow.seeding import chunk_trials

w, p = snakemake.wildcards, snakemake.params
data = load_npz(snakemake.input.data)
with reading(snakemake.input.features, "features archive"), np.load(snakemake.input.features) as f:
    X = f["X"]
trials = chunk_trials(w.trials)
data["train"] = make_splits(
    data["y"], trials, p.seed, f"{w.mgpc_dataset}/{w.mgpc_task}", p.train_fraction, p.max_train
)
rows, curves = run(
    data,
    X,
    w.mgpc_method,
    p.seed,
    p.cfg,
    w.mgpc_dataset,
    w.mgpc_task,
    w.mgpc_repr,
    n_bins=p.n_bins,
    trials=trials,
)
write_records(rows, snakemake.output.records)
save_npz(snakemake.output.curves, **curves)
ce = [r["value"] for r in rows if r["metric"] == "ce"]
if "skipped" in curves:
    log.info("trials %d-%d: skipped: %s", trials[0], trials[-1], curves["skipped"])
else:
    log.info(
        "trials %d-%d: %d records; mean CE %.4f", trials[0], trials[-1], len(rows), np.mean(ce)
    )
