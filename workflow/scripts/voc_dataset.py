from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf_workflow.datasets.audio_collections import degenerate_tags
from kclf_workflow.datasets.voc import voc_dataset
from kclf_workflow.files import save_npz
from kclf_workflow.readers import reading

p = snakemake.params
rows = {}
for path in snakemake.input.bow:
    with reading(path, "bag-of-words shard"), np.load(path) as z:
        rows.update(zip(map(str, z["ids"]), z["X"]))
if p.folder:  # an image folder: image id "<class>/<file>", one-vs-rest labels
    ids = sorted(rows)
    Y = np.array([[i.split("/")[0] == c for c in p.classes] for i in ids], dtype=np.int8)
    out = {"X": np.stack([rows[i] for i in ids]), "Y": Y, "ids": np.asarray(ids, dtype=str)}
    out["classes"] = np.asarray(p.classes)
else:  # the devkit's lists: image_set, then test_image_set (its own split) when given
    sets = [p.image_set, *([p.test_image_set] if "test_image_set" in p.keys() else [])]
    out = voc_dataset(rows, p.root, sets, p.classes, p.difficult)
for name, why in degenerate_tags(out["Y"], [str(c) for c in out["classes"]], "image").items():
    logging.warning("class %r is no task of its own: %s", name, why)
out["title"] = np.asarray(p.title)  # what the table's caption names
save_npz(snakemake.output[0], **out)
logging.info(
    "%d images x %d words, %d classes%s (left out as unreadable: see %s)",
    *out["X"].shape,
    out["Y"].shape[1],
    f", the first {out['n_train']} of {p.image_set} for training" if "n_train" in out else "",
    snakemake.input.bad,
)
