from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.repro.datasets.voc import load_voc_labels
from kclf.repro.records import save_npz

p = snakemake.params
rows = {}
for path in snakemake.input.bow:
    with np.load(path) as z:
        rows.update(zip(map(str, z["ids"]), z["X"]))
if p.folder:  # an image folder: image id "<class>/<file>", one-vs-rest labels
    ids = sorted(rows)
    Y = np.array([[i.split("/")[0] == c for c in p.classes] for i in ids], dtype=np.int8)
else:
    ids, Y = load_voc_labels(p.root, p.image_set, p.classes, p.difficult)
keep = [k for k, i in enumerate(ids) if i in rows]
X = np.stack([rows[ids[k]] for k in keep])
out = {
    "X": X,
    "Y": Y[keep],
    "ids": np.asarray(ids, dtype=str)[keep],
    "classes": np.asarray(p.classes),
}
save_npz(snakemake.output[0], **out)
logging.info(
    "%d images x %d words, %d classes; %d left out (see %s)",
    *X.shape,
    Y.shape[1],
    len(ids) - len(keep),
    snakemake.input.bad,
)
