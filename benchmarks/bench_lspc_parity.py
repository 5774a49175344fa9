"""LSPC-new vs kernel logistic regression: an ablation of what separates their mean AUC.

On the real sets in ``../shared/data`` (never copied into the project) and the generated
VOC-like images, every set a multi-task one-vs-rest AUC problem:

* ``fsdd``: Free Spoken Digit clips as tag folders (10 digits), **speaker-disjoint**
  splits (trial t: 3 of the 6 speakers train, the other 3 test), the project's HMM kernel
  (:mod:`kclf.features.hmm_kernel`: 13 MFCC + deltas + descriptors at 8 kHz, one
  4-state HMM per clip, the symmetrised cross log-likelihood divergence D,
  ``K = exp(-D / tau)`` PSD-projected per tau), on a subsample of ``--fsdd-takes`` takes
  per (speaker, digit);
* ``urbansound``: the 15 UrbanSound8K clips (5 classes), the same HMM kernel, random
  10 / 5 splits (tiny: its numbers are noisy);
* ``scene``: MULAN scene (6 labels), ``--n-train`` / ``--n-test`` rows drawn per trial;
* ``isolet1``: 26 letters one-vs-rest, rows drawn as for scene;
* ``voc``: the generated VOC-like images' bags of visual words from a finished default
  run of the workflow (``results/data/voc-synthetic/dataset.npz``, ``--voc-npz``).

Feature sets use ``D = ||x - x'||^2`` and ``K = exp(-D / tau)`` (the RBF kernel with
``tau = 2 sigma^2``), so every set runs the same code: the experiment layer's width
search :func:`kclf_workflow.experiments.multitask_auc.fit_predict` with ``taus``.

Factors, each changed alone from the baseline "LSPC-new as the workflow ran it" (the
paper's method: rounding of outputs, full basis, tau = median of D, lambda grid 1e-3..10,
AUC-scored 2-fold CV, unweighted squared loss); KLR runs at the baseline width and on
the width grid.  The table prints LSPC-new's and KLR's mean AUC (%) over (task, trial)
and their difference; the last rows split the tasks by their number of training
positives.  The search-time ratio is KLR's whole search / LSPC-new's on the same
(tau x lambda) grid, measured under the same conditions.

Usage: flock /tmp/kclf-heavy.lock python benchmarks/bench_lspc_parity.py [--trials 3]
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from kclf.features.hmm_kernel import (
    HMMBank,
    cross_loglik,
    fit_clip_hmm,
    hmm_divergence,
    project_psd,
)
from kclf_workflow.experiments.multitask_auc import TrialOptions, fit_predict

DATA = Path(os.environ.get("KCLF_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared/data"))
CACHE = Path(os.environ.get("KCLF_PARITY_CACHE", "/tmp/kclf_parity_cache"))
TAU_FACTORS = np.array([0.125, 0.25, 0.5, 1.0, 2.0])
WIDE_LAMS = np.logspace(-6, 1, 15)


def hmm_divergence_of(paths, sample_rate):
    """The HMM kernel's divergence D of ``paths`` (clips too short are dropped); cached."""
    from kclf.features.audio import AudioFeatureConfig, BadAudioError, clip_features

    key = CACHE / f"D_{abs(hash(tuple(paths))) % 10**10}.npz"
    if key.exists():
        with np.load(key) as z:
            return z["D"], z["keep"]
    config = AudioFeatureConfig(sample_rate=sample_rate, min_seconds=0.1)
    feats, keep, models = [], [], []
    for k, p in enumerate(paths):
        try:
            F = clip_features(p, config)
            models.append(fit_clip_hmm(F, random_state=k))
        except (BadAudioError, ValueError):
            continue
        feats.append(F)
        keep.append(k)
    bank = HMMBank(
        startprob=np.stack([m.startprob_ for m in models]),
        transmat=np.stack([m.transmat_ for m in models]),
        means=np.stack([m.means_ for m in models]),
        variances=np.stack([m._covars_ for m in models]),
    )
    L = cross_loglik(feats, bank)
    D = hmm_divergence(L, [F.shape[0] for F in feats])
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez(key, D=D, keep=np.array(keep))
    return D, np.array(keep)


def fsdd(takes, trials, seed):
    rng = np.random.default_rng(seed)
    paths, digit, speaker = [], [], []
    for f in sorted(glob.glob(str(DATA / "fsdd/recordings/*.wav"))):
        d, s, t = re.match(r"(\d)_(\w+)_(\d+)\.wav", Path(f).name).groups()
        if int(t) < takes:
            paths.append(f)
            digit.append(int(d))
            speaker.append(s)
    D, keep = hmm_divergence_of(paths, 8000)
    digit, speaker = np.array(digit)[keep], np.array(speaker)[keep]
    Y = np.eye(10, dtype=int)[digit]
    names = np.unique(speaker)
    splits = []
    for _ in range(trials):
        tr_spk = rng.choice(names, names.size // 2, replace=False)
        tr = np.isin(speaker, tr_spk)
        splits.append((np.flatnonzero(tr), np.flatnonzero(~tr)))
    return D, Y, splits, True


def urbansound(trials, seed):
    files = sorted(glob.glob(str(DATA / "urbansound8k_sample/UrbanSound8K/audio/*/*.wav")))
    D, keep = hmm_divergence_of(files, 22050)
    cls = np.array([int(Path(f).name.split("-")[1]) for f in files])[keep]
    classes = np.unique(cls)
    Y = (cls[:, None] == classes[None, :]).astype(int)
    return D, Y, random_splits(len(cls), 10, trials, seed), True


def random_splits(n, n_train, trials, seed, n_test=None):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(trials):
        perm = rng.permutation(n)
        te = perm[n_train:] if n_test is None else perm[n_train : n_train + n_test]
        out.append((np.sort(perm[:n_train]), np.sort(te)))
    return out


def features_problem(X, Y, n_train, n_test, trials, seed):
    X = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12)
    sq = (X**2).sum(axis=1)
    D = np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0)
    np.fill_diagonal(D, 0.0)
    return D, Y, random_splits(len(X), n_train, trials, seed, n_test), False


def scene(n_train, n_test, trials, seed):
    from kclf_workflow.datasets.mulan import load_arff_multilabel

    parts = [load_arff_multilabel(DATA / f"mulan/scene-{s}.arff", 6) for s in ("train", "test")]
    X = np.vstack([np.asarray(p[0], dtype=float) for p in parts])
    Y = np.vstack([np.asarray(p[1], dtype=int) for p in parts])
    X = np.asarray(X.todense() if hasattr(X, "todense") else X)
    return features_problem(X, Y, n_train, n_test, trials, seed)


def isolet(n_train, n_test, trials, seed):
    from scipy.io import loadmat

    m = loadmat(DATA / "isolet/isolet.mat")
    y = m["gnd"].ravel().astype(int) - 1
    return features_problem(
        m["fea"].astype(float), np.eye(26, dtype=int)[y], n_train, n_test, trials, seed
    )


def voc(n_train, n_test, trials, seed, path):
    """The generated VOCdevkit images' bags of visual words, as the workflow's default run
    leaves them (its voc family: rendering, SURF, vocabulary); half of them train."""
    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: run the workflow first (make run), or give --voc-npz")
    with np.load(path) as z:
        X, Y = z["X"].astype(float), z["Y"].astype(int)
    keep = (Y.sum(axis=0) >= 4) & ((1 - Y).sum(axis=0) >= 4)  # classes with both sides
    n = len(X)
    return features_problem(X, Y[:, keep], min(n_train, n // 2), n_test, trials, seed)


def kernels(D, taus, psd):
    Ks = np.exp(-D[None] / taus[:, None, None])
    if psd:
        Ks = np.stack([project_psd(K)[0] for K in Ks])
    return Ks


CONFIGS = {
    # name: (method, tau factors, lams, scoring, LSPC options)
    "baseline (paper's LSPC-new, tau = median)": ("lspc_new", [1.0], None, "auc", {}),
    "rounding: parameters (LSPC)": ("lspc", [1.0], None, "auc", {}),
    "basis: classwise": ("lspc_new", [1.0], None, "auc", {"basis": "classwise"}),
    "class_weight: balanced": ("lspc_new", [1.0], None, "auc", {"class_weight": "balanced"}),
    "lambda grid 1e-6..10": ("lspc_new", [1.0], WIDE_LAMS, "auc", {}),
    "CV scoring: log loss": ("lspc_new", [1.0], None, "log_loss", {}),
    "CV scoring: error": ("lspc_new", [1.0], None, "error", {}),
    "fixed width 1/4 x median": ("lspc_new", [0.25], None, "auc", {}),
    "fixed width 2 x median": ("lspc_new", [2.0], None, "auc", {}),
    "width grid 1/8..2 x median": ("lspc_new", TAU_FACTORS, None, "auc", {}),
    "width grid + classwise": ("lspc_new", TAU_FACTORS, None, "auc", {"basis": "classwise"}),
    "width grid + balanced": ("lspc_new", TAU_FACTORS, None, "auc", {"class_weight": "balanced"}),
    "width grid + classwise + balanced": (
        "lspc_new",
        TAU_FACTORS,
        None,
        "auc",
        {"basis": "classwise", "class_weight": "balanced"},
    ),
}
KLR = {
    "baseline (paper's LSPC-new, tau = median)": [1.0],
    "fixed width 1/4 x median": [0.25],
    "fixed width 2 x median": [2.0],
    "width grid": TAU_FACTORS,
}


def run(problem, method, factors, lams, scoring, options, seed):
    """Per (trial, task): (AUC, training positives); and the seconds of the fits."""
    D, Y, splits, psd = problem
    out, secs = [], 0.0
    for trial, (tr, te) in enumerate(splits):
        med = np.median(D[np.ix_(tr, tr)][~np.eye(tr.size, dtype=bool)])
        taus = med * np.asarray(factors)
        Ks = kernels(D[np.ix_(np.r_[tr, te], tr)], taus, False)
        if psd:  # the workflow's projection: of the whole (train + test) kernel, per tau
            idx = np.r_[tr, te]
            Ks = kernels(D[np.ix_(idx, idx)], taus, True)[:, :, : tr.size]
        Ytr, Yte = Y[tr], Y[te]
        ok = [t for t in range(Y.shape[1]) if 0 < Ytr[:, t].sum() < tr.size]
        P, s, _ = fit_predict(
            method,
            Ks[:, : tr.size],
            Ytr[:, ok],
            Ks[:, tr.size :],
            TrialOptions(
                kernel="precomputed",
                taus=taus,
                lams=lams,
                cv=2,
                scoring=scoring,
                variants={"lspc_new": options} if options else {},
            ),
            random_state=seed + trial,
        )
        secs += s
        for j, t in enumerate(ok):
            if 0 < Yte[:, t].sum() < te.size:
                out.append((roc_auc_score(Yte[:, t], P[:, j]), Ytr[:, t].sum()))
    return np.array(out), secs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--fsdd-takes", type=int, default=6)
    ap.add_argument("--n-train", type=int, default=300)
    ap.add_argument("--n-test", type=int, default=600)
    ap.add_argument("--sets", default="fsdd,urbansound,scene,isolet1,voc")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--voc-npz",
        default=str(Path(__file__).resolve().parents[1] / "results/data/voc-synthetic/dataset.npz"),
        help="the workflow's generated VOC bag-of-words (a finished default run)",
    )
    a = ap.parse_args()
    makers = {
        "fsdd": lambda: fsdd(a.fsdd_takes, a.trials, a.seed),
        "urbansound": lambda: urbansound(a.trials, a.seed),
        "scene": lambda: scene(a.n_train, a.n_test, a.trials, a.seed),
        "isolet1": lambda: isolet(a.n_train, a.n_test, a.trials, a.seed),
        "voc": lambda: voc(a.n_train, a.n_test, a.trials, a.seed, a.voc_npz),
    }
    sets = [s for s in a.sets.split(",") if s]
    print(
        f"subsample: {a.trials} trials; FSDD {a.fsdd_takes} takes per (speaker, digit), "
        f"speaker-disjoint 3/3 speakers; UrbanSound 10/5 clips; scene, isolet1, voc "
        f"{a.n_train} train / {a.n_test} test rows per trial; 2-fold CV"
    )
    results, times = {}, {}
    for name in sets:
        t0 = time.perf_counter()
        try:
            problem = makers[name]()
        except Exception as err:  # a set missing here is reported, not fatal
            print(f"{name}: not run ({type(err).__name__}: {err})")
            continue
        print(
            f"{name}: {problem[0].shape[0]} items, {problem[1].shape[1]} tasks, "
            f"loaded in {time.perf_counter() - t0:.0f} s",
            flush=True,
        )
        for cfg, (method, factors, lams, scoring, opts) in CONFIGS.items():
            results[name, cfg, "lspc"], secs = run(
                problem, method, factors, lams, scoring, opts, a.seed
            )
            times[name, cfg, "lspc"] = secs
        for cfg, factors in KLR.items():
            results[name, cfg, "klr"], times[name, cfg, "klr"] = run(
                problem, "klr", factors, None, "auc", {}, a.seed
            )
        print(f"  done in {time.perf_counter() - t0:.0f} s", flush=True)

    sets = [s for s in sets if (s, next(iter(CONFIGS)), "lspc") in results]
    w = 44
    head = "".join(f"{s:>22}" for s in sets)
    print("\nMean AUC (%) over (task, trial): LSPC-new variant / KLR / difference")
    print(f"{'factor':<{w}}{head}")
    klr_of = {  # KLR at the same width(s)
        cfg: cfg if cfg in KLR else "width grid" if "width grid" in cfg else next(iter(KLR))
        for cfg in CONFIGS
    }
    for cfg in CONFIGS:
        cells = []
        for s in sets:
            lm = 100 * results[s, cfg, "lspc"][:, 0].mean()
            km = 100 * results[s, klr_of[cfg], "klr"][:, 0].mean()
            cells.append(f"{lm:6.1f} {km:6.1f} {lm - km:+6.1f}")
        print(f"{cfg:<{w}}" + "".join(f"{c:>22}" for c in cells))
    for cfg in ("baseline (paper's LSPC-new, tau = median)", "width grid 1/8..2 x median"):
        for half in ("few", "many"):
            cells = []
            for s in sets:
                L, K = results[s, cfg, "lspc"], results[s, klr_of[cfg], "klr"]
                cut = np.median(L[:, 1])
                sel = L[:, 1] <= cut if half == "few" else L[:, 1] > cut
                if not sel.any():
                    cells.append("–")
                    continue
                d = 100 * (L[sel, 0] - K[sel, 0]).mean()
                cells.append(
                    f"n+<={cut:.0f}: {d:+5.1f}" if half == "few" else f"n+>{cut:.0f}: {d:+5.1f}"
                )
            label = f"  positives ({'width grid' if 'grid' in cfg else 'baseline'}), {half}: diff"
            print(f"{label:<{w}}" + "".join(f"{c:>22}" for c in cells))
    print("\nSearch seconds on the width grid (5 taus x 9 lambdas, 2 folds), all trials:")
    for s in sets:
        lt, kt = times[s, "width grid 1/8..2 x median", "lspc"], times[s, "width grid", "klr"]
        print(
            f"  {s:<12} LSPC-new {lt:7.2f} s   KLR {kt:7.2f} s   KLR / LSPC-new = {kt / lt:5.1f}x"
        )


if __name__ == "__main__":
    main()
