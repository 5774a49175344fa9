"""MAPLP fit time on IDA banana realisation 1 (n = 400) and its ratio to scikit-learn's SVC.
Prints a table; not a test.

Both use the paper's selected width for banana, gamma = 4.217 (sigma = sqrt(1 / (2 gamma)));
SVC with C = 10 on the same kernel.  Every fit is repeated ``--repeat`` times and the
median taken.  MAPLP is timed with each HiGHS algorithm.

    .venv/bin/python benchmarks/bench_maplp.py [--mirror ../shared/data/ida] [--repeat 5]

Without the mirror the banana realisation is replaced by 400 + 4900 points from Breiman's
twonorm generator (said in the output).

``--scale``: MAPLP at any size instead (``n_basis``; issue 45): Breiman's ringnorm (20-D,
generated, standardised on the training rows) at the paper's width, the full model on 500
(the benchmark's subsample), 1,000 and 2,000 training rows beside ``n_basis=500`` centres
on 1,000, 2,000 and 5,000 rows, plain and with ``bias=True``, and with ``bias=True`` on
5,000 rows with ``--basis-sizes`` centres (250, 1,000, 2,000): how the LP's size and time
grow with ``n_basis``; every fit in a fresh child process, which reports its wall time, its
peak resident memory above its size at the start, the test error on 2,000 other rows and
HiGHS's iterations, beside the LP's size and the ratios of time and memory to the full
model on 500 rows (the benchmark's subsample).
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time
from pathlib import Path

import numpy as np
from scipy import sparse
from scipy.optimize import linprog
from sklearn.svm import SVC
from sklearn.utils import check_random_state

from kclf.kernels import rbf_kernel
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


def _rss_mb():
    """The resident memory of this process now, MB (Linux's /proc)."""
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return kb / 1024.0


def _fit_in_child(kw, X, y, Xt, yt, queue, primal=False):
    start = _rss_mb()
    t0 = time.perf_counter()
    model = MAPLP(**kw).fit(X, y)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KB on Linux
    err = 100 * np.mean(model.predict(Xt) != yt)
    ref = _primal(kw, X, y, model.objective_) if primal else 0.0
    queue.put((seconds, peak - start, err, int(model.n_iter_), ref))


def _primal(kw, X, y, objective):
    """Seconds of the reference: the same programme in its primal form (the MAPLP
    docstring's LP: ``alpha``, then the slacks ``xi``; cap rows, one normalisation) by
    HiGHS's interior point, MAPLP's solver before it solved the dual, on the centres MAPLP
    draws (``n_basis`` of its distinct rows, in ``numpy.unique``'s order, by
    ``check_random_state(random_state)``); its optimum must equal the fit's criterion
    (``objective``)."""
    classes = np.unique(y)
    y_index = np.searchsorted(classes, y)
    # MAPLP fits its distinct (x, y) rows in numpy.unique's order
    _, first = np.unique(np.column_stack([X, y_index]), axis=0, return_index=True)
    X, y_index, n = X[first], y_index[first], first.size
    centres = np.arange(n)
    if kw["n_basis"] is not None and kw["n_basis"] < n:
        rng = check_random_state(kw["random_state"])
        centres = np.sort(rng.choice(n, kw["n_basis"], replace=False))
    K = rbf_kernel(X, X[centres], kw["sigma"])
    if kw["bias"]:
        K = np.hstack([K, np.ones((n, 1))])
    onehot = np.eye(len(classes))[y_index].T  # (C, N)
    t0 = time.perf_counter()
    c = np.concatenate([-(onehot @ K).ravel(), np.ones(n)])
    blocks = [sparse.csr_array(K * row[:, None]) for row in onehot]
    A_ub = sparse.hstack(blocks + [-sparse.eye_array(n, format="csr")], format="csr")
    A_eq = np.concatenate([np.tile(K.sum(axis=0), len(classes)), np.zeros(n)])[None, :]
    res = linprog(c, A_ub=A_ub, b_ub=np.ones(n), A_eq=A_eq, b_eq=[n], method="highs-ipm")
    seconds = time.perf_counter() - t0
    assert res.status == 0, res.message
    assert abs(-res.fun / n - objective) < 1e-6, (-res.fun / n, objective)
    return seconds


def lp_size(n, b, n_classes, bias):
    """``(variables, constraints, non-zeros)`` of the LP HiGHS solves for MAPLP on ``n``
    rows with ``b`` centres, the dual of MAPLP's programme (``maplp_dual_lp``; ``bias``
    adds the constant basis function, one more per class)."""
    basis = b + (1 if bias else 0)
    return n + 1, n_classes * basis, n * basis + n_classes * basis


#: the paper's width for ringnorm, gamma = 0.09 (sigma = sqrt(1 / (2 gamma)))
RING_SIGMA = float(np.sqrt(1 / (2 * 0.09)))


def scale(seed=0, basis_sizes=(250, 1000, 2000), primal=True):
    """MAPLP on up to 5,000 ringnorm rows with 500 centres against the full model, and on
    5,000 rows with each of ``basis_sizes`` centres (``bias=True``); ratios to the full
    model on 500 rows (the benchmark's subsample)."""
    X, y = ida.generate("ringnorm", seed, 7000)
    X = (X - X[:5000].mean(axis=0)) / X[:5000].std(axis=0)
    Xt, yt = X[5000:], y[5000:]
    ctx = multiprocessing.get_context("fork")
    print(
        f"ringnorm (generated, 20-D), sigma={RING_SIGMA:.4g} (the paper's gamma 0.09), test "
        "error on 2,000 rows; each fit in its own process; LP: variables, constraints, "
        "non-zeros of the dual programme HiGHS solves; primal s: the same programme in its "
        "primal form by HiGHS's interior point (the solver before), in the same process; "
        "x 500: time and peak memory over the full model's on 500 rows"
    )
    print(
        f"{'model':<30}{'rows':>7}{'fit s':>9}{'peak MB':>9}{'test error %':>14}{'HiGHS it':>9}"
        f"{'LP vars':>9}{'rows':>7}{'non-zeros':>12}{'primal s':>10}{'x 500 s':>9}{'x 500 MB':>10}"
    )
    runs = [(n, None) for n in (500, 1000, 2000)] + [(n, 500) for n in (1000, 2000, 5000)]
    for bias in (False, True):
        base = None
        more = [(5000, b) for b in basis_sizes] if bias else []
        for n, b in runs + more:
            queue = ctx.Queue()
            kw = {"sigma": RING_SIGMA, "bias": bias, "n_basis": b, "random_state": 0}
            args = (kw, X[:n], y[:n], Xt, yt, queue, primal)
            p = ctx.Process(target=_fit_in_child, args=args)
            p.start()
            seconds, peak, err, n_iter, primal_s = queue.get()
            p.join()
            base = base or (seconds, peak)
            size = lp_size(n, min(b or n, n), 2, bias)
            name = f"MAPLP(bias={bias}" + (f", n_basis={b})" if b else ")")
            print(
                f"{name:<30}{n:>7}{seconds:>9.2f}{peak:>9.0f}{err:>14.2f}{n_iter:>9}"
                f"{size[0]:>9}{size[1]:>7}{size[2]:>12}{primal_s:>10.2f}{seconds / base[0]:>9.2f}"
                f"{peak / base[1]:>10.2f}",
                flush=True,
            )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", default=str(ROOT.parent / "shared" / "data" / "ida"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", action="store_true", help="n_basis on 5,000 ringnorm rows")
    ap.add_argument(
        "--basis-sizes",
        type=int,
        nargs="*",
        default=[250, 1000, 2000],
        help="--scale: n_basis values also fitted on 5,000 rows (bias=True)",
    )
    args = ap.parse_args()
    if args.scale:
        scale(basis_sizes=args.basis_sizes)
        return
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
