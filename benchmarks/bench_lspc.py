"""Speed of the hyper-parameter searches: LSPC-new vs kernel logistic regression vs
scikit-learn's calibrated SVC .  Prints tables; not a test.

Data: n samples of d = 500 non-negative word counts drawn from a 10-topic model
(bag-of-words-like), T = 20 binary tasks that are noisy linear functions of the topic
mixtures.  Search: 9 sigma x 9 lambda (C = 1 / lambda for the SVC), 2-fold CV with the
same folds for every method, then the final fit of every task.

    .venv/bin/python benchmarks/bench_lspc.py            # full run (several minutes)
    .venv/bin/python benchmarks/bench_lspc.py --quick    # smaller, about a minute

The calibrated SVC search (``GridSearchCV(CalibratedClassifierCV(SVC(),
ensemble=False))``) is timed on ``--svc-tasks`` tasks and scaled to T tasks (its tasks
are independent searches, so the cost is linear in T); ``--svc-tasks 20`` runs them all.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np
from sklearn.calibration import CalibratedClassifierCV
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.svm import SVC

from kclf import LSPCCV, KernelLogisticRegressionCV
from kclf.kernels import rbf_kernel
from kclf.lspc import LSPC
from kclf.model_selection import DEFAULT_LAMS, DEFAULT_SIGMA_FACTORS, sigma_grid

D = 500
N_TOPICS = 10


def make_counts(n, n_tasks, seed=0):
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(D, 0.1), size=N_TOPICS)
    Z = rng.dirichlet(np.full(N_TOPICS, 0.3), size=n)
    X = np.array([rng.multinomial(100, z @ topics) for z in Z], dtype=float)
    W = rng.normal(size=(N_TOPICS, n_tasks))
    Y = ((Z @ W) + 0.3 * rng.normal(size=(n, n_tasks)) > 0).astype(int)
    return X, Y


def timed(fn, repeat=1):
    best = np.inf
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak(fn):
    """(seconds, peak traced MiB) of one call; numpy's buffers are traced."""
    tracemalloc.start()
    t0 = time.perf_counter()
    fn()
    sec = time.perf_counter() - t0
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return sec, top / 2**20


def lspc_search(X, Y, sigmas, lams):
    return LSPCCV(sigmas, lams, cv=2, rounding="outputs", random_state=0).fit(X, Y)


def klr_search(X, Y, sigmas, lams):
    return KernelLogisticRegressionCV(sigmas, lams, cv=2, random_state=0).fit(X, Y)


def svc_search(X, Y, sigmas, lams, tasks):
    # the searches' folds of a 0/1 task matrix: KFold(2, shuffle=True, random_state=0)
    folds = list(KFold(2, shuffle=True, random_state=0).split(X))
    grid = {
        "estimator__gamma": list(1.0 / (2.0 * sigmas**2)),
        "estimator__C": list(1.0 / lams),
    }
    for t in tasks:
        GridSearchCV(
            CalibratedClassifierCV(SVC(), ensemble=False), grid, cv=folds, scoring="accuracy"
        ).fit(X, Y[:, t])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n=500, 5 tasks, scaling to 2000")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--svc-tasks", type=int, default=2)
    ap.add_argument("--scaling", type=int, nargs="*", default=[500, 1000, 2000, 4000])
    args = ap.parse_args()
    if args.quick:
        args.n, args.tasks, args.svc_tasks, args.scaling = 500, 5, 1, [500, 1000, 2000]

    X, Y = make_counts(args.n, args.tasks)
    sigmas = sigma_grid(X, DEFAULT_SIGMA_FACTORS)  # the 9 x 9 grid these timings were taken on
    lams_lspc = np.logspace(-3, 1, 9)
    lams_klr = DEFAULT_LAMS
    print(f"# search: n={args.n}, d={D}, {args.tasks} tasks, 9 sigma x 9 lambda, 2-fold CV")
    t_lspc, _ = timed(lambda: lspc_search(X, Y, sigmas, lams_lspc))
    print(f"LSPCCV done: {t_lspc:.2f} s", flush=True)
    t_klr, klr = timed(lambda: klr_search(X, Y, sigmas, lams_klr))
    print(f"KernelLogisticRegressionCV done: {t_klr:.2f} s", flush=True)
    k = min(args.svc_tasks, args.tasks)
    t_svc_k, _ = timed(lambda: svc_search(X, Y, sigmas, lams_klr, range(k)))
    t_svc = t_svc_k * args.tasks / k
    note = "" if k == args.tasks else f" (measured on {k} task(s), x{args.tasks / k:g})"
    print("| method | seconds | / LSPC-new |")
    print("|---|---:|---:|")
    print(f"| LSPCCV (LSPC-new) | {t_lspc:.2f} | 1.0 |")
    print(f"| KernelLogisticRegressionCV | {t_klr:.2f} | {t_klr / t_lspc:.1f} |")
    print(f"| calibrated SVC GridSearchCV{note} | {t_svc:.1f} | {t_svc / t_lspc:.0f} |")
    print(f"KLR IRLS steps of the final fits: median {np.median(klr.n_iter_):.0f}")
    print()

    sigma = float(np.median(sigmas))
    y = Y[:, 0]
    t_fit, _ = timed(lambda: LSPC(sigma=sigma, lam=0.1).fit(X, y), repeat=5)

    def dense():
        K = rbf_kernel(X, sigma=sigma)
        ind = np.eye(2)[y]
        H = K.T @ K / K.shape[0] + 0.1 * np.eye(K.shape[0])
        return np.linalg.solve(H, K.T @ ind / K.shape[0])

    t_dense, _ = timed(dense, repeat=5)
    print(f"# one LSPC.fit vs a plain dense solve of Eq. (3), n={args.n}, d={D}")
    print("| | seconds | ratio |")
    print("|---|---:|---:|")
    print(f"| LSPC.fit | {t_fit:.4f} | {t_fit / t_dense:.2f} |")
    print(f"| kernel + K^T K + np.linalg.solve | {t_dense:.4f} | 1.00 |")
    print()

    print(f"# scaling: {args.tasks} tasks, 9 x 9 grid, 2-fold CV + final fits")
    print("| n | LSPC-new s | LSPC-new peak MiB | KLR s | KLR peak MiB | KLR / LSPC |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.scaling:
        Xn, Yn = make_counts(n, args.tasks, seed=n)
        sn = sigma_grid(Xn, DEFAULT_SIGMA_FACTORS)
        tl, ml = peak(lambda Xn=Xn, Yn=Yn, sn=sn: lspc_search(Xn, Yn, sn, lams_lspc))
        tk, mk = peak(lambda Xn=Xn, Yn=Yn, sn=sn: klr_search(Xn, Yn, sn, lams_klr))
        print(f"| {n} | {tl:.2f} | {ml:.0f} | {tk:.2f} | {mk:.0f} | {tk / tl:.1f} |", flush=True)


if __name__ == "__main__":
    main()
