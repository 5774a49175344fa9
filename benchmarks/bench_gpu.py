"""LSPCCV and KernelLogisticRegressionCV on a GPU through scikit-learn's array API,
beside the same searches written in plain PyTorch (issue "On the hardware users have").

The data: 20 features, a nonlinear two-class rule (the sign of a sum of products of
pairs of features, flipped for 10 % of the rows), split into training and test rows.
Each search: the default 9 x 9 grid of widths (times the median distance) and lambdas,
2 folds, 1,000 centres (``LSPCCV(n_basis=1000)``, ``KernelLogisticRegressionCV(
n_components=1000)``).  For every (method, rows, backend) it prints the seconds of the
fit, the chosen width and lambda, and the test AUC, then per method and size the ratio of
each backend's time to the plain PyTorch reference's on the same device:

* ``numpy``: kclf on NumPy arrays (the CPU path, every core the BLAS gives it);
* ``torch``: kclf on PyTorch tensors on the GPU (``torch-cpu``: on the CPU);
* ``cupy``: kclf on CuPy arrays;
* ``strict``: kclf on ``array-api-strict`` arrays (the standard's reference namespace,
  NumPy underneath: a correctness run, not a speed one);
* ``reference``: the search written here in plain PyTorch (float64), ~100 lines each,
  with the same centres, folds and choice rule.

Where no GPU, PyTorch or CuPy is present the script says so in one line and runs what it
can.  ``--small`` is the size CI runs (2,000 rows, 100 centres, NumPy and
``array-api-strict``, PyTorch on the CPU where installed).

Usage::

    python benchmarks/bench_gpu.py                       # the issue's table, GPU needed
    python benchmarks/bench_gpu.py --small               # CI: CPU only, seconds
    python benchmarks/bench_gpu.py --methods lspc --sizes 100000 4000000 --float32
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # before scipy and sklearn are imported

import numpy as np  # noqa: E402
import sklearn  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from kclf import LSPCCV, KernelLogisticRegressionCV  # noqa: E402
from kclf.model_selection import DEFAULT_LAMS, DEFAULT_SIGMA_FACTORS, best_index  # noqa: E402

N_FEATURES = 20
LSPC_SIZES = (100_000, 400_000, 1_000_000, 4_000_000)
KLR_SIZES = (100_000, 400_000, 1_000_000)


def make_data(n, seed=0):
    """``n`` training and ``n // 4`` test rows of the nonlinear two-class rule."""
    rng = np.random.default_rng(seed)
    m = n + n // 4
    X = rng.normal(size=(m, N_FEATURES))
    f = X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] - X[:, 4] * X[:, 5] + 0.5 * X[:, 6]
    y = (f > 0).astype(np.int64)
    flip = rng.random(m) < 0.1
    y[flip] = 1 - y[flip]
    return X[:n], y[:n], X[n:], y[n:]


def folds_of(y, cv=2):
    """The folds every search here is given (``cv=folds``): scikit-learn's unshuffled
    stratified K-fold."""
    from sklearn.model_selection import StratifiedKFold

    return list(StratifiedKFold(cv).split(np.zeros(y.size), y))


# ---------------------------------------------------------------- plain PyTorch references


def torch_median_distance(torch, X, max_samples=1000):
    n = X.shape[0]
    idx = np.linspace(0, n - 1, min(n, max_samples)).astype(np.int64)
    S = X[torch.as_tensor(idx, device=X.device)]
    d = torch.cdist(S, S)
    iu = torch.triu_indices(S.shape[0], S.shape[0], 1, device=X.device)
    return float(torch.median(d[iu[0], iu[1]]).item()) if S.shape[0] > 1 else 1.0


def torch_sq_dist(torch, X, C):
    m = torch.median(C, dim=0).values
    Xc, Cc = X - m, C - m
    D = (Xc * Xc).sum(1)[:, None] + (Cc * Cc).sum(1)[None, :] - 2.0 * Xc @ Cc.T
    return D.clamp_min_(0.0)


def reference_lspc(torch, X, y, Xt, centres, folds, dtype):
    """LSPC-new's low-rank search (Eq. 3 on the b centres, every lambda from one eigh per
    (width, fold), validation error, ties to the smoother model) and its refit; returns
    ``(sigma, lam, P1_test)``."""
    dev = X.device
    lams = torch.as_tensor(DEFAULT_LAMS, dtype=dtype, device=dev)
    sigmas = torch_median_distance(torch, X) * DEFAULT_SIGMA_FACTORS
    C = X[torch.as_tensor(centres, device=dev)]
    D = torch_sq_dist(torch, X, C)
    Y = torch.stack([torch.ones_like(y, dtype=dtype), y.to(dtype)], 1)  # [ones, positive]
    scores = np.zeros((sigmas.size, lams.numel()))
    fold_idx = [
        (torch.as_tensor(tr, device=dev), torch.as_tensor(va, device=dev)) for tr, va in folds
    ]
    K = None
    for si, sigma in enumerate(sigmas):
        del K  # one kernel matrix on the device at a time (4,000,000 x 1,000: 32 GB)
        K = torch.exp(D * (-0.5 / sigma**2))
        for tr, va in fold_idx:
            Ktr = K[tr]
            m = tr.numel()
            s, V = torch.linalg.eigh(Ktr.T @ Ktr / m)
            R = V.T @ (Ktr.T @ Y[tr] / m)  # (b, 2)
            del Ktr
            A = V @ (R[:, None, :] / (s[:, None, None] + lams[None, :, None])).reshape(
                V.shape[0], -1
            )
            F = (K[va] @ A).reshape(va.numel(), lams.numel(), 2)
            F1 = F[..., 1]
            F0 = F[..., 0] - F1
            wrong = (F1.clamp_min(0) > F0.clamp_min(0)) != (y[va][:, None] == 1)
            scores[si] += wrong.to(torch.float64).mean(0).cpu().numpy() / len(folds)
    grid_s = np.repeat(sigmas, lams.numel())
    grid_l = np.tile(DEFAULT_LAMS, sigmas.size)
    best = best_index(scores.ravel(), "error", grid_s, grid_l)
    sigma, lam = grid_s[best], grid_l[best]
    del K
    K = torch.exp(D * (-0.5 / sigma**2))
    del D
    n = X.shape[0]
    H = K.T @ K / n + lam * torch.eye(K.shape[1], dtype=dtype, device=dev)
    alpha = torch.linalg.solve(H, K.T @ Y / n)
    Ft = torch.exp(torch_sq_dist(torch, Xt, C) * (-0.5 / sigma**2)) @ alpha
    F1 = Ft[:, 1].clamp_min(0)
    F0 = (Ft[:, 0] - Ft[:, 1]).clamp_min(0)
    Z = F0 + F1
    p1 = torch.where(Z > 0, F1 / torch.where(Z > 0, Z, torch.ones_like(Z)), torch.full_like(Z, 0.5))
    return sigma, lam, p1.cpu().numpy()


def torch_nystroem(torch, X, landmarks, sigma):
    """The Nystroem features of scikit-learn's ``Nystroem`` (``K_nm U S^-1/2 V^T`` from the
    SVD of ``K_mm``, singular values floored at 1e-12) with a last column of ones."""
    L = X[torch.as_tensor(landmarks, device=X.device)]

    def features(Z):
        Knm = torch.exp(torch_sq_dist(torch, Z, L) * (-0.5 / sigma**2))
        return torch.cat([Knm @ norm, torch.ones(Z.shape[0], 1, dtype=Z.dtype, device=Z.device)], 1)

    U, S, Vh = torch.linalg.svd(torch.exp(torch_sq_dist(torch, L, L) * (-0.5 / sigma**2)))
    norm = (U / torch.sqrt(S.clamp_min(1e-12))) @ Vh
    return features


def torch_newton(torch, Phi, y, lam, w0, tol=1e-6, max_iter=100):
    """Penalised logistic regression ``sum_i [y_i f_i - log(1 + e^f_i)] - lam/2 ||w||^2``
    by Newton's method with Cholesky steps and step halving, from ``w0``."""
    w = w0.clone()
    f = Phi @ w

    def objective(f, w):
        return float((y * f - torch.nn.functional.softplus(f)).sum() - 0.5 * lam * (w @ w))

    obj = objective(f, w)
    eye = torch.eye(w.numel(), dtype=Phi.dtype, device=Phi.device)
    steps = 0
    for _ in range(max_iter):
        p = torch.sigmoid(f)
        g = Phi.T @ (y - p) - lam * w
        H = (Phi * (p * (1 - p))[:, None]).T @ Phi + lam * eye
        step = torch.cholesky_solve(g[:, None], torch.linalg.cholesky(H))[:, 0]
        t = 1.0
        for _ in range(30):
            w_new = w + t * step
            f_new = Phi @ w_new
            new = objective(f_new, w_new)
            if new >= obj - 1e-12 * abs(obj):
                break
            t *= 0.5
        steps += 1
        change = abs(new - obj) / max(abs(new), 1e-300)
        w, f, obj = w_new, f_new, new
        if change <= tol:
            break
    return w, steps


def reference_klr(torch, X, y, Xt, landmarks, folds, dtype):
    """Nystroem kernel logistic regression's search: per width the features once, per
    fold the lambdas from large to small, each Newton run warm-started from the last;
    validation error, ties to the smoother model; then the refit.  Returns ``(sigma, lam,
    P1_test, newton_steps)``."""
    dev = X.device
    sigmas = torch_median_distance(torch, X) * DEFAULT_SIGMA_FACTORS
    yf = y.to(dtype)
    scores = np.zeros((sigmas.size, DEFAULT_LAMS.size))
    total_steps = 0
    fold_idx = [
        (torch.as_tensor(tr, device=dev), torch.as_tensor(va, device=dev)) for tr, va in folds
    ]
    for si, sigma in enumerate(sigmas):
        Phi = torch_nystroem(torch, X, landmarks, sigma)(X)
        for tr, va in fold_idx:
            w = torch.zeros(Phi.shape[1], dtype=dtype, device=dev)
            for li in np.argsort(-DEFAULT_LAMS):
                w, steps = torch_newton(torch, Phi[tr], yf[tr], float(DEFAULT_LAMS[li]), w)
                total_steps += steps
                wrong = ((Phi[va] @ w) > 0) != (y[va] == 1)
                scores[si, li] += float(wrong.to(torch.float64).mean()) / len(folds)
    grid_s = np.repeat(sigmas, DEFAULT_LAMS.size)
    grid_l = np.tile(DEFAULT_LAMS, sigmas.size)
    best = best_index(scores.ravel(), "error", grid_s, grid_l)
    sigma, lam = grid_s[best], grid_l[best]
    feat = torch_nystroem(torch, X, landmarks, sigma)
    w, steps = torch_newton(
        torch, feat(X), yf, lam, torch.zeros(len(landmarks) + 1, dtype=dtype, device=dev)
    )
    return sigma, lam, torch.sigmoid(feat(Xt) @ w).cpu().numpy(), total_steps + steps


# ---------------------------------------------------------------- kclf on a backend


def namespaces():
    """``{backend: (module, to_backend, sync)}`` of what is installed here, and lines that
    say what is not."""
    found, missing = {"numpy": (np, np.asarray, lambda: None)}, []
    try:
        import array_api_strict

        found["strict"] = (array_api_strict, array_api_strict.asarray, lambda: None)
    except ImportError:
        missing.append("array-api-strict is not installed: no strict run")
    try:
        import torch

        found["torch-cpu"] = (torch, lambda a: torch.as_tensor(a), lambda: None)
        if torch.cuda.is_available():
            found["torch"] = (
                torch,
                lambda a: torch.as_tensor(a, device="cuda"),
                torch.cuda.synchronize,
            )
        else:
            missing.append("PyTorch finds no GPU: no torch (GPU) run, no GPU reference")
    except ImportError:
        missing.append("PyTorch is not installed: no torch runs, no reference")
    try:
        import cupy

        found["cupy"] = (cupy, cupy.asarray, cupy.cuda.Device().synchronize)
    except Exception:  # ImportError, or CUDA missing under an installed CuPy
        missing.append("CuPy is not installed or finds no GPU: no cupy run")
    return found, missing


def estimator(method, n_centres, folds):
    """The search on the given folds; its centres (landmarks) drawn with seed 0."""
    if method == "lspc":
        return LSPCCV(cv=folds, n_basis=n_centres, random_state=0)
    return KernelLogisticRegressionCV(cv=folds, n_components=n_centres, random_state=0)


def host(P, backend):
    """The probabilities of a backend as a NumPy array in host memory."""
    if backend == "cupy":
        return P.get()
    if backend.startswith("torch"):
        return P.cpu().numpy()
    if backend == "strict":
        import array_api_strict

        return np.asarray(array_api_strict.asarray(P, device=array_api_strict.Device("CPU_DEVICE")))
    return np.asarray(P)


def run_kclf(method, backend, found, data, n_centres, dtype):
    X, y, Xt, yt = data
    module, to, sync = found[backend]
    Xb, yb, Xtb = to(X.astype(dtype)), to(y), to(Xt.astype(dtype))
    folds = folds_of(y)  # given to both, outside both timers
    sync()
    start = time.perf_counter()
    with sklearn.config_context(array_api_dispatch=backend != "numpy"):
        est = estimator(method, n_centres, folds).fit(Xb, yb)
        P = est.predict_proba(Xtb)
    sync()
    seconds = time.perf_counter() - start
    P = host(P, backend)
    sigma, lam = float(est.sigma_), float(est.lam_)
    del est, Xb, yb, Xtb
    release_memory(found)
    return seconds, sigma, lam, roc_auc_score(yt, P[:, 1])


def release_memory(found):
    """Free what the last run left on the device before the next one allocates (the
    fitted estimator's arrays, the allocators' caches)."""
    gc.collect()
    if "torch" in found:
        found["torch"][0].cuda.empty_cache()
    if "cupy" in found:
        found["cupy"][0].get_default_memory_pool().free_all_blocks()


def run_reference(method, found, data, n_centres, dtype, gpu):
    import torch

    X, y, Xt, yt = data
    dev = "cuda" if gpu else "cpu"
    tdtype = torch.float32 if dtype == np.float32 else torch.float64
    Xb = torch.as_tensor(X, dtype=tdtype, device=dev)
    Xtb = torch.as_tensor(Xt, dtype=tdtype, device=dev)
    yb = torch.as_tensor(y, device=dev)
    folds = folds_of(y)
    sync = torch.cuda.synchronize if gpu else (lambda: None)
    sync()
    start = time.perf_counter()
    if method == "lspc":
        # LSPC's random centres: a sorted uniform sample of the rows (kclf.LSPC, centers)
        centres = np.sort(np.random.RandomState(0).choice(X.shape[0], n_centres, replace=False))
        sigma, lam, p1 = reference_lspc(torch, Xb, yb, Xtb, centres, folds, tdtype)
    else:
        # scikit-learn's Nystroem landmarks: the first rows of a seeded permutation
        landmarks = np.random.RandomState(0).permutation(X.shape[0])[:n_centres]
        sigma, lam, p1, _ = reference_klr(torch, Xb, yb, Xtb, landmarks, folds, tdtype)
    sync()
    seconds = time.perf_counter() - start
    del Xb, Xtb, yb
    release_memory(found)
    return seconds, sigma, lam, roc_auc_score(yt, p1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", nargs="+", choices=("lspc", "klr"), default=["lspc", "klr"])
    parser.add_argument("--sizes", nargs="+", type=int, help="training rows (default: the issue's)")
    parser.add_argument("--backends", nargs="+", help="numpy strict torch torch-cpu cupy reference")
    parser.add_argument("--centres", type=int, default=1000)
    parser.add_argument("--float32", action="store_true", help="compute in float32")
    parser.add_argument(
        "--small", action="store_true", help="CI's size: 2,000 rows, 100 centres, CPU"
    )
    args = parser.parse_args(argv)
    found, missing = namespaces()
    for line in missing:
        print(line)
    gpu = "torch" in found
    if args.small:
        sizes = {m: args.sizes or [2000] for m in args.methods}
        n_centres = 100
        backends = args.backends or [b for b in ("numpy", "strict", "torch-cpu") if b in found]
        if not args.backends and "torch-cpu" in found:
            backends.append("reference")
    else:
        sizes = {"lspc": args.sizes or list(LSPC_SIZES), "klr": args.sizes or list(KLR_SIZES)}
        n_centres = args.centres
        backends = args.backends or [b for b in ("numpy", "torch", "cupy") if b in found]
        if not args.backends and "torch-cpu" in found:
            backends.append("reference")
    dtype = np.float32 if args.float32 else np.float64
    # a small fit per backend first: library loading, CUDA context and kernels' first
    # compilation are not the search's time
    warm = make_data(400)
    for method in args.methods:
        for backend in backends:
            if backend == "reference":
                run_reference(method, found, warm, 20, dtype, gpu and not args.small)
            elif backend in found and (
                backend == "numpy" or estimator(method, 2, 2).__sklearn_tags__().array_api_support
            ):
                run_kclf(method, backend, found, warm, 20, dtype)
    rows = []
    for method in args.methods:
        if not estimator(method, 2, 2).__sklearn_tags__().array_api_support:
            print(
                f"{method}: {type(estimator(method, 2, 2)).__name__} computes with NumPy only "
                "(no array API path yet): only its numpy and reference runs"
            )
        for n in sizes[method]:
            data = make_data(n)
            timings = {}
            for backend in backends:
                if backend == "reference":
                    res = run_reference(
                        method, found, data, n_centres, dtype, gpu and not args.small
                    )
                elif backend in found and (
                    backend == "numpy"
                    or estimator(method, 2, 2).__sklearn_tags__().array_api_support
                ):
                    res = run_kclf(method, backend, found, data, n_centres, dtype)
                else:
                    continue
                timings[backend] = res[0]
                rows.append((method, n, backend) + res)
                print(
                    f"{method:5s} {n:>9,d} rows  {backend:10s} {res[0]:9.2f} s  "
                    f"sigma {res[1]:.4g}  lam {res[2]:.4g}  test AUC {res[3]:.4f}",
                    flush=True,
                )
            if "reference" in timings:
                ratios = ", ".join(
                    f"{b} {t / timings['reference']:.2f}x"
                    for b, t in timings.items()
                    if b != "reference"
                )
                print(f"{method:5s} {n:>9,d} rows  time / plain PyTorch reference: {ratios}")
    return rows


def agree(rows):
    """Whether every kclf backend chose the width and lambda that NumPy chose, per method
    and size (float64: the same search in another order; a differing choice is an error)."""
    numpy_choice = {(r[0], r[1]): r[4:6] for r in rows if r[2] == "numpy"}
    ok = True
    for method, n, backend, _, sigma, lam, _ in rows:
        chosen = numpy_choice.get((method, n))
        if backend not in ("numpy", "reference") and chosen is not None:
            if not np.allclose((sigma, lam), chosen, rtol=1e-9):
                print(
                    f"{method} {n} rows: {backend} chose sigma {sigma:.4g} lam {lam:.4g}, "
                    f"numpy sigma {chosen[0]:.4g} lam {chosen[1]:.4g}"
                )
                ok = False
    return ok


if __name__ == "__main__":
    rows = main()
    sys.exit(0 if "--float32" in sys.argv or agree(rows) else 1)
