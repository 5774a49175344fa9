"""Cross log-likelihood matrix of the HMM kernel: batched forward pass vs the naive loop.

The peer is the obvious code: ``L[i, m] = models[m].score(X_i)`` with hmmlearn's
``GaussianHMM.score`` for every (clip, model) pair.  Ours is
:func:`kclf.features.hmm_kernel.cross_loglik` (numpy forward pass vectorised over
clips x models x states).  Both run on the same N clips x N models (default 500 x 500);
clip lengths follow the paper's 3-60 s at a 20 ms hop, capped by
``--max-frames``.  The naive loop over all N^2 pairs is too slow to wait for, so it is
timed on a random sample of pairs and extrapolated (said in the output); the values of
the sampled pairs are compared with the batched matrix (relative 1e-8).

Also prints the estimated time of a paper-size (1680 clips) kernel on 1..N cores: the
batched cost per (pair, frame) measured here times 1680^2 x mean frames, divided over
row-block shards (one job per core).

Usage: OMP_NUM_THREADS=1 python benchmarks/bench_hmm_kernel.py [--clips 500] [--pairs 2000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kclf.features.hmm_kernel import HMMBank, cross_loglik


def random_bank(rng, M, S, d):
    """Plausible fitted-HMM parameters (sticky transitions, spread means, varied variances)."""
    trans = rng.dirichlet(np.ones(S), size=(M, S)) + 4 * np.eye(S)
    trans /= trans.sum(axis=2, keepdims=True)
    return HMMBank(
        startprob=rng.dirichlet(np.ones(S), size=M),
        transmat=trans,
        means=rng.normal(0, 1.5, size=(M, S, d)),
        variances=rng.uniform(0.3, 2.0, size=(M, S, d)),
    )


def sample_sequences(rng, bank, n, lengths):
    """Sequences drawn from the bank's own HMMs (clip i from model i), so the matrix has
    a realistic spread of good and bad matches."""
    seqs = []
    for i in range(n):
        m = i % len(bank)
        T = int(lengths[i])
        s = rng.choice(bank.n_states, p=bank.startprob[m])
        X = np.empty((T, bank.n_features))
        for t in range(T):
            X[t] = rng.normal(bank.means[m, s], np.sqrt(bank.variances[m, s]))
            s = rng.choice(bank.n_states, p=bank.transmat[m, s])
        seqs.append(X)
    return seqs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--clips", type=int, default=500)
    ap.add_argument("--states", type=int, default=4)
    ap.add_argument("--features", type=int, default=32)
    ap.add_argument("--min-frames", type=int, default=150, help="3 s at a 20 ms hop")
    ap.add_argument("--max-frames", type=int, default=500, help="cap (10 s) to keep it short")
    ap.add_argument("--pairs", type=int, default=2000, help="naive pairs timed")
    ap.add_argument("--paper-clips", type=int, default=1680)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    N = args.clips
    bank = random_bank(rng, N, args.states, args.features)
    lengths = rng.integers(args.min_frames, args.max_frames + 1, size=N)
    seqs = sample_sequences(rng, bank, N, lengths)
    frames = int(lengths.sum())
    print(
        f"{N} clips x {N} models, {args.states} states, {args.features} features, "
        f"{args.min_frames}-{args.max_frames} frames (mean {lengths.mean():.0f})"
    )

    t0 = time.perf_counter()
    L = cross_loglik(seqs, bank)
    t_batched = time.perf_counter() - t0
    print(f"batched cross_loglik: {t_batched:.2f} s for {N * N} pairs")

    models = [bank.model(m) for m in range(N)]
    pairs = rng.choice(N * N, size=min(args.pairs, N * N), replace=False)
    rows, cols = np.divmod(pairs, N)
    t0 = time.perf_counter()
    naive = np.array([models[m].score(seqs[i]) for i, m in zip(rows, cols)])
    t_sample = time.perf_counter() - t0
    # pairs' cost is proportional to the clip's length: extrapolate by frames
    t_naive = t_sample * (frames * N) / lengths[rows].sum()
    rel = np.max(np.abs(L[rows, cols] - naive) / np.abs(naive))
    print(
        f"naive model.score loop: {t_sample:.2f} s for {len(pairs)} sampled pairs, "
        f"extrapolated to all {N * N} pairs: {t_naive:.1f} s (not run in full)"
    )
    print(f"max relative difference on the sampled pairs: {rel:.2e} (required <= 1e-8)")
    print(f"speed-up batched vs naive: {t_naive / t_batched:.1f}x (target >= 10x)")

    per_pair_frame = t_batched / (N * frames)
    P = args.paper_clips
    total = per_pair_frame * P * P * lengths.mean()
    print(
        f"paper-size kernel ({P} clips, mean {lengths.mean():.0f} frames): "
        f"~{total:.0f} s on 1 core with the batched pass "
        f"(naive loop: ~{total * t_naive / t_batched / 3600:.1f} h)"
    )
    for cores in (2, 4, 8, 16, 32):
        print(f"  on {cores:2d} cores (row-block shards, one per core): ~{total / cores:.0f} s")
    assert rel <= 1e-8, "batched values differ from hmmlearn's score"


if __name__ == "__main__":
    main()
