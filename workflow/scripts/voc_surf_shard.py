from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf.features.surf_bow import extract_shard, save_shard

p = snakemake.params
f = p.features
if p.synthetic:  # the input is the shard's manifest of generated images
    rows = [line.split("\t") for line in open(snakemake.input[0]).read().splitlines()[1:]]
    ids, paths = [r[0] for r in rows], [r[1] for r in rows]
else:
    ids, paths = list(p.ids), list(snakemake.input)
shard = extract_shard(
    ids, paths, f["detector"], f["params"], f["skip_bad_images"], log=logging.warning
)
save_shard(shard, snakemake.output[0])
logging.info(
    "%d images, %d descriptors, %d bad", len(shard["ids"]), shard["counts"].sum(), len(shard["bad"])
)
