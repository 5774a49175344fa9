"""CorrLog at the paper's scale (issue 19): cross-validation + final fit against scikit-learn's
``LogisticRegressionCV(cv=3, Cs=24)`` run once per label, in one process.  Prints tables;
not a test.

Generated data (:func:`make_correlated_labels`): ``n`` training and ``n`` test rows of
``d = 1000`` features, ``m`` labels with correlated labels.  The features are 1000 noisy
views of 20 latent factors (``X = F V / sqrt(20) + N(0, I)``), high-dimensional and
strongly correlated like bag-of-words or CNN image features.  Each label has a linear score
of the factors (standardised) plus N(0, 0.2^2) noise.  The labels are drawn in order: the
first ``m / 5`` are roots; every later label ``i`` has a parent ``p(i) < i`` drawn at random
and its score moves by ``+-0.7`` with the parent's value (sign drawn per label), then
``y_i = 1[score_i > t_i]`` with ``t_i ~ U(0.5, 1.5)`` (label frequencies ~5-50 %).  This is
the mechanism of the paper's toy example (Sec. V: one label's boundary depends on another
label) on a random forest of labels: given ``x``, a label depends on its parent's realised
value, which no linear function of ``x`` expresses and CorrLog's couplings can.

For each ``m`` the benchmark prints the seconds of ``CorrLog()`` (default 3-fold CV over
the 6 x 4 grid, then the final fit) and of the per-label ``LogisticRegressionCV`` searches
(on standardised features), their ratio, CorrLog's time over the ``m = 20`` baseline, and
test subset accuracy (both decoded by their own predict: CorrLog's joint MAP) and Hamming
loss (CorrLog also with ``decode="marginal"``, the Bayes decision for it).  Then the same on
the real many-label MULAN sets in the mirror (``--mulan``): CAL500 (174 labels) and
medical (45 labels, sparse), their given train/test split.  A label constant in the
training part, or with fewer than 3 members of a class (no stratified 3-fold CV), gets the
baseline's majority prediction (counted in the output).

    .venv/bin/python benchmarks/bench_corrlog.py                 # m = 20, 50, 80 + MULAN
    .venv/bin/python benchmarks/bench_corrlog.py --labels 20 --no-mulan   # quicker

Timings to quote come from runs under the shared lock (see the README).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegressionCV
from sklearn.preprocessing import StandardScaler

from kclf.corrlog import CorrLog
from kclf.repro.datasets.mulan import load_arff_multilabel

ROOT = Path(__file__).resolve().parents[1]
MULAN_SETS = {"CAL500": 174, "medical": 45}


def make_correlated_labels(n, d, m, seed=0, k=20, shift=0.7, noise=0.2):
    """``(X, Y)``: ``n`` rows, ``d`` features, ``m`` correlated 0/1 labels (module docstring)."""
    rng = np.random.default_rng(seed)
    V = rng.normal(size=(k, d))
    F = rng.normal(size=(n, k))
    X = F @ V / np.sqrt(k) + rng.normal(size=(n, d))
    score = F @ rng.normal(size=(k, m))
    score /= score.std(axis=0)
    thresholds = rng.uniform(0.5, 1.5, size=m)
    n_roots = max(1, m // 5)
    Y = np.zeros((n, m), dtype=int)
    for i in range(m):
        s = score[:, i] + noise * rng.normal(size=n)
        if i >= n_roots:
            parent, sign = rng.integers(i), rng.choice([-1.0, 1.0])
            s = s + shift * sign * (2 * Y[:, parent] - 1)
        Y[:, i] = s > thresholds[i]
    return X, Y


def baseline(X, Y, Xt):
    """Per-label ``LogisticRegressionCV(cv=3, Cs=24)``: seconds, test predictions, and the
    number of labels that could not be searched (majority prediction instead)."""
    start = time.perf_counter()
    scaler = StandardScaler().fit(X)
    Xs, Xts = scaler.transform(X), scaler.transform(Xt)
    P = np.zeros((len(Xt), Y.shape[1]), dtype=int)
    skipped = 0
    for j in range(Y.shape[1]):
        counts = np.bincount(Y[:, j], minlength=2)
        if counts.min() < 3:
            P[:, j] = int(np.argmax(counts))
            skipped += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", FutureWarning)  # scikit-learn's default changes
            P[:, j] = LogisticRegressionCV(cv=3, Cs=24).fit(Xs, Y[:, j]).predict(Xts)
    return time.perf_counter() - start, P, skipped


def corrlog(X, Y, Xt, n_jobs):
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = CorrLog(n_jobs=n_jobs).fit(X, Y)
    seconds = time.perf_counter() - start
    t0 = time.perf_counter()
    P_map, info = model.decode_labels(Xt, "map", return_info=True)
    predict_seconds = time.perf_counter() - t0
    P_marg = model.decode_labels(Xt, "marginal")
    notes = sorted({str(w.message).split(":")[0][:60] for w in caught})
    return seconds, predict_seconds, P_map, P_marg, model, info, notes


def subset(Y, P):
    return float(np.mean(np.all(Y == P, axis=1)))


def hamming(Y, P):
    return float(np.mean(Y != P))


def report(name, X, Y, Xt, Yt, n_jobs, ref_seconds=None):
    b_sec, b_pred, skipped = baseline(X, Y, Xt)
    c_sec, p_sec, c_map, c_marg, model, info, notes = corrlog(X, Y, Xt, n_jobs)
    ref = b_sec if ref_seconds is None else ref_seconds
    print(
        f"\n{name}: n_train={len(X)}, n_test={len(Xt)}, d={X.shape[1]}, m={Y.shape[1]} "
        f"(label frequency {Y.mean(axis=0).min():.3f}-{Y.mean(axis=0).max():.3f})"
    )
    print(f"  LogisticRegressionCV x {Y.shape[1]} labels: {b_sec:8.1f} s", end="")
    print(f"  ({skipped} labels majority-predicted)" if skipped else "")
    print(
        f"  CorrLog CV + fit (n_jobs={n_jobs}):    {c_sec:8.1f} s   ratio {c_sec / b_sec:.3f}"
        + ("" if ref_seconds is None else f"   / m=20 baseline {c_sec / ref:.3f}")
    )
    print(
        f"  CorrLog chose rho1={model.rho1_:g}, rho2={model.rho2_:g}; final fit "
        f"{model.n_iter_} iterations; predict (MAP) {p_sec:.2f} s, BP not converged on "
        f"{info['bp_nonconverged']} of {info['bp_rows']} test rows"
    )
    if notes:
        print(f"  warnings during the fit: {notes}")
    print(f"  {'':28}{'subset acc':>12}{'Hamming':>10}")
    print(f"  {'LogisticRegressionCV':28}{subset(Yt, b_pred):>12.4f}{hamming(Yt, b_pred):>10.4f}")
    print(f"  {'CorrLog (MAP)':28}{subset(Yt, c_map):>12.4f}{hamming(Yt, c_map):>10.4f}")
    print(f"  {'CorrLog (marginal)':28}{subset(Yt, c_marg):>12.4f}{hamming(Yt, c_marg):>10.4f}")
    return b_sec


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--labels", type=int, nargs="*", default=[20, 50, 80])
    ap.add_argument("--n", type=int, default=2000, help="training (and test) rows")
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--n-jobs", type=int, default=1, help="CorrLog's n_jobs (CV folds)")
    ap.add_argument("--mulan", default=str(ROOT.parent / "shared" / "data" / "mulan"))
    ap.add_argument("--no-mulan", action="store_true")
    args = ap.parse_args()
    ref = None
    for m in args.labels:
        X, Y = make_correlated_labels(2 * args.n, args.d, m, seed=m)
        b_sec = report(
            f"generated, m={m}",
            X[: args.n],
            Y[: args.n],
            X[args.n :],
            Y[args.n :],
            args.n_jobs,
            ref,
        )
        if m == 20:
            ref = b_sec
    if args.no_mulan:
        return
    for name, n_labels in MULAN_SETS.items():
        files = [Path(args.mulan) / f"{name}-{part}.arff" for part in ("train", "test")]
        if not all(f.is_file() for f in files):
            print(f"\n{name}: not in {args.mulan}, skipped")
            continue
        X, Y, _, _ = load_arff_multilabel(files[0], n_labels)
        Xt, Yt, _, _ = load_arff_multilabel(files[1], n_labels)
        report(f"MULAN {name}", X, Y, Xt, Yt, args.n_jobs)


if __name__ == "__main__":
    main()
