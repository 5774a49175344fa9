"""One method on a chunk of trials: seeded splits of the HMM kernel, shared AUC trial.
The labels come from the clip list (clips.csv, tags.txt), aligned with the kernel's clips."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from pathlib import Path

import numpy as np
import pandas as pd

from kclf.repro.datasets.audio_collections import parse_tags, tag_matrix
from kclf.repro.experiments.multitask_auc import make_splits, multitask_trial
from kclf.repro.records import write_records
from kclf.repro.seeding import chunk_trials, rng_for

p, e = snakemake.params, snakemake.params.experiment
seed, dataset = p.seed, p.dataset
with np.load(snakemake.input.kernel, allow_pickle=False) as z:
    K, ids = z["K"], z["ids"].astype(str).tolist()
clips = pd.read_csv(snakemake.input.clips, dtype={"id": str}).set_index("id")
unknown = [c for c in ids if c not in clips.index]
if unknown:
    raise ValueError(
        f"{snakemake.input.kernel} holds clips not in {snakemake.input.clips}: {unknown[:5]}"
    )
tags = Path(snakemake.input.tags).read_text().split()
Y = tag_matrix(pd.DataFrame({"tags": [parse_tags(t) for t in clips.loc[ids, "tags"]]}), tags)
n = K.shape[0]
n_train, n_test = e["n_train"], e["n_test"]
if n_train >= n - 1:
    raise ValueError(
        f"audio.experiment.n_train = {n_train} leaves fewer than 2 test clips: the kernel has "
        f"{n} usable clips ({snakemake.input.kernel})"
    )
if n_train + n_test > n:  # fewer clips than asked: keep the train:test ratio
    n_train = max(4, min(n - 2, round(n * n_train / (n_train + n_test))))
    n_test = n - n_train
    log.warning("only %d clips: %d train / %d test per trial", n, n_train, n_test)
trials = chunk_trials(snakemake.wildcards.trials)
splits = make_splits(n, n_train, trials[-1] + 1, seed, dataset)
rows = []
for trial in trials:
    train, test = splits[trial]
    if test.size > n_test:
        test = np.sort(rng_for(seed, dataset, "test", trial).choice(test, n_test, replace=False))
    # a tag is scored only with enough positives and negatives on both sides
    m = e["min_positives"]
    ok = [
        k
        for k in range(Y.shape[1])
        if min(Y[train, k].sum(), (1 - Y[train, k]).sum()) >= m
        and min(Y[test, k].sum(), (1 - Y[test, k]).sum()) >= m
    ]
    if not ok:
        raise ValueError(
            f"trial {trial}: no tag has {m} positives and negatives in both the {train.size} "
            f"training and {test.size} test clips (audio.experiment.min_positives, n_train)"
        )
    if len(ok) < Y.shape[1]:
        log.warning(
            "trial %d: tags without %d positives and negatives on both sides, not scored: %s",
            trial,
            m,
            [tags[k] for k in range(Y.shape[1]) if k not in ok],
        )
    rows += multitask_trial(
        K,
        Y[:, ok],
        train,
        test,
        [snakemake.wildcards.method],
        dataset=dataset,
        trial=trial,
        seed=seed,
        task_names=[tags[k] for k in ok],
        kernel="precomputed",
        cv=e["folds"],
        lams=e["lams"],
        svc_Cs=None if e["lams"] is None else [1.0 / v for v in e["lams"]],
        n_bins=p.n_bins,
    )
    log.info(
        "trial %d: %d train, %d test, %d of %d tags",
        trial,
        train.size,
        test.size,
        len(ok),
        len(tags),
    )
write_records(rows, snakemake.output[0])
