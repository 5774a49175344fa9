"""Scale: the low-rank and Nystroem paths against their limits and peers, every ratio
printed in one process.  Not a test.

1. Exact ``LSPCCV`` (20 tasks x 9 sigma x 9 lambda, 2-fold, n = 1000, d = 500) against the
   exact-CV limit: per (sigma, fold) the training part's kernel and its eigh plus the
   validation cross-kernel, then one final kernel, ``K^T K`` and Cholesky.
2. ``PairwiseCoupling(KernelLogisticRegression)`` on isolet1 (26 classes, 1560 x 617,
   5 stratified folds, sigma = median distance, lam = 0.01) against scikit-learn's
   ``SVC`` (libsvm one-vs-one, the same 325 pairwise problems) at gamma = 1 / (2 sigma^2)
   and C = 1 / lam, the same folds; fit + prediction of each fold.
3. Test AUC (mean over 20 tasks) of ``LSPCCV(n_basis=b)`` against the exact model at
   n = 3000 (3000 more rows for testing), b = 100 ... 3000; CV scoring "auc".
4. ``LSPCCV(n_basis=1000)`` at n = 50,000 and 100,000 against its GEMM-bound limit: one
   n x b distance block; per sigma one exp of it, one b x b Gram over all rows
   (``dsyrk``) and one b x b eigh per fold.  Peak RSS of the process after each.  The
   search's excess over the limit is what the limit leaves out: per (sigma, fold) the
   validation outputs (n_va x b times b x 189: 9 lambdas x (20 tasks + a column of
   ones)), computed and scored in row blocks, and the thin ``K^T Y``.
5. ``KernelLogisticRegressionCV(n_components=1000)`` against ``LSPCCV(n_basis=1000)`` at
   n = 50,000: its per-(task, sigma) cost is measured on ``--klr-tasks`` task(s) x
   ``--klr-sigmas`` width(s) (all 9 lambdas, both folds) and scaled to 20 x 9 (its tasks
   and widths are independent fits, so the cost is linear in both).

The HMM kernel with landmarks against the full kernel is
``benchmarks/bench_landmarks.py`` (real clips, its own command).

Data (items 1, 3-5): n rows of d = 500 word counts from a 10-topic model with 20 binary
tasks (``bench_lspc.make_counts``, bag-of-words-like, generated); item 2: the real
isolet1 file of the data mirror (``--isolet``).

    .venv/bin/python benchmarks/bench_scale.py --isolet ../shared/data/isolet/isolet.mat
    .venv/bin/python benchmarks/bench_scale.py --quick     # n / 10, about two minutes
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.linalg
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lspc import make_counts  # noqa: E402

from kclf.coupling import PairwiseCoupling  # noqa: E402
from kclf.kernels import median_sigma, rbf_kernel, squared_distances  # noqa: E402
from kclf.klr import KernelLogisticRegression, KernelLogisticRegressionCV  # noqa: E402
from kclf.lspc import LSPCCV  # noqa: E402
from kclf.model_selection import sigma_grid  # noqa: E402

LAMS = np.logspace(-3, 1, 9)
TASKS = 20
#: the limits run an eigh of up to this order on one BLAS thread, as the search does
#: (faster there on this machine than the threaded LAPACK)
SERIAL_EIGH_MAX = 1024


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn, repeat=1):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def serial_blas(serial):
    """One BLAS thread if ``serial``, else unchanged."""
    return threadpool_limits(1, user_api="blas") if serial else contextlib.nullcontext()


def eigh(A, serial):
    with serial_blas(serial):
        return scipy.linalg.eigh(A, driver="evd", overwrite_a=True, check_finite=False)


def search_folds(X):
    """The 2 folds of ``lspc_cv``'s search (several tasks, ``random_state=0``: shuffled
    K-fold)."""
    return list(KFold(2, shuffle=True, random_state=0).split(X))


def exact_limit(X, sigmas, folds):
    """Per (sigma, fold): training kernel + eigh + validation cross-kernel; then one final
    kernel, K^T K and Cholesky."""
    for s in sigmas:
        for tr, va in folds:
            eigh(rbf_kernel(X[tr], None, s), tr.size <= SERIAL_EIGH_MAX)
            rbf_kernel(X[va], X[tr], s)
    n = X.shape[0]
    with serial_blas(n <= SERIAL_EIGH_MAX):
        K = rbf_kernel(X, None, sigmas[0])
        H = scipy.linalg.blas.dsyrk(1.0 / n, np.asfortranarray(K), trans=1)  # K^T K / n
        H[np.diag_indices(n)] += LAMS[0]
        scipy.linalg.cho_factor(H)


def lowrank_limit(X, sigmas, folds, b, seed):
    """One n x b distance block; per sigma one exp, one b x b Gram, one eigh per fold."""
    C = X[np.random.default_rng(seed).choice(X.shape[0], b, replace=False)]
    D = squared_distances(X, C)
    K = np.empty_like(D)
    for s in sigmas:
        np.multiply(D, -1.0 / (2.0 * s**2), out=K)
        np.exp(K, out=K)
        G = scipy.linalg.blas.dsyrk(1.0, K.T, trans=0)  # K^T K, upper triangle
        for _ in folds:
            eigh(G / X.shape[0], C.shape[0] <= SERIAL_EIGH_MAX)


def lspc_cv(X, Y, sigmas, n_basis=None, scoring="error"):
    return LSPCCV(sigmas, LAMS, cv=2, random_state=0, n_basis=n_basis, scoring=scoring).fit(X, Y)


def item_exact(n):
    X, Y = make_counts(n, TASKS)
    sigmas, folds = sigma_grid(X), search_folds(X)
    t_lim, _ = timed(lambda: exact_limit(X, sigmas, folds), repeat=3)
    t_fit, cv = timed(lambda: lspc_cv(X, Y, sigmas), repeat=3)
    distinct = len(set(zip(cv.sigma_, cv.lam_)))
    print(f"## 1. exact LSPCCV, n={n}, d=500, {TASKS} tasks x 9 sigma x 9 lambda, 2-fold")
    print("| | seconds | / limit |")
    print("|---|---:|---:|")
    print(f"| exact-CV limit | {t_lim:.3f} | 1.00 |")
    print(f"| LSPCCV | {t_fit:.3f} | {t_fit / t_lim:.2f} |")
    print(f"(best of 3; the tasks chose {distinct} distinct (sigma, lambda) for the final fits)")
    print(flush=True)


def item_pairwise(path, lam=0.01, n_folds=5):
    from kclf_workflow.datasets.isolet import load_isolet_mat

    X, y = load_isolet_mat(path)
    sigma = median_sigma(X)
    folds = list(StratifiedKFold(n_folds, shuffle=True, random_state=0).split(X, y))

    def klr():
        acc = []
        for tr, va in folds:
            model = PairwiseCoupling(KernelLogisticRegression(sigma=sigma, lam=lam))
            acc.append(np.mean(model.fit(X[tr], y[tr]).predict(X[va]) == y[va]))
        return np.mean(acc)

    def svc():
        acc = []
        for tr, va in folds:
            model = SVC(gamma=1.0 / (2.0 * sigma**2), C=1.0 / lam)
            acc.append(np.mean(model.fit(X[tr], y[tr]).predict(X[va]) == y[va]))
        return np.mean(acc)

    t_klr, a_klr = timed(klr, repeat=3)
    t_svc, a_svc = timed(svc, repeat=3)
    print(f"## 2. pairwise KLR vs SVC on isolet1 ({X.shape[0]} x {X.shape[1]}, 26 classes)")
    print(f"{n_folds} folds, sigma = {sigma:.3f} (median), lam = {lam} (C = {1 / lam:g})")
    print("| | seconds (fit + predict, all folds) | / SVC | accuracy |")
    print("|---|---:|---:|---:|")
    print(f"| SVC (libsvm one-vs-one) | {t_svc:.2f} | 1.00 | {a_svc:.4f} |")
    print(
        f"| PairwiseCoupling(KernelLogisticRegression) | {t_klr:.2f} | {t_klr / t_svc:.2f} | "
        f"{a_klr:.4f} |"
    )
    print("(best of 3)")
    print(flush=True)


def item_auc(n, bases):
    X, Y = make_counts(2 * n, TASKS, seed=3)
    Xtr, Ytr, Xte, Yte = X[:n], Y[:n], X[n:], Y[n:]
    sigmas = sigma_grid(Xtr)

    def auc(model):
        P = model.predict_proba(Xte)
        return 100 * np.mean([roc_auc_score(Yte[:, t], P[:, t]) for t in range(TASKS)])

    print(f"## 3. test AUC vs n_basis, n = {n} train + {n} test, d = 500, {TASKS} tasks")
    print("| n_basis | mean test AUC | - exact | search + fit s |")
    print("|---:|---:|---:|---:|")
    t_ex, exact = timed(lambda: lspc_cv(Xtr, Ytr, sigmas, scoring="auc"))
    a_ex = auc(exact)
    for b in bases:
        t_b, model = timed(lambda b=b: lspc_cv(Xtr, Ytr, sigmas, n_basis=b, scoring="auc"))
        a_b = auc(model)
        print(f"| {b} | {a_b:.2f} | {a_b - a_ex:+.2f} | {t_b:.1f} |", flush=True)
    print(f"| exact | {a_ex:.2f} | 0 | {t_ex:.1f} |")
    print(flush=True)


def item_lowrank(n, b, klr_tasks, klr_sigmas, repeat=1):
    X, Y = make_counts(n, TASKS, seed=n)
    sigmas, folds = sigma_grid(X), search_folds(X)
    t_lim = t_fit = np.inf
    for _ in range(repeat):  # alternated, best of each: robust to a passing load
        t_lim = min(t_lim, timed(lambda: lowrank_limit(X, sigmas, folds, b, 0))[0])
        t_fit = min(t_fit, timed(lambda: lspc_cv(X, Y, sigmas, n_basis=b))[0])
    rss = rss_mib()
    print(f"## 4. LSPCCV(n_basis={b}), n = {n}, d = 500, {TASKS} tasks x 9 x 9, 2-fold")
    print("| | seconds | / limit | peak RSS MiB (process) |")
    print("|---|---:|---:|---:|")
    print(f"| GEMM-bound limit | {t_lim:.1f} | 1.00 | |")
    print(f"| LSPCCV(n_basis={b}) | {t_fit:.1f} | {t_fit / t_lim:.2f} | {rss:.0f} |")
    if repeat > 1:
        print(f"(best of {repeat}, limit and search alternated)")
    print(flush=True)
    if not klr_tasks:
        return
    tasks, sig = list(range(klr_tasks)), sigmas[len(sigmas) // 2 : len(sigmas) // 2 + klr_sigmas]
    y = Y[:, tasks] if klr_tasks > 1 else Y[:, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t_klr, klr = timed(
            lambda: KernelLogisticRegressionCV(sig, LAMS, cv=2, random_state=0, n_components=b).fit(
                X, y
            )
        )
        best = klr.best_estimator_ if klr_tasks == 1 else klr.estimators_[0]
        t_final, _ = timed(lambda: best.fit(X, Y[:, 0]))
    # the search is linear in tasks and widths, the final fit in tasks only
    t_search = max(t_klr - klr_tasks * t_final, 0.0)
    scaled = t_search * (TASKS / klr_tasks) * (len(sigmas) / len(sig)) + TASKS * t_final
    print(f"## 5. KernelLogisticRegressionCV(n_components={b}) vs LSPCCV(n_basis={b}), n = {n}")
    print("| | seconds | / LSPCCV |")
    print("|---|---:|---:|")
    print(f"| LSPCCV(n_basis={b}), 20 tasks x 9 x 9, search + final fits | {t_fit:.1f} | 1.0 |")
    print(
        f"| KLRCV(n_components={b}), measured: {klr_tasks} task(s) x {len(sig)} sigma x 9 "
        f"lambda, 2-fold, + final fit | {t_klr:.1f} | |"
    )
    print(
        f"| of which one final KernelLogisticRegression(n_components={b}) fit | {t_final:.1f} | |"
    )
    factor = TASKS / klr_tasks * len(sigmas) / len(sig)
    print(
        f"| KLRCV scaled to 20 tasks x 9 sigma (search x {factor:g}, final fit x {TASKS}) "
        f"| {scaled:.0f} | {scaled / t_fit:.0f} |"
    )
    print(flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n / 10 everywhere, no KLR")
    ap.add_argument("--isolet", default=None, help="isolet.mat (fea, gnd) of isolet1")
    ap.add_argument("--klr-tasks", type=int, default=1)
    ap.add_argument("--klr-sigmas", type=int, default=1)
    ap.add_argument("--sizes", type=int, nargs="*", default=[50_000, 100_000])
    ap.add_argument("--repeat", type=int, default=1, help="best of this many, item 4")
    ap.add_argument("--only-lowrank", action="store_true", help="item 4 (and 5) only")
    ap.add_argument("--no-auc", action="store_true", help="skip item 3")
    args = ap.parse_args()
    q = 10 if args.quick else 1
    print(f"# bench_scale (2-core machine; BLAS threads: default; quick={args.quick})\n")
    if not args.only_lowrank:
        item_exact(1000)
        if args.isolet:
            item_pairwise(args.isolet)
        if not args.no_auc:
            item_auc(3000 // q, [b for b in (100, 300, 1000, 3000) if b <= 3000 // q])
    for k, n in enumerate(args.sizes):
        klr_tasks = 0 if (k or args.quick) else args.klr_tasks
        item_lowrank(n // q, 1000 // q, klr_tasks, args.klr_sigmas, args.repeat)


if __name__ == "__main__":
    main()
