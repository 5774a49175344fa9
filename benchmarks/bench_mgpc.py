"""MGPC's EP (MEP) against the GP classifiers people use, in one process: accuracy, log
loss, ECE and fit + predict time of ``ManifoldGPC(inference="ep")`` with its defaults,
scikit-learn's ``GaussianProcessClassifier()`` and GPy's EP classifier.  Prints tables;
not a test.

Tasks: scikit-learn's 8x8 digits (pixels / 16), 3 vs 8 and 1 vs 7, three seeded half/half
stratified splits each; IDA banana and german, the original split of realisation 1 (from
the mirror's ``splits_asc``; skipped with a note when absent).  Every method is fitted on
the training part and scored on the test part; the time is the fit plus
``predict_proba`` of the test part.

GPy (``pip install GPy``, the optional extra ``kclf[bench]``) is the peer for speed: its
classifier is ``GPy.core.GP`` with an RBF kernel (GPy's default start: variance 1, length
scale 1), the Bernoulli (probit) likelihood and ``EP()``, hyper-parameters by its own
optimiser (``model.optimize()``), the workflow's
:class:`kclf.repro.experiments.mgpc.GPyEPClassifier`.  Without GPy its column is skipped
with a note.

``--ablation`` also prints MEP's variants (one setting changed from the defaults at a
time: number of centres, grids and how they are chosen, EP's tolerance, the
representation of the images, the k-means seeding) on the digits tasks.

    flock /tmp/kclf-heavy.lock python benchmarks/bench_mgpc.py [--ablation] [--threads 1]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from kclf.kernels import median_sigma, squared_distances
from kclf.metrics import expected_calibration_error, log_loss
from kclf.mgpc import DEFAULT_AMPLITUDES, ManifoldGPC
from kclf.repro.datasets import ida
from kclf.repro.experiments.mgpc import GPyEPClassifier, gpy_available

ROOT = Path(__file__).resolve().parents[1]
DIGIT_TASKS = ((3, 8), (1, 7))
SEEDS = (0, 1, 2)


def digits_splits(neg, pos, seeds=SEEDS):
    """``(name, X_train, y_train, X_test, y_test)`` of each seeded half/half split."""
    d = load_digits()
    keep = np.isin(d.target, (neg, pos))
    X, y = d.data[keep] / 16.0, (d.target[keep] == pos).astype(int)
    for s in seeds:
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, stratify=y, random_state=s)
        yield f"digits {neg}v{pos}", Xtr, ytr, Xte, yte


def ida_split(name, mirror):
    """The original IDA split of realisation 1 (labels 0/1), or None without the mirror."""
    split = ida.load_split_asc(name, mirror, 1)
    if split is None:
        return None
    Xtr, ytr, Xte, yte = split
    return f"IDA {name}", Xtr, (ytr > 0).astype(int), Xte, (yte > 0).astype(int)


def peers(with_gpy):
    out = {
        "MEP": lambda: ManifoldGPC(inference="ep"),
        "sklearn GPC": GaussianProcessClassifier,
    }
    if with_gpy:  # GPy's own defaults: RBF variance 1 and length scale 1 to start from
        out["GPy EP"] = lambda: GPyEPClassifier(length_scale=1.0, random_state=0)
    return out


def evaluate(make, Xtr, ytr, Xte, yte, keep=False):
    """Accuracy, log loss, ECE (10 equal-width bins) and fit + predict seconds."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        est = make().fit(Xtr, ytr)
        proba = est.predict_proba(Xte)
        secs = time.perf_counter() - t0
    labels = np.array([0, 1])
    extra = {"est": est} if keep else {}
    return extra | {
        "acc": 100.0 * np.mean((proba[:, 1] > 0.5) == (yte == 1)),
        "logloss": log_loss(yte, proba, labels=labels),
        "ece": expected_calibration_error(yte, proba, labels=labels),
        "secs": secs,
        "not_converged": sum(issubclass(w.category, ConvergenceWarning) for w in caught),
    }


def run(tasks, methods):
    """``{task: {method: [result per split]}}``."""
    out = {}
    for name, Xtr, ytr, Xte, yte in tasks:
        for m, make in methods.items():
            out.setdefault(name, {}).setdefault(m, []).append(evaluate(make, Xtr, ytr, Xte, yte))
    return out


def _mean(rows, key):
    return float(np.mean([r[key] for r in rows]))


def print_table(results, methods):
    names = list(methods)
    width = 14
    print(
        f"{'task':<16}{'splits':>7}  "
        + "".join(f"{'acc % ' + m:>{width + 8}}" for m in names)
        + "".join(f"{'logloss ' + m:>{width + 8}}" for m in names)
        + "".join(f"{'ECE ' + m:>{width + 4}}" for m in names)
        + "".join(f"{'s ' + m:>{width + 2}}" for m in names)
    )
    for task, per in results.items():
        n = len(per[names[0]])
        row = f"{task:<16}{n:>7}  "
        row += "".join(f"{_mean(per[m], 'acc'):>{width + 8}.2f}" for m in names)
        row += "".join(f"{_mean(per[m], 'logloss'):>{width + 8}.4f}" for m in names)
        row += "".join(f"{_mean(per[m], 'ece'):>{width + 4}.4f}" for m in names)
        row += "".join(f"{sum(r['secs'] for r in per[m]):>{width + 2}.2f}" for m in names)
        print(row)


def print_targets(results, methods):
    """The issue's targets per task: MEP accuracy >= sklearn's - 0.3 points, MEP log loss
    <= GPy EP's, MEP time <= GPy EP's (ratio MEP / GPy)."""
    print("\ntargets: acc(MEP) >= acc(sklearn) - 0.3; logloss(MEP) <= logloss(GPy EP);")
    print("         time(MEP) / time(GPy EP) <= 1   (time: fits + predictions of all splits)")
    has_gpy = "GPy EP" in methods
    tot = {m: 0.0 for m in methods}
    for task, per in results.items():
        acc = _mean(per["MEP"], "acc") - _mean(per["sklearn GPC"], "acc")
        secs = {m: sum(r["secs"] for r in per[m]) for m in methods}
        for m in methods:
            tot[m] += secs[m]
        line = f"{task:<16} acc MEP - sklearn {acc:+6.2f} [{'ok' if acc >= -0.3 else 'MISS'}]"
        line += f"   time MEP / sklearn {secs['MEP'] / secs['sklearn GPC']:6.2f}"
        if has_gpy:
            ll = _mean(per["MEP"], "logloss") - _mean(per["GPy EP"], "logloss")
            ratio = secs["MEP"] / secs["GPy EP"]
            line += f"   logloss MEP - GPy {ll:+.4f} [{'ok' if ll <= 0 else 'MISS'}]"
            line += f"   time MEP / GPy {ratio:5.2f} [{'ok' if ratio <= 1 else 'MISS'}]"
        print(line)
    warned = sum(r["not_converged"] for per in results.values() for r in per["MEP"])
    print(f"MEP fits that warned of non-convergence: {warned}")
    line = f"{'all tasks':<16} total seconds: " + ", ".join(f"{m} {s:.2f}" for m, s in tot.items())
    if has_gpy:
        line += f"; MEP / GPy EP {tot['MEP'] / tot['GPy EP']:.2f}"
    print(line)


# ------------------------------------------------------------------------------ ablation


def _gradient_field(X):
    """The paper's gradient-field representation of the 8 x 8 images."""
    from kclf.features.image_repr import represent

    return represent(X.reshape(-1, 8, 8), "gradient", (8, 8))


def _cv_search(**kw):
    """The covariance grid chosen by 3-fold CV log loss instead of the marginal likelihood."""
    from sklearn.model_selection import GridSearchCV

    grid = {
        "length_scale_factors": [(f,) for f in (0.25, 0.5, 1.0, 2.0, 4.0)],
        "amplitude": list(DEFAULT_AMPLITUDES),
    }
    return GridSearchCV(ManifoldGPC(**kw), grid, cv=3, scoring="neg_log_loss")


def ablation_variants():
    """name -> (factory of the estimator given the training inputs, input transform or
    None): one change from the defaults at a time."""
    ep = {"inference": "ep"}

    def med(X, factors):
        return tuple(median_sigma(X) * np.asarray(factors))

    old_amps = (1.0, 4.0, 16.0, 64.0)
    return {
        "defaults": (lambda X: ManifoldGPC(**ep), None),
        "previous defaults": (
            lambda X: ManifoldGPC(sigma=med(X, (1,)), amplitude=old_amps, **ep),
            None,
        ),
        "n_centers=10": (lambda X: ManifoldGPC(10, **ep), None),
        "n_centers=50": (lambda X: ManifoldGPC(50, **ep), None),
        "n_centers=100": (lambda X: ManifoldGPC(100, **ep), None),
        "n_centers=None (plain GP)": (lambda X: ManifoldGPC(None, **ep), None),
        "sigma = median": (lambda X: ManifoldGPC(sigma=med(X, (1,)), **ep), None),
        "sigma median x(.5,1,2,4)": (
            lambda X: ManifoldGPC(sigma=med(X, (0.5, 1, 2, 4)), **ep),
            None,
        ),
        "amplitudes 1..64": (lambda X: ManifoldGPC(amplitude=old_amps, **ep), None),
        "length scales x(1/8..8)": (
            lambda X: ManifoldGPC(length_scale_factors=tuple(2.0 ** np.arange(-3, 4)), **ep),
            None,
        ),
        "grid by 3-fold CV log loss": (lambda X: _cv_search(**ep), None),
        "search_tol=1e-8 (= tol)": (lambda X: ManifoldGPC(search_tol=1e-8, **ep), None),
        "search_tol=1e-2": (lambda X: ManifoldGPC(search_tol=1e-2, **ep), None),
        "tol=1e-4": (lambda X: ManifoldGPC(tol=1e-4, **ep), None),
        "tol=1e-12": (lambda X: ManifoldGPC(tol=1e-12, max_iter=1000, **ep), None),
        "k-means n_init=1": (lambda X: ManifoldGPC(n_init=1, **ep), None),
        "k-means seed 1": (lambda X: ManifoldGPC(random_state=1, **ep), None),
        "k-means seed 2": (lambda X: ManifoldGPC(random_state=2, **ep), None),
        "gradient-field images": (lambda X: ManifoldGPC(**ep), _gradient_field),
        "standardised pixels": (lambda X: ManifoldGPC(**ep), "standardize"),
    }


def _sequential_ep(K, y, max_iter=1000, tol=1e-8):
    """The previous implementation, for the EP profile: R&W Algorithm 3.5, sites one at a
    time with a rank-one (BLAS dger) update of the posterior covariance each, a fresh
    Cholesky factorisation after every sweep; stops when a sweep moves no site by more
    than tol (relative)."""
    from scipy.linalg import cholesky, solve_triangular
    from scipy.linalg.blas import dger
    from scipy.special import log_ndtr

    n = K.shape[0]
    tau, nu = np.zeros(n), np.zeros(n)
    Sigma, mu = np.array(K, order="F"), np.zeros(n)
    sweeps = 0
    while sweeps < max_iter:
        sweeps += 1
        tau_old, nu_old = tau.copy(), nu.copy()
        for i in range(n):
            s_ii = Sigma[i, i]
            tau_c = 1.0 / s_ii - tau[i]
            nu_c = mu[i] / s_ii - nu[i]
            m, v = nu_c / tau_c, 1.0 / tau_c
            z = y[i] * m / np.sqrt(1.0 + v)
            ratio = np.exp(-0.5 * z * z - 0.5 * np.log(2 * np.pi) - log_ndtr(z))
            m_hat = m + y[i] * v * ratio / np.sqrt(1.0 + v)
            v_hat = v - v * v * ratio * (z + ratio) / (1.0 + v)
            tau_new = max(1.0 / v_hat - tau_c, 0.0)
            d_tau, d_nu = tau_new - tau[i], m_hat / v_hat - nu_c - nu[i]
            tau[i], nu[i] = tau_new, nu[i] + d_nu
            col = Sigma[:, i].copy()
            c = d_tau / (1.0 + d_tau * s_ii)
            mu += (d_nu * (1.0 - c * s_ii) - c * mu[i]) * col
            Sigma = dger(-c, col, col, a=Sigma, overwrite_a=True)
        sS = np.sqrt(tau)
        L = cholesky(np.eye(n) + sS[:, None] * K * sS[None, :], lower=True)
        V = solve_triangular(L, sS[:, None] * K, lower=True)
        Sigma = np.asfortranarray(K - V.T @ V)
        mu = Sigma @ nu
        if np.abs(tau - tau_old).max() <= tol * max(1.0, np.abs(tau).max()) and np.abs(
            nu - nu_old
        ).max() <= tol * max(1.0, np.abs(nu).max()):
            break
    return tau, nu, sweeps


def run_ep_profile(tasks):
    """One EP run at the hyper-parameters the defaults choose (first split of each task):
    the previous sequential updates vs parallel updates without and with Anderson's
    extrapolation, and where a default fit's time goes."""
    from kclf.mgpc import ep_sites

    print("\nEP at the chosen hyper-parameters (tol 1e-8; first split of each task)")
    print(
        f"{'task':<16}{'n':>5}{'amp':>7}{'seq. sweeps':>13}{'s':>8}{'par. sweeps':>13}"
        f"{'s':>8}{'+Anderson':>11}{'s':>8}{'max |site diff|':>17}"
    )
    for name, Xtr, ytr, _, _ in tasks:
        est = ManifoldGPC(inference="ep").fit(Xtr, ytr)
        Z = est._map(Xtr)
        K = est.amplitude_ * np.exp(-0.5 * squared_distances(Z) / est.length_scale_**2)
        y = 2.0 * ytr - 1.0
        t0 = time.perf_counter()
        tau_s, nu_s, sw_s = _sequential_ep(K, y)
        t_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        plain = ep_sites(K, y, max_iter=5000, anderson_depth=0)
        t_p = time.perf_counter() - t0
        t0 = time.perf_counter()
        acc = ep_sites(K, y, max_iter=1000)
        t_a = time.perf_counter() - t0
        scale = max(1.0, np.abs(tau_s).max(), np.abs(nu_s).max())
        diff = max(np.abs(acc["tau"] - tau_s).max(), np.abs(acc["nu"] - nu_s).max()) / scale
        print(
            f"{name:<16}{len(y):>5}{est.amplitude_:>7g}{sw_s:>13}{t_s:>8.3f}"
            f"{plain['n_iter']:>13}{t_p:>8.3f}{acc['n_iter']:>11}{t_a:>8.3f}{diff:>17.1e}"
        )


def _chosen(est):
    est = getattr(est, "best_estimator_", est)
    return getattr(est, "amplitude_", np.nan), getattr(est, "length_scale_", np.nan)


def run_ablation(tasks, variants):
    print("\nablation (MEP, digits; acc %, log loss: mean over splits; s: fits + predictions;")
    print("amp: chosen amplitudes of the splits)")
    head = "".join(f"{t + ' acc':>11}{'logloss':>9}{'s':>7}{'amp':>16}" for t in ("3v8", "1v7"))
    print(f"{'variant':<28}{head}")
    for name, (make, transform) in variants.items():
        row = f"{name:<28}"
        for task in tasks:
            res, amps = [], []
            for _, Xtr, ytr, Xte, yte in task:
                if transform == "standardize":
                    mu, sd = Xtr.mean(0), Xtr.std(0)
                    sd[sd == 0] = 1.0
                    Xtr, Xte = (Xtr - mu) / sd, (Xte - mu) / sd
                elif transform is not None:
                    Xtr, Xte = transform(Xtr), transform(Xte)
                r = evaluate(lambda Xtr=Xtr, make=make: make(Xtr), Xtr, ytr, Xte, yte, keep=True)
                amps.append(_chosen(r.pop("est"))[0])
                res.append(r)
            row += (
                f"{_mean(res, 'acc'):>11.2f}{_mean(res, 'logloss'):>9.4f}"
                f"{sum(r['secs'] for r in res):>7.2f}{'/'.join(f'{a:g}' for a in amps):>16}"
            )
        print(row, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", default=str(ROOT.parent / "shared" / "data" / "ida"))
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    ap.add_argument("--no-ida", action="store_true", help="digits only")
    ap.add_argument("--no-gpy", action="store_true", help="skip GPy even if installed")
    ap.add_argument("--ablation", action="store_true", help="also print MEP's ablation")
    ap.add_argument("--ablation-only", action="store_true")
    ap.add_argument("--ep-profile", action="store_true", help="also time EP's iterations")
    args = ap.parse_args()
    with_gpy = gpy_available() and not args.no_gpy
    methods = peers(with_gpy)
    with threadpool_limits(args.threads):
        print(f"BLAS threads: {args.threads}; peers: {', '.join(methods)}")
        if not with_gpy:
            print("note: GPy is not installed (pip install GPy): its column is skipped")
        if not args.ablation_only:
            tasks = [s for neg, pos in DIGIT_TASKS for s in digits_splits(neg, pos)]
            if not args.no_ida:
                for name in ("banana", "german"):
                    split = ida_split(name, args.mirror)
                    if split is None:
                        print(f"note: IDA {name} split not found under {args.mirror}; skipped")
                    else:
                        tasks.append(split)
            results = run(tasks, methods)
            print_table(results, methods)
            print_targets(results, methods)
        if args.ep_profile:
            profile = [next(digits_splits(neg, pos)) for neg, pos in DIGIT_TASKS]
            profile += [t for t in (ida_split(d, args.mirror) for d in ("banana", "german")) if t]
            run_ep_profile(profile)
        if args.ablation or args.ablation_only:
            digit_tasks = [list(digits_splits(neg, pos)) for neg, pos in DIGIT_TASKS]
            run_ablation(digit_tasks, ablation_variants())


if __name__ == "__main__":
    main()
