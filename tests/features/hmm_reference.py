"""The per-pair reference of the batched HMM log-likelihoods
(:func:`kclf.features.hmm_kernel.cross_loglik`): hmmlearn's own ``score``, one pair at a
time, the oracle the feature tests compare with."""

import numpy as np


def naive_cross_loglik(sequences, models):
    """The per-pair loop ``models[m].score(sequences[i])`` (reference and benchmark peer)."""
    L = np.empty((len(sequences), len(models)))
    for i, X in enumerate(sequences):
        for m, model in enumerate(models):
            L[i, m] = model.score(X)
    return L
