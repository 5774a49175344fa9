"""Does CorrLog's per-label penalty choice deliver what its CV path promises?  A nested
check on the MULAN training sets alone (the test sets are not read).  Prints a table; not
a test.

On the first CV path a label's held-out conditional log-likelihood (11) at a setting comes
from a fit with every penalty at that setting, the couplings' included; the final
per-label model keeps the couplings at the shared choice.  The labels therefore choose on a
second path, with the couplings' penalty held at the shared choice and only the weights'
moving (:mod:`kclf._corrlog_search`).  For each set: the paths' promise (the labels' CV
scores summed, at the shared point, at each label's own best point on the first path and
on the second) against what the models get: 3 outer folds of the training set, on each the
per-label and the shared ``CorrLog`` fitted with their own inner 3-fold CV, scored by the
summed conditional log-likelihood (11) of the outer test fold, mean per row.

    .venv/bin/python benchmarks/bench_corrlog_per_label.py --sets scene CAL500
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state

from kclf._corrlog_decoding import _conditional_log_likelihood
from kclf._search import cv_splits
from kclf.corrlog import CorrLog
from kclf.repro.datasets.mulan import load_arff_multilabel

ROOT = Path(__file__).resolve().parents[1]
MULAN_SETS = {"scene": 6, "medical": 45, "CAL500": 174}


def held_out_cll(model, X, Y):
    """Summed over the labels, mean per row: the conditional log-likelihood (11)."""
    idx, U, A = model._active_unary(X)
    return float(_conditional_log_likelihood(U, A, Y[:, idx]).sum())


def check(X, Y):
    """``(promise_shared, promise_own_first, promise_own_second, nested_per_label,
    nested_shared)``."""
    full = CorrLog(penalty="per_label").fit(X, Y)
    res = full.cv_results_
    at = np.flatnonzero((res["rho1"] == full.rho1_) & (res["rho2"] == full.rho2_))[0]
    first = res["mean_label_score"][:, full.active_labels_]
    second = res["mean_label_score_shared_couplings"][:, full.active_labels_]
    promise = [float(first[at].sum())]
    promise += [float(np.max(np.round(s, 12), axis=0).sum()) for s in (first, second)]
    nested = {"per_label": [], "shared": []}
    for train, test in cv_splits(3, X, Y, check_random_state(0)):
        for penalty in nested:
            model = CorrLog(penalty=penalty).fit(X[train], Y[train])
            nested[penalty].append(held_out_cll(model, X[test], Y[test]))
    return (*promise, float(np.mean(nested["per_label"])), float(np.mean(nested["shared"])))


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--sets", nargs="*", default=list(MULAN_SETS), choices=list(MULAN_SETS))
    ap.add_argument("--mulan", default=str(ROOT.parent / "shared" / "data" / "mulan"))
    args = ap.parse_args()
    widths = (14, 14, 14, 11, 9)
    heads = ("path: shared", "path 1: own", "path 2: own", "per-label", "shared")
    print(f"{'set':10}" + "".join(f"{h:>{w}}" for h, w in zip(heads, widths)))
    for name in args.sets:
        path = Path(args.mulan) / f"{name}-train.arff"
        if not path.is_file():
            print(f"{name:10} not in {args.mulan}, skipped")
            continue
        X, Y, _, _ = load_arff_multilabel(path, MULAN_SETS[name])
        X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row = check(X, Y)
        print(f"{name:10}" + "".join(f"{v:>{w}.4f}" for v, w in zip(row, widths)))


if __name__ == "__main__":
    main()
