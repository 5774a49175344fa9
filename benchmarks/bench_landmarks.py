"""HMM kernel with m landmarks against the full HMM kernel on real short clips.  Not a
test.

Data: the UrbanSound8K sample of the data mirror (``--root``): 15 real clips (Freesound
recordings, 44.1 kHz, at most 4 s) of 5 classes, 3 clips per class, the clips of one class
cut from one recording.  15 clips cannot hold 100 landmarks, so every clip is cut into
short clips of ``--seconds`` (0.5 s) starting every ``--hop`` (0.25 s): about 225 short
clips, each one a "clip" of the kernel (its own frame features and its own HMM).

Pipeline, the project's own code throughout: ``kclf.features.audio`` (``load_audio``,
``check_usable``, ``frame_features``, default ``AudioFeatureConfig``: 22.05 kHz, 20 ms hop,
13 MFCCs + deltas + 6 descriptors), one 4-state ``fit_clip_hmm`` per short clip (seeded by
``kclf_workflow.seeding.seed_for(seed, "hmm", clip id)``), ``cross_loglik`` for the
cross log-likelihoods.

* full kernel: ``L`` (n x n, every short clip under every clip's model),
  ``hmm_divergence``, ``K = exp(-D / tau)``, ``tau`` = median of the training part's
  off-diagonal divergences (``median_tau``);
* landmarks: ``m`` training clips ``J`` drawn by ``kclf.features.landmarks.choose_landmarks``
  (seeded); ``L[:, J]``, ``L[J, :]`` and the diagonal only (2 n m + n forward passes),
  ``landmark_divergence``, ``tau`` = ``landmark_tau`` of the training rows.  On the first
  split these are computed by ``cross_loglik`` (timed) and checked against the full
  ``L``; the other splits cut them from the full ``L`` (the same numbers).

Split: per seeded split one source clip of every class is held out (all its short clips go
to the test set, none of them is seen in training); ``--splits`` splits.  Tasks: one vs
rest per class (5 tasks).  Classifier: ``LSPCCV(cv=2, scoring="auc")`` (default 9 lambdas)
with a kernel that looks clips up in the kernel table: the full kernel with the exact
model (kernels at all training clips), the landmark columns with ``n_basis=m`` and the
same seed, whose centres are then exactly ``J`` (LSPC's low-rank path: the landmark
columns are its design matrix; the table raises if any other column is asked for).
Two more columns: the low-rank search with every training clip a centre on the full kernel
(no landmark approximation: what the low-rank path's CV alone changes), and the workflow's
path (``audio.kernel.landmarks``): Nystroem features ``Phi`` of the landmark columns and the
exact model on ``Phi Phi^T``.  Test AUC of ``predict_proba``, mean over tasks and splits.

Cost: the cross log-likelihood time of each kernel (n x n against 2 n m + n forward
passes) and end to end (features + HMM fits, shared, + cross log-likelihoods + kernel +
search and fit), timed in this process.

    .venv/bin/python benchmarks/bench_landmarks.py --root ../shared/data/urbansound8k_sample

Your own short-clip collection (the layout of ``audio.source: folder``: one subfolder per
tag, its audio files the tag's clips): ``--folder DIR`` takes every clip whole (no
cutting), each clip its own source, and holds out ``--test-fraction`` of every tag's clips
per seeded split:

    .venv/bin/python benchmarks/bench_landmarks.py --folder /path/to/clips --splits 5
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from kclf import LSPCCV
from kclf.features.audio import AudioFeatureConfig, check_usable, frame_features, load_audio
from kclf.features.hmm_kernel import (
    HMMBank,
    cross_loglik,
    fit_clip_hmm,
    hmm_divergence,
    hmm_kernel,
    median_tau,
)
from kclf.features.landmarks import (
    choose_landmarks,
    landmark_divergence,
    landmark_tau,
    nystroem_features,
)
from kclf_workflow.datasets.user_data import AUDIO_EXTENSIONS, list_class_folders
from kclf_workflow.seeding import seed_for

SEED = 0


def short_clips(root, seconds, hop, config):
    """``(ids, source, label, features)`` of every short clip of every WAV under ``root``
    (UrbanSound8K names: ``fsID-classID-occurrenceID-sliceID.wav``)."""
    paths = sorted(Path(root).rglob("*.wav"))
    if not paths:
        raise SystemExit(f"{root}: no .wav files")
    ids, source, label, feats = [], [], [], []
    for k, path in enumerate(paths):
        y, sr = load_audio(path, config.sample_rate)
        check_usable(y, sr, config, path)
        width, step = int(round(seconds * sr)), int(round(hop * sr))
        for s, lo in enumerate(range(0, max(y.size - width, 0) + 1, step)):
            seg = y[lo : lo + width]
            try:
                check_usable(seg, sr, config, f"{path}@{lo / sr:.2f}s")
            except ValueError:
                continue  # a silent stretch: no HMM can be fitted to it
            ids.append(f"{path.stem}@{s}")
            source.append(k)
            label.append(int(path.stem.split("-")[1]))
            feats.append(frame_features(seg, sr, config))
    return ids, np.array(source), np.array(label), feats


def whole_clips(folder, config):
    """``(ids, source, label, features)`` of every clip of a one-subfolder-per-tag
    collection, each clip whole and its own source; unusable clips (silent, too short)
    are left out with a count on stderr."""
    paths, y, tags = list_class_folders(Path(folder), AUDIO_EXTENSIONS)
    ids, label, feats, skipped = [], [], [], []
    for path, c in zip(paths, y):
        x, sr = load_audio(path, config.sample_rate)
        try:
            check_usable(x, sr, config, path)
        except ValueError as err:
            skipped.append(str(err))
            continue
        ids.append(f"{tags[c]}/{path.name}")
        label.append(int(c))
        feats.append(frame_features(x, sr, config))
    if skipped:
        print(
            f"{folder}: {len(skipped)} unusable clips left out, e.g. {skipped[0]}", file=sys.stderr
        )
    return ids, np.arange(len(ids)), np.array(label), feats


def fit_bank(ids, feats):
    models = [fit_clip_hmm(X, random_state=seed_for(SEED, "hmm", i)) for i, X in zip(ids, feats)]
    return HMMBank.from_models(models)


def split_sources(source, label, seed, test_fraction=1 / 3):
    """Test sources: ``max(1, round(test_fraction * k))`` seeded source clips of every
    class of k sources (one of the UrbanSound8K sample's three)."""
    rng = np.random.default_rng(seed_for(SEED, "landmark-split", seed))
    test = []
    for c in np.unique(label):
        srcs = np.unique(source[label == c])
        h = max(1, round(test_fraction * srcs.size))
        test.extend([rng.choice(srcs)] if h == 1 else rng.choice(srcs, size=h, replace=False))
    te = np.isin(source, test)
    return np.flatnonzero(~te), np.flatnonzero(te)


def table_kernel(table, columns):
    """A callable kernel on clip indices (an (n, 1) float array): ``table[i, col(j)]``;
    ``columns`` maps a clip to its table column (-1: not in the table, an error)."""

    def k(A, B):
        ia, ib = A[:, 0].astype(int), B[:, 0].astype(int)
        cols = columns[ib]
        if np.any(cols < 0):
            raise ValueError("kernel asked for a column outside the table")
        return table[np.ix_(ia, cols)]

    return k


def lspc_auc(kernel, tr, te, Y, **params):
    model = LSPCCV(kernel=kernel, cv=2, scoring="auc", **params)
    model.fit(tr[:, None].astype(float), Y[tr])
    P = model.predict_proba(te[:, None].astype(float))
    return 100 * float(np.mean([roc_auc_score(Y[te, t], P[:, t]) for t in range(Y.shape[1])]))


def landmark_logliks(feats, bank, J):
    """``(L[:, J], L[J, :], diag L)`` by 2 n m + n forward passes."""
    to_j = cross_loglik(feats, bank.subset(J))  # every clip under the landmarks' models
    from_j = cross_loglik([feats[j] for j in J], bank)  # the landmark clips under all
    own = np.array([cross_loglik([X], bank.subset([i]))[0, 0] for i, X in enumerate(feats)])
    return to_j, from_j, own


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="../shared/data/urbansound8k_sample")
    ap.add_argument("--folder", help="a one-subfolder-per-tag clip collection (clips whole)")
    ap.add_argument("--test-fraction", type=float, default=1 / 3)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--hop", type=float, default=0.25)
    ap.add_argument("--landmarks", type=int, default=100)
    ap.add_argument("--splits", type=int, default=3)
    args = ap.parse_args()
    config = AudioFeatureConfig()
    logging.getLogger("hmmlearn").setLevel(logging.ERROR)  # EM's round-off dips, per clip

    t0 = time.perf_counter()
    if args.folder:
        ids, source, label, feats = whole_clips(args.folder, config)
    else:
        ids, source, label, feats = short_clips(args.root, args.seconds, args.hop, config)
    t_feat = time.perf_counter() - t0
    t0 = time.perf_counter()
    bank = fit_bank(ids, feats)
    t_hmm = time.perf_counter() - t0
    lengths = np.array([X.shape[0] for X in feats])
    classes = np.unique(label)
    Y = (label[:, None] == classes[None, :]).astype(int)
    n = len(ids)
    print("# bench_landmarks: HMM kernel, landmarks vs full (2-core machine)\n")
    cut = "" if args.folder else f" cut into {n} short clips of {args.seconds} s every {args.hop} s"
    print(
        f"{np.unique(source).size} source clips ({classes.size} classes){cut} "
        f"({lengths.min()}-{lengths.max()} frames); features {t_feat:.1f} s, {n} HMM fits "
        f"{t_hmm:.1f} s (shared by both)\n"
    )
    print(
        "| split | n train / test | m | test AUC full | test AUC full, low-rank path, "
        "every training clip a centre | test AUC landmarks, n_basis | diff | test AUC "
        "landmarks, Nystroem (the workflow's path) | diff |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    t0 = time.perf_counter()
    L = cross_loglik(feats, bank)
    t_full = time.perf_counter() - t0
    D = hmm_divergence(L, lengths)
    every = np.arange(n)
    auc_f, auc_b, auc_l, auc_n, e_full, e_land, t_land = [], [], [], [], [], [], None
    for s in range(args.splits):
        tr, te = split_sources(source, label, s, args.test_fraction)
        m = min(args.landmarks, tr.size - 1)
        seed = seed_for(SEED, "landmarks", s)
        t0 = time.perf_counter()
        K, _ = hmm_kernel(D, median_tau(D[np.ix_(tr, tr)]))
        auc_f.append(lspc_auc(table_kernel(K, every), tr, te, Y, random_state=seed))
        e_full.append(time.perf_counter() - t0 + t_full)
        t0 = time.perf_counter()
        J = tr[choose_landmarks(tr.size, m, seed)]
        if s == 0:
            to_j, from_j, own = landmark_logliks(feats, bank, J)
            t_land = time.perf_counter() - t0
            for name, got, ref in (
                ("L[:, J]", to_j, L[:, J]),
                ("L[J, :]", from_j, L[J]),
                ("diag L", own, np.diag(L)),
            ):
                np.testing.assert_allclose(got, ref, rtol=1e-9, err_msg=name)
        else:
            to_j, from_j, own = L[:, J], L[J], np.diag(L)
        D_nm = landmark_divergence(to_j, from_j, own, lengths, J)
        tau = landmark_tau(D_nm[tr], np.searchsorted(tr, J))
        columns = np.full(n, -1)
        columns[J] = np.arange(J.size)
        kernel = table_kernel(np.exp(-D_nm / tau), columns)
        auc_l.append(lspc_auc(kernel, tr, te, Y, n_basis=m, random_state=seed))
        e_land.append(time.perf_counter() - t0 + (t_land if s else 0.0))
        # the same low-rank search with b = n_train: no landmark approximation, only the
        # low-rank path's CV (centres fixed over the folds); separates the two effects
        columns = np.full(n, -1)
        columns[tr] = np.arange(tr.size)
        auc_b.append(
            lspc_auc(table_kernel(K[:, tr], columns), tr, te, Y, n_basis=tr.size, random_state=seed)
        )
        # what audio.kernel.landmarks does: Phi Phi^T from the landmark columns, exact model
        Phi = nystroem_features(np.exp(-D_nm / tau), J)
        auc_n.append(lspc_auc(table_kernel(Phi @ Phi.T, every), tr, te, Y, random_state=seed))
        print(
            f"| {s} | {tr.size} / {te.size} | {m} | {auc_f[-1]:.2f} | {auc_b[-1]:.2f} | "
            f"{auc_l[-1]:.2f} | {auc_l[-1] - auc_f[-1]:+.2f} | {auc_n[-1]:.2f} | "
            f"{auc_n[-1] - auc_f[-1]:+.2f} |",
            flush=True,
        )
    mf, ml, mn = np.mean(auc_f), np.mean(auc_l), np.mean(auc_n)
    print(
        f"| mean | | | {mf:.2f} | {np.mean(auc_b):.2f} | {ml:.2f} | {ml - mf:+.2f} | "
        f"{mn:.2f} | {mn - mf:+.2f} |\n"
    )
    shared = t_feat + t_hmm
    ef, el = np.median(e_full) + shared, np.median(e_land) + shared
    m = min(args.landmarks, n)
    print(f"| cost, n = {n} clips, m = {m} | full | landmarks | landmarks / full |")
    print("|---|---:|---:|---:|")
    print(
        f"| forward passes | {n * n} (n^2) | {2 * n * m + n} (2 n m + n) | "
        f"{(2 * n * m + n) / (n * n):.2f} |"
    )
    print(
        f"| cross log-likelihoods s (split 0) | {t_full:.2f} | {t_land:.2f} | "
        f"{t_land / t_full:.2f} |"
    )
    print(
        f"| end to end s (median over splits; features + HMMs {shared:.1f} s shared) | "
        f"{ef:.1f} | {el:.1f} | {el / ef:.2f} |"
    )
    print(
        f"\n(the landmark columns of split 0 computed by cross_loglik equal the full L's to "
        f"1e-9; at n clips the forward passes are (2 m + 1) / n of the full kernel's: "
        f"{(2 * m + 1) / 10_000:.3f} at n = 10,000)"
    )


if __name__ == "__main__":
    main()
