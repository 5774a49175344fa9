"""LSPCCV's ``n_jobs``: the search on one core against the search with its widths on
``n_jobs`` cores, in one process.  Prints a table; not a test.

``n_jobs=k`` pins every BLAS call to one thread (OpenBLAS's results depend on its thread
count) and runs up to ``k`` widths of the grid at once on joblib's threading backend, so
every ``k`` gives the same bits (checked here); ``None`` is the default, one width at a
time with the BLAS library's own threads.  The peer is ``n_jobs=1``; the physical limit of
the speed-up is the number of cores.

Data: ``make_classification`` with 20 features; search: the default 9 widths x 9 lambdas,
2 folds, one task and five tasks; the exact basis at ``--n`` rows and the low-rank basis
(``n_basis=500``) at ``--n-lowrank`` rows.

    flock /tmp/kclf-heavy.lock .venv/bin/python benchmarks/bench_lspc_jobs.py
    .venv/bin/python benchmarks/bench_lspc_jobs.py --quick     # small, seconds
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from sklearn.datasets import make_classification

from kclf import LSPCCV


def data(n, n_tasks, seed=0):
    X, y = make_classification(n, 20, n_informative=10, random_state=seed)
    if n_tasks == 1:
        return X, y
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(20, n_tasks - 1))
    return X, np.c_[y, (X @ W + rng.normal(size=(n, n_tasks - 1)) > 0).astype(int)]


def best_of(fn, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="rows, exact basis")
    parser.add_argument("--n-lowrank", type=int, default=40000, help="rows, n_basis=500")
    parser.add_argument("--repeat", type=int, default=2, help="best of this many fits")
    parser.add_argument("--quick", action="store_true", help="n=600, n-lowrank=6000")
    args = parser.parse_args()
    if args.quick:
        args.n, args.n_lowrank, args.repeat = 600, 6000, 1
    cores = os.cpu_count()
    jobs = [None, 1, 2] + ([-1] if cores > 2 else [])
    print(f"{cores} cores; seconds (best of {args.repeat}); speed-up = n_jobs=1 / n_jobs=k")
    print(f"{'case':<34}" + "".join(f"{str(j):>10}" for j in jobs) + "   speed-up(2)  same bits")
    cases = [
        ("exact, 1 task", args.n, 1, {}),
        ("exact, 5 tasks", args.n, 5, {}),
        ("low rank b=500, 1 task", args.n_lowrank, 1, {"n_basis": 500}),
        ("low rank b=500, 5 tasks", args.n_lowrank, 5, {"n_basis": 500}),
    ]
    for name, n, tasks, params in cases:
        X, y = data(n, tasks)
        secs, probs = {}, {}
        for n_jobs in jobs:
            est = LSPCCV(random_state=0, n_jobs=n_jobs, **params)
            secs[n_jobs], fitted = best_of(lambda e=est, X=X, y=y: e.fit(X, y), args.repeat)
            probs[n_jobs] = fitted.predict_proba(X[:500])
        same = all(np.array_equal(probs[1], probs[j]) for j in jobs if j is not None)
        row = "".join(f"{secs[j]:>10.2f}" for j in jobs)
        print(f"{name + f' (n={n})':<34}{row}   {secs[1] / secs[2]:>10.2f}x  {same}")


if __name__ == "__main__":
    main()
