"""KernelLogisticRegressionCV(n_components=1000) against LSPCCV(n_basis=1000) on the same
data in one process (issue 44, item 3: within 10x).  Not a test.

One task of n rows (20 features, a nonlinear two-class rule, ``make_nonlinear``) and as
many test rows; both searches with their default grids (9 widths x 9 lambdas), 2 folds,
``random_state=0``.  Prints per search the seconds (search and final fit), the chosen
width and lambda, the test AUC, and the ratio of the two times.

    flock /tmp/kclf-heavy.lock .venv/bin/python benchmarks/bench_klr_scale.py --sizes 50000
    ... --sizes 50000 --n-jobs default 1 2     # and the speed-up of n_jobs=2 over 1
    .venv/bin/python benchmarks/bench_klr_scale.py --sizes 5000 --n-basis 300   # a minute

``--only klr`` runs the KLR search alone (to time another checkout's code at the same
size: ``PYTHONPATH=<checkout>``).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

import kclf
from kclf import LSPCCV, KernelLogisticRegressionCV


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
    args = ap.parse_args()
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
