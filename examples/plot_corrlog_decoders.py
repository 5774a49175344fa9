"""
CorrLog's decoders on scene: joint MAP vs thresholded marginals
===============================================================

The correlated logistic model (CorrLog) couples the labels of a multilabel problem,
``P(y | x) ~ exp(sum_i y_i beta_i^T x + sum_{i<j} alpha_ij y_i y_j)``, so a prediction can
be *decoded* two ways (:meth:`kclf.CorrLog.decode_labels`): the joint MAP label vector,
Eq. (21), which is the Bayes decision for subset accuracy (every label right), or each
label's marginal ``P(y_i = 1 | x)`` thresholded at 1/2, the Bayes decision for Hamming
loss (the fraction of wrong labels).  Independent
logistic regressions (ILR, ``couplings=False``) cannot use the labels' correlations.

The data are MULAN scene (6 labels: beach, sunset, fall foliage, field, mountain, urban)
when the project's data mirror holds ``mulan/scene-*.arff`` (``../shared/data`` beside the
repository, or the folder named by ``KCLF_MIRROR``); elsewhere a generated multilabel set
of the same shape stands in, so the example always runs.
"""

import os
from pathlib import Path

import matplotlib.pyplot as plt
from sklearn.datasets import make_multilabel_classification

from kclf import CorrLog
from kclf.metrics import multilabel_scores


def find_scene():
    here = Path(globals().get("__file__", "plot_corrlog_decoders.py")).resolve().parent
    roots = [os.environ.get("KCLF_MIRROR"), here.parent.parent / "shared" / "data"]
    for root in filter(None, roots):
        folder = Path(root) / "mulan"
        if (folder / "scene-train.arff").exists() and (folder / "scene-test.arff").exists():
            return folder
    return None


folder = find_scene()
if folder is not None:
    from kclf_workflow.datasets.mulan import load_scene

    data = load_scene(folder)
    X_tr, Y_tr, X_te, Y_te = data["X_train"], data["Y_train"], data["X_test"], data["Y_test"]
    source = "MULAN scene"
else:
    X, Y = make_multilabel_classification(
        n_samples=2400, n_features=60, n_classes=6, n_labels=2, random_state=0
    )
    X_tr, Y_tr, X_te, Y_te = X[:1200], Y[:1200], X[1200:], Y[1200:]
    source = "generated (scene not in the mirror)"
print(f"{source}: {len(X_tr)} training, {len(X_te)} test rows, {Y_tr.shape[1]} labels")

# %%
# One fit per model (fixed penalties, to keep the example fast; ``rho1=None`` /
# ``rho2=None`` choose them by cross-validation), then both decoders on the same fit.
# With 6 labels the MAP is found by enumerating all 64 label vectors
# (``inference="exact"``); ``"bp"`` (belief propagation) is the choice for many labels.
corrlog = CorrLog(rho1=1e-3, rho2=0.03, inference="exact").fit(X_tr, Y_tr)
ilr = CorrLog(rho1=1e-3, rho2=0.03, couplings=False, inference="exact").fit(X_tr, Y_tr)
rows = {
    "CorrLog, joint MAP": corrlog.decode_labels(X_te, decode="map"),
    "CorrLog, marginals": corrlog.decode_labels(X_te, decode="marginal"),
    "ILR": ilr.predict(X_te),
}
measures = ["subset_accuracy", "hamming_loss", "micro_f1", "example_f1"]
table = {name: multilabel_scores(Y_te, Y_hat) for name, Y_hat in rows.items()}
for name, scores in table.items():
    print(f"{name:20s} " + "  ".join(f"{m} {scores[m]:.3f}" for m in measures))

# %%
# The joint MAP is the decoder for subset accuracy, the marginals the one for Hamming
# loss; both beat independent logistic regressions where labels are correlated.
fig, axes = plt.subplots(1, len(measures), figsize=(12, 3.4))
colors = ["C0", "C1", "C7"]
for ax, measure in zip(axes, measures):
    values = [table[name][measure] for name in rows]
    ax.bar(range(len(rows)), values, color=colors)
    ax.set_xticks(range(len(rows)), ["MAP", "marginals", "ILR"])
    lo = min(values)
    ax.set_ylim(max(0.0, lo - 0.1 * (max(values) - lo + 0.05) - 0.05), None)
    ax.set_title(measure.replace("_", " "))
fig.suptitle(source, fontsize=10)
fig.tight_layout()
plt.show()
