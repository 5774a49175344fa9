"""One method on a chunk of trials: seeded splits of the HMM kernel (or its Nystroem
features; or the kernel per width, the width then searched), the shared AUC trial; labels
from the clip list, aligned with the kernel."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import numpy as np
import pandas as pd

from kclf_workflow.datasets.audio_collections import decode_tags, read_tag_file, tag_matrix
from kclf_workflow.experiments.multitask_auc import kernel_trials
from kclf_workflow.readers import reading
from kclf_workflow.records import write_records
from kclf_workflow.seeding import chunk_trials

p, i = snakemake.params, snakemake.input
# K, or Nystroem features Phi (landmarks)
with reading(i.kernel, "kernel archive"), np.load(i.kernel, allow_pickle=False) as z:
    factor = "Phi" in z.files
    # with a width grid (audio.kernel.tau_factors) the kernel at every tau: searched
    taus = z["taus"] if "taus" in z.files else None
    K = z["Ks"] if taus is not None else z["Phi" if factor else "K"]
    ids = z["ids"].astype(str).tolist()
with reading(i.clips, "clip list"):
    clips = pd.read_csv(i.clips, dtype={"id": str}).set_index("id")
unknown = [c for c in ids if c not in clips.index]
if unknown:
    raise ValueError(f"{i.kernel} holds clips not in {i.clips}: {unknown[:5]}")
tag_file = read_tag_file(i.tags)
tags = tag_file["tags"]
Y = tag_matrix(pd.DataFrame({"tags": [decode_tags(t) for t in clips.loc[ids, "tags"]]}), tags)
rows = kernel_trials(
    K,
    Y,
    tags,
    chunk_trials(snakemake.wildcards.trials),
    snakemake.wildcards.method,
    dataset=p.dataset,
    seed=p.seed,
    experiment=p.experiment,
    n_bins=p.n_bins,
    source=i.kernel,
    factor=factor,
    taus=taus,
)
write_records(rows, snakemake.output[0], source=tag_file["source"])
