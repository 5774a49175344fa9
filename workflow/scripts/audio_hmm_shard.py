"""Frame features and one HMM per clip of shard k (the selected clips of its manifest)."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import numpy as np

from kclf.features.audio import AudioFeatureConfig, BadAudioError
from kclf.features.hmm_kernel import HMMBank
from kclf_workflow.manifests import read_manifest
from kclf_workflow.progress import Progress
from kclf_workflow.shards.audio import clip_model, save_shard

p = snakemake.params
cfg = AudioFeatureConfig(**p.features)
paths = {r["id"]: r["path"] for r in read_manifest(snakemake.input.manifest)}
absent = [c for c in p.ids if c not in paths]
if absent:
    raise ValueError(f"{snakemake.input.manifest} lacks clips {absent[:5]} of this shard (stale?)")
ids, feats, banks, bad = [], [], [], []
progress = Progress(log, "clips (features and HMM)", len(p.ids))
for cid in p.ids:
    try:
        X, bank = clip_model(paths[cid], cid, cfg, p.seed, cache_dir=p.cache_dir, **p.hmm)
    except BadAudioError as exc:
        if not p.skip_bad:
            raise
        log.warning("skipped %s", exc)
        bad.append((exc.path, exc.reason))
        progress.step("bad")
        continue
    ids.append(cid)
    feats.append(X)
    banks.append(bank)
    progress.step(f"{cid}: {X.shape[0]} frames")
S, d = p.hmm["n_states"], len(cfg.feature_names)
if banks:
    bank = HMMBank.concatenate(banks)
else:
    bank = HMMBank(np.ones((0, S)), np.ones((0, S, S)), np.zeros((0, S, d)), np.ones((0, S, d)))
save_shard(snakemake.output[0], bank, ids, feats, bad)
log.info("%d clips fitted, %d skipped", len(ids), len(bad))
