"""Frame features and one HMM per clip for shard k (contiguous block of the clip list)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

import numpy as np
import pandas as pd

from kclf.features.audio import AudioFeatureConfig, BadAudioError
from kclf.features.hmm_kernel import HMMBank, clip_model, row_shards, save_shard

p = snakemake.params
f = dict(p.features)
skip_bad = f.pop("skip_bad")
f.pop("n_shards")
cfg = AudioFeatureConfig(**f)
clips = pd.read_csv(snakemake.input[0], dtype={"id": str})
rows = row_shards(len(clips), p.n_shards)[int(snakemake.wildcards.k)]
ids, feats, banks, bad = [], [], [], []
for cid, path in zip(clips["id"].iloc[rows], clips["path"].iloc[rows]):
    try:
        X, bank = clip_model(path, cid, cfg, p.seed, cache_dir=p.cache_dir, **p.hmm)
    except BadAudioError as exc:
        if not skip_bad:
            raise
        logging.warning("skipped %s", exc)
        bad.append((exc.path, exc.reason))
        continue
    ids.append(cid)
    feats.append(X)
    banks.append(bank)
S, d = p.hmm["n_states"], len(cfg.feature_names)
if banks:
    bank = HMMBank.concatenate(banks)
else:
    bank = HMMBank(np.ones((0, S)), np.ones((0, S, S)), np.zeros((0, S, d)), np.ones((0, S, d)))
save_shard(snakemake.output[0], bank, ids, feats, bad)
logging.info("%d clips fitted, %d skipped", len(ids), len(bad))
