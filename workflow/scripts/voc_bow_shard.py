from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.features.surf_bow import bag_of_words, load_shard
from kclf.records import atomic_write

shard = load_shard(snakemake.input.shard)
with np.load(snakemake.input.vocabulary) as z:
    centres = z["centres"]
H = bag_of_words(shard["descriptors"], shard["counts"], centres, snakemake.params.normalize)
ids = np.asarray(shard["ids"], dtype=str)
atomic_write(snakemake.output[0], lambda tmp: np.savez(open(tmp, "wb"), ids=ids, X=H))
logging.info("%d images x %d words", *H.shape)
