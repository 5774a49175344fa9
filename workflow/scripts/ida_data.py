"""Pattern set and one chunk of realisations of an IDA dataset."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import numpy as np

from kclf_workflow.datasets.user_data import load_user_dataset
from kclf_workflow.experiments.ida import prepare, prepare_user
from kclf_workflow.files import save_npz
from kclf_workflow.seeding import chunk_trials

p, w = snakemake.params, snakemake.wildcards
mats = [f for f in snakemake.input if str(f).endswith("benchmarks.mat")]
realisations = list(chunk_trials(w.trials))
if p.user is not None:  # the user's data set (config datasets:)
    d = prepare_user(load_user_dataset(w.dataset, p.user), p.seed, realisations, p.test_size)
else:
    d = prepare(
        w.dataset,
        p.seed,
        mirror=p.mirror,
        benchmarks_mat=mats[0] if mats else None,
        generate=[w.dataset] if p.generate else [],
        n_realisations=realisations,
    )
d["realisations"] = np.asarray(realisations)
d["from_asc"] = np.asarray(d["from_asc"], dtype=int)
save_npz(snakemake.output[0], **d)
log.info(
    "%s: patterns %s, realisations %s of %d train / %d test; %s",
    w.dataset,
    d["X"].shape,
    w.trials,
    d["train"].shape[1],
    d["test"].shape[1],
    d["origin"],
)
