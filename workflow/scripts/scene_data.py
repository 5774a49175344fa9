from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
from pathlib import Path

import numpy as np

from kclf_workflow.datasets.mulan import load_scene
from kclf_workflow.files import save_npz

d = load_scene(Path(snakemake.input[0]).parent, verify=True)
out = {
    "X": np.vstack([d["X_train"], d["X_test"]]),
    "Y": np.vstack([d["Y_train"], d["Y_test"]]).astype(np.int8),
    "classes": np.asarray(d["label_names"]),
    "n_train": np.int64(len(d["X_train"])),
    "title": np.asarray("MULAN scene"),  # checksums verified by load_scene
}
save_npz(snakemake.output[0], **out)
logging.info(
    "scene: %d train + %d test, %d features", len(d["X_train"]), len(d["X_test"]), out["X"].shape[1]
)
