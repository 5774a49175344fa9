"""Assemble the row blocks, D -> K = exp(-D / tau), symmetry check, PSD projection (the
labels are not read here: a tag edit reruns the fits, never the kernel)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import json
import logging
from pathlib import Path

import numpy as np

from kclf.features.hmm_kernel import (
    check_symmetric,
    hmm_divergence,
    hmm_kernel,
    load_shards,
    project_psd,
)
from kclf.repro.records import atomic_write, save_npz

_, ids, feats, bad = load_shards(snakemake.input.shards)
L = np.full((len(ids), len(ids)), np.nan)
for path in snakemake.input.rows:
    with np.load(path, allow_pickle=False) as z:
        if z["ids"].tolist() != [ids[i] for i in z["rows"]]:
            raise ValueError(f"{path}: row ids do not match the HMM shards (stale shard?)")
        L[z["rows"]] = z["L"]
D = hmm_divergence(L, [F.shape[0] for F in feats])  # raises if a row block is missing
K, tau = hmm_kernel(D, snakemake.params.tau)
asym = float(np.max(np.abs(K - K.T)))
check_symmetric(K)
Kpsd, clipped = project_psd(K)
eig_min = float(np.linalg.eigvalsh(K).min())

save_npz(snakemake.output.kernel, K=Kpsd, D=D, tau=tau, ids=np.array(ids))
summary = {
    "n_clips": len(ids),
    "n_bad_clips": len(bad),
    "tau": tau,
    "tau_rule": "median of off-diagonal D" if snakemake.params.tau is None else "config",
    "max_asymmetry": asym,
    "min_eigenvalue_before": eig_min,
    "clipped_mass": clipped,
    "mean_frames": float(np.mean([F.shape[0] for F in feats])),
}
atomic_write(snakemake.output.summary, lambda f: Path(f).write_text(json.dumps(summary, indent=1)))
logging.info("%s", summary)
