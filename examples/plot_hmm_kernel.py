"""
The HMM kernel on a few generated clips
=======================================

The LSPC-new paper tags sounds with a kernel between *sequences*: each clip's frame
features (MFCCs and their deltas) get their own hidden Markov model, every clip is scored
under every clip's model, and the symmetrised, length-normalised log-likelihood ratios

``D(i, j) = 1/2 [(L_ii - L_ij) / T_i + (L_jj - L_ji) / T_j]``,
``L_ij = log p(X_i | lambda_j)``

give the kernel ``K = exp(-D / tau)`` (:mod:`kclf.features.hmm_kernel`).  This example
generates 16 short clips with the workflow's synthetic audio (tones, chirps, noise bursts
and harmonic sounds, one or more per clip), computes the kernel, and fits LSPC-new on it
(``kernel="precomputed"``) for the tag "noise".
"""

import logging

import matplotlib.pyplot as plt
import numpy as np

from kclf import LSPC
from kclf.features.audio import AudioFeatureConfig, frame_features
from kclf.features.hmm_kernel import (
    HMMBank,
    cross_loglik,
    fit_clip_hmm,
    hmm_divergence,
    hmm_kernel,
)
from kclf_workflow.datasets.synthetic_audio import synth_clip

logging.getLogger("hmmlearn").setLevel(logging.ERROR)  # EM's "not converging" notes
sequences, tags = [], []
for k in range(16):
    x, sr, clip_tags, _ = synth_clip(seed=0, clip_id=f"demo{k:02d}", duration_range=(1.0, 1.5))
    mono = x if x.ndim == 1 else x.mean(axis=1)
    features = frame_features(mono, sr, AudioFeatureConfig(sample_rate=sr, hop_seconds=0.04))
    sequences.append(features)
    tags.append(clip_tags)
print("frames x features of the first clips:", [s.shape for s in sequences[:4]])

# %%
# One 4-state Gaussian HMM per clip, then every clip under every model at once.
models = [fit_clip_hmm(s, n_states=4, random_state=0, n_iter=15) for s in sequences]
bank = HMMBank.from_models(models)
L = cross_loglik(sequences, bank)
D = hmm_divergence(L, [len(s) for s in sequences])
K, tau = hmm_kernel(D)
print(f"tau (median divergence) = {tau:.3g}")

# %%
# Clips sorted by whether they hold a noise burst: the kernel is larger within a group.
noise = np.array(["noise" in t for t in tags])
order = np.argsort(~noise, kind="stable")
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
im = axes[0].imshow(K[np.ix_(order, order)], cmap="magma", vmin=0, vmax=1)
labels = [",".join(t[:2]) for t in np.array(tags, dtype=object)[order]]
axes[0].set_xticks(range(len(order)), labels, rotation=90, fontsize=6)
axes[0].set_yticks(range(len(order)), labels, fontsize=6)
axes[0].set_title("HMM kernel K = exp(-D / tau)")
fig.colorbar(im, ax=axes[0], fraction=0.046)

# leave-one-out LSPC-new on the precomputed kernel, tag "noise" against the rest
p = np.zeros(len(K))
for i in range(len(K)):
    train = np.arange(len(K)) != i
    clf = LSPC(lam=0.1, kernel="precomputed").fit(K[np.ix_(train, train)], noise[train])
    p[i] = clf.predict_proba(K[np.ix_([i], train)])[0, list(clf.classes_).index(True)]
axes[1].bar(range(len(K)), p[order], color=np.where(noise[order], "C3", "C0"))
axes[1].axhline(0.5, color="k", ls=":", lw=1)
axes[1].set(
    title='leave-one-out P("noise" | clip), LSPC-new',
    xlabel="clip (sorted)",
    ylabel="probability",
    ylim=(0, 1),
)
fig.tight_layout()
plt.show()
