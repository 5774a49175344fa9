from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
from pathlib import Path

import numpy as np

from kclf_workflow.datasets.mulan import load_scene
from kclf_workflow.files import save_npz

root = Path(snakemake.input[0]).parent
d = load_scene(root, verify=True)
data = {"X_0": d["X_train"], "Y_0": d["Y_train"], "Xt_0": d["X_test"], "Yt_0": d["Y_test"]}
data["label_names"] = np.asarray(d["label_names"])
save_npz(snakemake.output[0], **data)
logging.info("scene from %s: %s train, %s test", root, d["X_train"].shape, d["X_test"].shape)
