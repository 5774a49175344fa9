"""
Pairwise coupling on digits, with reliability diagrams
======================================================

Roth's kLOGREG handles ``c`` classes with ``c (c - 1) / 2`` binary kernel logistic
regressions, one per pair of classes, whose pairwise probabilities
``r_ij = P(i | x, i or j)`` are *coupled* into one distribution over the classes
(Hastie & Tibshirani's method, Eq. 10-11 of the paper; :func:`kclf.couple`).  This
example fits pairwise-coupled KLR, one-vs-rest KLR and LSPC-new on scikit-learn's digits
and compares their probabilities with reliability diagrams: the top-label confidence
against the accuracy in each bin (:func:`kclf.metrics.reliability_curve`).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from kclf import LSPC, KernelLogisticRegression, PairwiseCoupling
from kclf.kernels import median_sigma
from kclf.metrics import probability_metrics, reliability_curve

X, y = load_digits(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(
    X / 16.0, y, train_size=600, test_size=600, random_state=0, stratify=y
)
sigma = median_sigma(X_tr)

models = {
    "KLR, pairwise coupling": PairwiseCoupling(KernelLogisticRegression(sigma, 1e-3)),
    "KLR, one-vs-rest": KernelLogisticRegression(sigma, 1e-3, multi_class="ovr"),
    "LSPC-new": LSPC(sigma, 1e-2),
}
curves = {}
for name, model in models.items():
    P = model.fit(X_tr, y_tr).predict_proba(X_te)
    scores = probability_metrics(y_te, P, labels=model.classes_)
    error = np.mean(model.classes_[P.argmax(axis=1)] != y_te)
    print(
        f"{name:24s} error {error:.3f}  "
        + "  ".join(f"{k} {v:.3f}" for k, v in scores.items() if isinstance(v, float))
    )
    curves[name] = reliability_curve(y_te, P, labels=model.classes_, n_bins=10)

# %%
# A well-calibrated model's points lie on the diagonal; points above it are
# under-confident (right more often than it says), below it over-confident.
fig, axes = plt.subplots(1, 3, figsize=(11, 3.8), sharey=True)
for ax, (name, curve) in zip(axes, curves.items()):
    ok = curve.count > 0
    ax.plot([0, 1], [0, 1], "k:", lw=1)
    ax.plot(curve.confidence[ok], curve.frequency[ok], "o-", color="C0")
    width = np.diff(curve.edges)
    ax.bar(
        curve.edges[:-1],
        curve.count / curve.count.sum(),
        width=width,
        align="edge",
        color="C7",
        alpha=0.3,
        label="share of predictions",
    )
    ax.set(title=name, xlabel="confidence (top-label probability)", xlim=(0, 1), ylim=(0, 1))
    ax.legend(loc="upper left", fontsize=7)
axes[0].set_ylabel("accuracy in the bin")
fig.tight_layout()
plt.show()
