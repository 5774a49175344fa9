"""MAPLP fit time on IDA banana realisation 1 (n = 400) and its ratio to scikit-learn's SVC.
Prints a table; not a test.

Both use the paper's selected width for banana, gamma = 4.217 (sigma = sqrt(1 / (2 gamma)));
SVC with C = 10 on the same kernel.  Every fit is repeated ``--repeat`` times and the
median taken.  MAPLP is timed with each HiGHS algorithm.

    .venv/bin/python benchmarks/bench_maplp.py [--mirror ../shared/data/ida] [--repeat 5]

Without the mirror the banana realisation is replaced by 400 + 4900 points from Breiman's
twonorm generator (said in the output).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.svm import SVC

from kclf.maplp import MAPLP
from kclf.maplp.maplp import HIGHS_METHODS
from kclf_workflow.datasets import ida

GAMMA = 4.217
ROOT = Path(__file__).resolve().parents[1]


def load(mirror):
    split = ida.load_split_asc("banana", mirror, 1) if Path(mirror).is_dir() else None
    if split is not None:
        return "banana realisation 1", split
    X, y = ida.generate("twonorm", 0, 5300)
    return "twonorm (generated; banana mirror absent)", (X[:400], y[:400], X[400:], y[400:])


def timed(make, X, y, Xt, yt, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        model = make().fit(X, y)
        times.append(time.perf_counter() - t0)
    err = 100 * np.mean(model.predict(Xt) != yt)
    return float(np.median(times)), err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", default=str(ROOT.parent / "shared" / "data" / "ida"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    name, (X, y, Xt, yt) = load(args.mirror)
    sigma = np.sqrt(1 / (2 * GAMMA))
    svc_s, svc_err = timed(lambda: SVC(C=10.0, gamma=GAMMA), X, y, Xt, yt, args.repeat)
    print(f"{name}: n_train={len(y)}, n_test={len(yt)}, gamma={GAMMA}")
    print(f"{'method':<22}{'fit s':>10}{'x SVC':>10}{'test error %':>14}")
    print(f"{'SVC (libsvm)':<22}{svc_s:>10.4f}{1.0:>10.1f}{svc_err:>14.2f}")
    for method in HIGHS_METHODS:
        s, err = timed(
            lambda m=method: MAPLP(sigma=sigma, solver_options={"method": m}),
            X,
            y,
            Xt,
            yt,
            args.repeat,
        )
        print(f"{'MAPLP ' + method:<22}{s:>10.4f}{s / svc_s:>10.1f}{err:>14.2f}")


if __name__ == "__main__":
    main()
