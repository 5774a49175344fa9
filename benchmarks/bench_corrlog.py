"""CorrLog at the paper's scale: cross-validation + final fit against scikit-learn's
``LogisticRegressionCV(cv=3, Cs=24)`` run once per label, in one process, with the ratio of
the times and where CorrLog's time goes.  Prints tables; not a test.

Data sets (``--sets``, all by default):

* ``dense20``: generated (:func:`make_correlated_labels`), ``n`` training and ``n`` test
  rows of ``d = 1000`` features, 20 labels.  The features are 1000 noisy views of 20 latent
  factors (``X = F V / sqrt(20) + N(0, I)``), dense and strongly correlated like CNN image
  features.  Each label has a linear score of the factors (standardised) plus N(0, 0.2^2)
  noise.  The labels are drawn in order: the first ``m / 5`` are roots; every later label
  ``i`` has a parent ``p(i) < i`` drawn at random and its score moves by ``+-0.7`` with the
  parent's value (sign drawn per label), then ``y_i = 1[score_i > t_i]`` with
  ``t_i ~ U(0.5, 1.5)``: the mechanism of the paper's toy example (Sec. V) on a random
  forest of labels.
* ``text20`` / ``text53``: generated like a sparse text corpus
  (:func:`make_sparse_text`): 2000 / 1100 training rows (as many test rows) of 1000 word
  features, ``log(1 + count)`` of 250-500 tokens per row (about 240 distinct words, 24 %
  non-zero), label sets of 3-4 of the 20 / 53 labels drawn from one of 8 themes (label
  co-occurrence), 15 % of the tokens from the row's labels' topics, the rest from a
  Zipf background.
* ``scene``, ``medical``, ``CAL500``: the MULAN sets in the mirror (``--mulan``), their
  given train/test split (medical: 45 labels, 1449 sparse word features; CAL500: 174
  labels, many rare).

For each set: the seconds of the per-label ``LogisticRegressionCV`` searches (on
standardised features; a label with fewer than 3 members of a class, which stratified
3-fold CV cannot split, gets the majority prediction, counted) and of ``CorrLog()`` (3-fold
CV over its 6 x 4 grid, then the final fit) with the paper's shared penalty and with
``penalty="per_label"``; their ratio; CorrLog's ``fit_profile_`` (CV: FISTA, screening,
decoding the test folds; the final fit) and the seconds of each decoder on the test rows;
test subset accuracy (CorrLog: the joint MAP), Hamming loss (CorrLog: the thresholded
marginals, its Bayes decision) and example-based F1 (CorrLog: the F1 decision, the MAP
and the thresholded marginals).

    .venv/bin/python benchmarks/bench_corrlog.py                       # every set
    .venv/bin/python benchmarks/bench_corrlog.py --sets text53 medical   # some

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

from kclf.corrlog import LABEL_CRITERIA, CorrLog
from kclf.metrics import multilabel_scores
from kclf_workflow.datasets.mulan import load_arff_multilabel

ROOT = Path(__file__).resolve().parents[1]
MULAN_SETS = {"scene": 6, "medical": 45, "CAL500": 174}
SETS = ("dense20", "text20", "text53", *MULAN_SETS)
DECODERS = ("map", "marginal", "f1")


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


def make_sparse_text(n, m, d=1000, seed=0, n_themes=8, topic_share=0.15, length=(250, 500)):
    """``(X, Y)`` shaped like a sparse text corpus (module docstring): ``log(1 + counts)``
    of a Zipf background mixed with the row's labels' sparse topics, 3-4 labels per row
    drawn from one of ``n_themes`` themes (Zipf-like label frequencies)."""
    rng = np.random.default_rng(seed)
    freq = 1.0 / np.arange(3, m + 3) ** 0.8
    themes = (rng.dirichlet(np.full(m, 0.3), size=n_themes) + 0.02) * freq
    themes /= themes.sum(axis=1, keepdims=True)
    background = 1.0 / (rng.permutation(d) + 10.0)
    background /= background.sum()
    topics = rng.dirichlet(np.full(d, 0.05), size=m)
    X = np.zeros((n, d))
    Y = np.zeros((n, m), dtype=int)
    for r in range(n):
        theme = themes[rng.integers(n_themes)]
        labels = rng.choice(m, size=rng.integers(3, 5), replace=False, p=theme)
        Y[r, labels] = 1
        mix = (1.0 - topic_share) * background + topic_share * topics[labels].mean(axis=0)
        X[r] = rng.multinomial(rng.integers(*length), mix)
    return np.log1p(X), Y


def load_set(name, n, mulan):
    """``(X, Y, Xt, Yt)`` of a set of :data:`SETS` (None when a MULAN file is missing)."""
    if name == "dense20":
        X, Y = make_correlated_labels(2 * n, 1000, 20, seed=20)
    elif name in ("text20", "text53"):
        m = int(name[4:])
        rows = n if m == 20 else 1100
        X, Y = make_sparse_text(2 * rows, m, seed=m)
    else:
        files = [Path(mulan) / f"{name}-{part}.arff" for part in ("train", "test")]
        if not all(f.is_file() for f in files):
            return None
        X, Y, _, _ = load_arff_multilabel(files[0], MULAN_SETS[name])
        Xt, Yt, _, _ = load_arff_multilabel(files[1], MULAN_SETS[name])
        return X, Y, Xt, Yt
    half = len(X) // 2
    return X[:half], Y[:half], X[half:], Y[half:]


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


def corrlog(X, Y, Xt, penalty, n_jobs, criterion="auto"):
    """Fit ``CorrLog(penalty=...)``; its seconds, the test labels of every decoder with
    their seconds, the model and the warnings raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        model = CorrLog(penalty=penalty, label_criterion=criterion, n_jobs=n_jobs)
        model.fit(X, Y)
        seconds = time.perf_counter() - start
        decoded, dec_seconds = {}, {}
        for decoder in DECODERS:
            t0 = time.perf_counter()
            decoded[decoder] = model.decode_labels(Xt, decoder)
            dec_seconds[decoder] = time.perf_counter() - t0
    notes = sorted({str(w.message).split(":")[0][:60] for w in caught})
    return seconds, decoded, dec_seconds, model, notes


def report(name, X, Y, Xt, Yt, n_jobs, penalties, criterion="auto"):
    """Print one set's block; return its summary row."""
    b_sec, b_pred, skipped = baseline(X, Y, Xt)
    freq = Y.mean(axis=0)
    print(
        f"\n{name}: n_train={len(X)}, n_test={len(Xt)}, d={X.shape[1]}, m={Y.shape[1]}, "
        f"{np.count_nonzero(X) / X.size:.1%} non-zero features, label frequency "
        f"{freq.min():.3f}-{freq.max():.3f}"
    )
    print(f"  LogisticRegressionCV x {Y.shape[1]} labels: {b_sec:8.1f} s", end="")
    print(f"  ({skipped} labels majority-predicted)" if skipped else "")
    base = multilabel_scores(Yt, b_pred)
    rows = [("LogisticRegressionCV", base["subset_accuracy"], base["hamming_loss"])]
    rows[0] += (base["example_f1"], None, None)
    summary = {"set": name, "m": Y.shape[1], "baseline": b_sec}
    for penalty in penalties:
        c_sec, decoded, dec_sec, model, notes = corrlog(X, Y, Xt, penalty, n_jobs, criterion)
        prof = model.fit_profile_
        print(
            f"  CorrLog(penalty={penalty!r}) CV + fit: {c_sec:8.1f} s   ratio {c_sec / b_sec:.3f}"
        )
        print(
            f"    where: CV {prof['cv']:.1f} s (FISTA path {prof['cv_solve']:.1f}, screening "
            f"{prof['cv_screen']:.1f}, decoding test folds {prof['cv_decode']:.1f}), final fit "
            f"{prof['final_fit']:.1f} s; test decoding "
            + ", ".join(f"{d} {dec_sec[d]:.2f} s" for d in DECODERS)
        )
        lr1, lr2 = model.label_rho1_[model.active_labels_], model.label_rho2_[model.active_labels_]
        print(
            f"    chose rho1={model.rho1_:g}, rho2={model.rho2_:g}"
            + (
                f" (labels' weights: {len(set(zip(lr1, lr2)))} distinct settings)"
                if penalty == "per_label"
                else ""
            )
            + f"; final fit {model.n_iter_} iterations"
        )
        if notes:
            print(f"    warnings: {notes}")
        sc = {d: multilabel_scores(Yt, decoded[d]) for d in DECODERS}
        rows.append(
            (
                f"CorrLog {penalty}",
                sc["map"]["subset_accuracy"],
                sc["marginal"]["hamming_loss"],
                sc["f1"]["example_f1"],
                sc["map"]["example_f1"],
                sc["marginal"]["example_f1"],
            )
        )
        summary[penalty] = c_sec
    print(
        f"    {'':26}{'subset (MAP)':>13}{'Hamming (marg.)':>16}{'ex. F1 (F1 dec.)':>17}"
        f"{'ex. F1 (MAP)':>13}{'ex. F1 (marg.)':>15}"
    )
    for label, *vals in rows:
        cells = "".join(
            f"{'' if v is None else f'{v:.4f}':>{w}}" for v, w in zip(vals, (13, 16, 17, 13, 15))
        )
        print(f"    {label:26}{cells}")
    return summary


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--sets", nargs="*", default=list(SETS), choices=SETS)
    ap.add_argument("--penalties", nargs="*", default=["shared", "per_label"])
    ap.add_argument("--n", type=int, default=2000, help="training (and test) rows, dense20/text20")
    ap.add_argument("--n-jobs", type=int, default=1, help="CorrLog's n_jobs (CV folds)")
    ap.add_argument("--mulan", default=str(ROOT.parent / "shared" / "data" / "mulan"))
    ap.add_argument(
        "--per-label-criterion",
        default="auto",
        choices=LABEL_CRITERIA,
        help="the labels' criterion on per_label's second CV path (ablation)",
    )
    args = ap.parse_args()
    summaries = []
    for name in args.sets:
        data = load_set(name, args.n, args.mulan)
        if data is None:
            print(f"\n{name}: not in {args.mulan}, skipped")
            continue
        summaries.append(report(name, *data, args.n_jobs, args.penalties, args.per_label_criterion))
    print("\nCV + fit seconds, CorrLog over per-label LogisticRegressionCV(cv=3, Cs=24):")
    head = "".join(f"{p:>22}" for p in args.penalties)
    print(f"  {'set':10}{'m':>5}{'LRCV s':>9}{head}")
    for s in summaries:
        cells = "".join(f"{s[p]:>10.1f} s ({s[p] / s['baseline']:.2f}x)" for p in args.penalties)
        print(f"  {s['set']:10}{s['m']:>5}{s['baseline']:>9.1f}{cells}")


if __name__ == "__main__":
    main()
