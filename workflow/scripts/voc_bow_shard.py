from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.features.surf_bow import bag_of_words
from kclf_workflow.files import save_npz
from kclf_workflow.readers import reading
from kclf_workflow.shards.images import load_shard

shard = load_shard(snakemake.input.shard)
with reading(snakemake.input.vocabulary, "vocabulary"), np.load(snakemake.input.vocabulary) as z:
    centres = z["centres"]
H = bag_of_words(shard["descriptors"], shard["counts"], centres, snakemake.params.normalize)
ids = np.asarray(shard["ids"], dtype=str)
save_npz(snakemake.output[0], ids=ids, X=H)
logging.info("%d images x %d words", *H.shape)
