"""One method on a chunk of trials: seeded n_train/rest splits, the shared AUC trial."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import numpy as np

from kclf.kernels import median_sigma
from kclf.repro.experiments.multitask_auc import make_splits, multitask_trial
from kclf.repro.records import write_records
from kclf.repro.seeding import chunk_trials

p, e = snakemake.params, snakemake.params.experiment
method = snakemake.wildcards.method
with np.load(snakemake.input[0]) as z:
    X, Y, classes = z["X"], z["Y"], [str(c) for c in z["classes"]]
if e["n_train"] >= len(X):
    raise ValueError(
        f"voc.experiment.n_train = {e['n_train']} leaves no test image: "
        f"{snakemake.input[0]} holds {len(X)} images"
    )
trials = chunk_trials(snakemake.wildcards.trials)
splits = make_splits(len(X), e["n_train"], trials[-1] + 1, p.seed, p.dataset)
rows = []
for trial in trials:
    train, test = splits[trial]
    sigmas = None  # None: the median-heuristic grid of LSPCCV on the training part
    if e["sigma_factors"] is not None:
        sigmas = median_sigma(X[train]) * np.asarray(e["sigma_factors"], dtype=float)
    got = multitask_trial(
        X,
        Y,
        train,
        test,
        [method],
        dataset=p.dataset,
        trial=trial,
        seed=p.seed,
        task_names=classes,
        cv=e["folds"],
        sigmas=sigmas,
        lams=e.get("lams"),
        svc_Cs=e.get("svc_Cs"),
        n_bins=p.n_bins,
    )
    scored = sorted({r["task"] for r in got if r["metric"] == "auc"})
    if not scored:
        raise ValueError(
            f"trial {trial}: no class has positives and negatives among the {test.size} test "
            f"images (voc.experiment.n_train = {e['n_train']} of {len(X)} images)"
        )
    missing = [c for c in classes if c not in scored]
    if missing:
        log.warning("trial %d: no AUC for %s (one class only in the test part)", trial, missing)
    rows += got
    log.info("trial %d: %d train, %d test images", trial, train.size, test.size)
write_records(rows, snakemake.output[0])
