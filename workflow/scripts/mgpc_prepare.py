from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
from pathlib import Path

import numpy as np

from kclf.experiments.mgpc import prepare
from kclf.records import atomic_write

p = snakemake.params
dataset, task = snakemake.wildcards.mgpc_dataset, snakemake.wildcards.mgpc_task
scene_root = None
if dataset == "scene":
    from kclf.datasets.mulan import fetch_scene

    mirror = Path(p.mirror) / "mulan" if p.mirror else None
    scene_root = fetch_scene(Path(p.cache_dir) / "mulan", mirror=mirror)
    logging.info("scene files from %s", scene_root)
data = prepare(dataset, task, p.seed, p.trials, p.train_fraction, p.max_train, scene_root)
atomic_write(snakemake.output[0], lambda f: np.savez(open(f, "wb"), **data))
logging.info(
    "%s %s: %d samples (%d positive), %d splits, %d training samples each",
    dataset,
    task,
    data["y"].size,
    int(data["y"].sum()),
    p.trials,
    int(data["train"][0].sum()),
)
