"""Row block r of the cross log-likelihood matrix: its clips against every clip's HMM."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np

from kclf.features.hmm_kernel import cross_loglik, load_shards, row_shards
from kclf.repro.records import save_npz

bank, ids, feats, _ = load_shards(snakemake.input)
rows = row_shards(len(ids), snakemake.params.n_shards)[int(snakemake.wildcards.r)]
L = cross_loglik([feats[i] for i in rows], bank)
save_npz(snakemake.output[0], rows=rows, ids=np.array(ids, dtype=str)[rows], L=L)
logging.info("%d of %d rows x %d models", rows.size, len(ids), len(bank))
