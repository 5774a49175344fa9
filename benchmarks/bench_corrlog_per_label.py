"""Does CorrLog's per-label penalty choice deliver what its CV promises?  A nested check on
the MULAN training sets alone (the test sets are not read), so that the per-label and the
shared model are compared on more held-out rows than one small test set has.  Prints a
table; not a test.

3 outer folds of each training set; on each, fitted on the other two with their own inner
3-fold CV: ``CorrLog()`` (the paper's shared penalty), ``CorrLog(penalty="per_label")``
with the labels' criterion on the second CV path (``--criteria``, its ``label_criterion``;
``auto``, the default, is the marginal's log-likelihood where the marginals are exact and
the conditional (11) beyond), and the per-label ``LogisticRegressionCV(cv=3, Cs=24)``
baseline of ``bench_corrlog.py``.  Scored on the outer fold, mean over the three:
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
from sklearn.model_selection import KFold

from kclf.corrlog import LABEL_CRITERIA, CorrLog
from kclf_workflow.datasets.mulan import load_arff_multilabel

ROOT = Path(__file__).resolve().parents[1]


def scores(model, X, Y):
    """``(Hamming on the marginals, subset accuracy of the MAP, summed CLL (11))``."""
    # Eq. (11) on the labels the model fits: log sigmoid(2 y_i (u_i + sum_j a_ij y_j)), y in +-1
    idx = np.flatnonzero(model.active_labels_)
    U = X @ model.coef_[idx].T + model.intercept_[idx]
    S = 2.0 * Y[:, idx] - 1.0
    cll = -float(
        np.logaddexp(0.0, -2.0 * S * (U + S @ model.couplings_[np.ix_(idx, idx)])).mean(0).sum()
    )
    hamming = float(np.mean(model.decode_labels(X, "marginal") != Y))
    subset = float(np.mean(np.all(model.decode_labels(X, "map") == Y, axis=1)))
    return hamming, subset, cll


def check(X, Y, criteria):
    """Each model's mean outer-fold ``(Hamming, subset, CLL)``."""
    models = {"LRCV": None, "shared": ("shared", None)}
    models.update({f"per_label {c}": ("per_label", c) for c in criteria})
    out = {name: [] for name in models}
    for train, test in KFold(3, shuffle=True, random_state=0).split(X):
        for name, spec in models.items():
            if spec is None:
                P = baseline(X[train], Y[train], X[test])[1]
                out[name].append(
                    (np.mean(P != Y[test]), np.mean(np.all(P == Y[test], axis=1)), np.nan)
                )
                continue
            model = CorrLog(penalty=spec[0], label_criterion=spec[1] or "auto")
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
