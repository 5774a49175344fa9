from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.features.surf_bow import fit_vocabulary
from kclf_workflow.files import save_npz
from kclf_workflow.seeding import rng_for, seed_for
from kclf_workflow.shards.images import sample_descriptors

p = snakemake.params
seed = p.seed
sample = sample_descriptors(
    list(snakemake.input), p.sample_size, rng_for(seed, "voc", "vocabulary", "sample")
)
km = fit_vocabulary(
    sample,
    n_words=p.n_words,
    random_state=seed_for(seed, "voc", "vocabulary", "kmeans"),
    batch_size=p.batch_size,
)
save_npz(snakemake.output[0], centres=km.cluster_centers_.astype(np.float32))
logging.info("%d words from a sample of %d descriptors", p.n_words, len(sample))
