"""Multilabel evaluation measures (Y are (n, m) 0/1 indicator matrices).

scikit-learn's implementations where they exist: Hamming loss, subset (0/1) accuracy,
example-based precision / recall / F1 (``average="samples"``), micro and macro F1.
Example-based accuracy |y & y'| / |y | y'| is sklearn's ``jaccard_score(average="samples")``.
An example with no true and no predicted label counts as fully right (1) in the
example-based measures, the usual convention (``zero_division=1``).
"""

from __future__ import annotations

import numpy as np
from sklearn import metrics as skm

#: metric name -> True when higher is better
METRICS = {
    "hamming_loss": False,
    "subset_accuracy": True,
    "example_accuracy": True,
    "example_precision": True,
    "example_recall": True,
    "example_f1": True,
    "micro_f1": True,
    "macro_f1": True,
}


def _check(Y_true, Y_pred):
    Y_true, Y_pred = np.asarray(Y_true), np.asarray(Y_pred)
    if Y_true.ndim != 2 or Y_true.shape != Y_pred.shape:
        raise ValueError(
            f"Y_true and Y_pred must be (n, m) matrices of one shape, got "
            f"{Y_true.shape} and {Y_pred.shape}"
        )
    for name, Y in (("Y_true", Y_true), ("Y_pred", Y_pred)):
        if not np.all((Y == 0) | (Y == 1)):
            raise ValueError(f"{name} must contain only 0 and 1")
    return Y_true.astype(int), Y_pred.astype(int)


def multilabel_scores(Y_true, Y_pred):
    """All measures of :data:`METRICS` as a dict of floats."""
    Y_true, Y_pred = _check(Y_true, Y_pred)
    kw = {"zero_division": 1}
    return {
        "hamming_loss": float(skm.hamming_loss(Y_true, Y_pred)),
        "subset_accuracy": float(skm.accuracy_score(Y_true, Y_pred)),
        "example_accuracy": float(skm.jaccard_score(Y_true, Y_pred, average="samples", **kw)),
        "example_precision": float(skm.precision_score(Y_true, Y_pred, average="samples", **kw)),
        "example_recall": float(skm.recall_score(Y_true, Y_pred, average="samples", **kw)),
        "example_f1": float(skm.f1_score(Y_true, Y_pred, average="samples", **kw)),
        "micro_f1": float(skm.f1_score(Y_true, Y_pred, average="micro", **kw)),
        "macro_f1": float(skm.f1_score(Y_true, Y_pred, average="macro", **kw)),
    }
