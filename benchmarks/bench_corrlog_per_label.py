"""Does CorrLog's per-label penalty choice deliver what its CV promises?  A nested check on
the MULAN training sets alone (the test sets are not read), so that the per-label and the
shared model are compared on more held-out rows than one small test set has.  Prints a
table; not a test.

3 outer folds of each training set; on each, fitted on the other two with their own inner
3-fold CV: ``CorrLog()`` (the paper's shared penalty), ``CorrLog(penalty="per_label")``
with the labels' criterion on the second CV path (``--criteria``; ``auto``, the default,
is the marginal's log-likelihood where the marginals are exact and the conditional (11)
beyond, :mod:`kclf.corrlog._penalty_search`), and the per-label ``LogisticRegressionCV(cv=3,
Cs=24)`` baseline of ``bench_corrlog.py``.  Scored on the outer fold, mean over the three:
Hamming loss (CorrLog: thresholded marginals), subset accuracy (CorrLog: the joint MAP),
and the held-out conditional log-likelihood (11) summed over the labels, mean per row.

    .venv/bin/python benchmarks/bench_corrlog_per_label.py --sets scene CAL500
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from bench_corrlog import MULAN_SETS, baseline
from sklearn.utils import check_random_state

from kclf._folds import cv_splits
from kclf.corrlog import CorrLog
from kclf.corrlog._decoding import _conditional_log_likelihood
from kclf.corrlog._penalty_search import LABEL_CRITERIA
from kclf_workflow.datasets.mulan import load_arff_multilabel

ROOT = Path(__file__).resolve().parents[1]


def scores(model, X, Y):
    """``(Hamming on the marginals, subset accuracy of the MAP, summed CLL (11))``."""
    idx, U, A = model._active_unary(X)
    cll = float(_conditional_log_likelihood(U, A, Y[:, idx]).sum())
    hamming = float(np.mean(model.decode_labels(X, "marginal") != Y))
    subset = float(np.mean(np.all(model.decode_labels(X, "map") == Y, axis=1)))
    return hamming, subset, cll


def check(X, Y, criteria):
    """Each model's mean outer-fold ``(Hamming, subset, CLL)``."""
    models = {"LRCV": None, "shared": ("shared", None)}
    models.update({f"per_label {c}": ("per_label", c) for c in criteria})
    out = {name: [] for name in models}
    for train, test in cv_splits(3, X, Y, check_random_state(0)):
        for name, spec in models.items():
            if spec is None:
                P = baseline(X[train], Y[train], X[test])[1]
                out[name].append(
                    (np.mean(P != Y[test]), np.mean(np.all(P == Y[test], axis=1)), np.nan)
                )
                continue
            model = CorrLog(penalty=spec[0])
            if spec[1] is not None:
                model._per_label_criterion = spec[1]
            out[name].append(scores(model.fit(X[train], Y[train]), X[test], Y[test]))
    return {name: np.mean(v, axis=0) for name, v in out.items()}


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--sets", nargs="*", default=list(MULAN_SETS), choices=list(MULAN_SETS))
    ap.add_argument("--mulan", default=str(ROOT.parent / "shared" / "data" / "mulan"))
    ap.add_argument("--criteria", nargs="*", default=["auto"], choices=LABEL_CRITERIA)
    args = ap.parse_args()
    print(f"{'set':10}{'model':>24}{'Hamming (marg.)':>17}{'subset (MAP)':>14}{'CLL (11)':>11}")
    for name in args.sets:
        path = Path(args.mulan) / f"{name}-train.arff"
        if not path.is_file():
            print(f"{name:10} not in {args.mulan}, skipped")
            continue
        X, Y, _, _ = load_arff_multilabel(path, MULAN_SETS[name])
        X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = check(X, Y, args.criteria)
        for model, (hamming, subset, cll) in rows.items():
            print(f"{name:10}{model:>24}{hamming:>17.4f}{subset:>14.4f}{cll:>11.4f}")


if __name__ == "__main__":
    main()
