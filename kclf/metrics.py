"""Quality of predicted probabilities: log loss, Brier score, calibration error, reliability.

The papers' tables report AUC or error only; these metrics say how good the
*probabilities* are.  Three kinds of output are accepted everywhere:

* **binary** -- ``y_true`` of shape (n,) with two labels and ``proba`` of shape (n,)
  (probability of ``labels[1]``, the greater label by default) or (n, 2);
* **multi-class** -- ``y_true`` of shape (n,) and ``proba`` of shape (n, K), columns in
  ``labels`` order (default: the sorted labels of ``y_true``, as ``classes_``);
* **multilabel** -- ``y_true`` an (n, L) 0/1 indicator and ``proba`` the (n, L) per-label
  probabilities of a 1; every label is scored as its own binary task, and the scalar
  functions return the mean over labels (macro average).

Reliability is measured on the probability of the positive class for binary (and
per-label) tasks, as :func:`sklearn.calibration.calibration_curve` does, and on the
top-label confidence ``max_k p_k`` against the accuracy of ``argmax_k p_k`` for
multi-class tasks (Guo et al. 2017).  The expected calibration error is

.. math:: \\mathrm{ECE} = \\sum_b \\frac{n_b}{n}\\,\\lvert \\bar y_b - \\bar p_b \\rvert,

over ``n_bins`` equal-width bins of [0, 1] (``strategy="uniform"``) or equal-mass bins
at the quantiles of the predictions (``strategy="quantile"``), with sklearn's bin
assignment.

Probabilities of exactly 0 or 1 (LSPC-new rounds negative estimates to 0) would make
the log loss infinite.  Before the log loss, probabilities are clipped to
``[eps, 1 - eps]`` (multi-class rows to ``[eps, 1]`` and renormalised) with
``eps = EPS = 1e-15`` unless given, and the number of clipped predictions is reported
(``n_clipped``: rows of a binary or multi-class output, entries of a multilabel one).
A prediction clipped at ``eps`` that turns out wrong costs ``-log(eps)`` (34.5 nats for
1e-15), so ``n_clipped`` says how much of a large log loss comes from such zeros.
The Brier score and the ECE use the unclipped probabilities.

The multilabel label-set measures (:func:`multilabel_scores`, ``Y`` (n, m) 0/1 indicator
matrices) are scikit-learn's where they exist: Hamming loss, subset (0/1) accuracy,
example-based precision / recall / F1 (``average="samples"``), micro and macro F1.
Example-based accuracy ``|y & y'| / |y | y'|`` is sklearn's ``jaccard_score(average="samples")``.
An example with no true and no predicted label counts as fully right (1) in the
example-based measures, the usual convention (``zero_division=1``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from sklearn import metrics as skm
from sklearn.metrics import brier_score_loss as _sk_brier
from sklearn.metrics import log_loss as _sk_log_loss

__all__ = [
    "EPS",
    "ReliabilityCurve",
    "brier_score",
    "calibration_by_task",
    "clip_probabilities",
    "expected_calibration_error",
    "log_loss",
    "probability_metrics",
    "reliability_curve",
    "MULTILABEL_METRICS",
    "multilabel_scores",
]

#: Default clipping of probabilities before the log loss (sklearn's default before 1.5).
EPS = 1e-15

_TOL = 1e-6  # tolerated round-off in probabilities (range and row sums)


class ReliabilityCurve(NamedTuple):
    """Per-bin summary of a reliability diagram (arrays of length ``n_bins``).

    ``count`` is the number of predictions in the bin, ``confidence`` their mean
    predicted probability and ``frequency`` the fraction that came true (both NaN for
    an empty bin); ``edges`` has ``n_bins + 1`` entries.
    """

    edges: np.ndarray
    count: np.ndarray
    confidence: np.ndarray
    frequency: np.ndarray


class _Prepared(NamedTuple):
    kind: str  # "binary", "multiclass" or "multilabel"
    y: np.ndarray  # binary: (n,) 0/1; multiclass: (n,) column index; multilabel: (n, L) 0/1
    proba: np.ndarray  # binary: (n,) P(labels[1]); multiclass (n, K); multilabel (n, L)
    labels: np.ndarray | None


def _prepare(y_true, proba, labels=None):
    y_true = np.asarray(y_true)
    proba = np.asarray(proba, dtype=float)
    if y_true.ndim not in (1, 2) or y_true.shape[0] == 0:
        raise ValueError(f"y_true must be a non-empty 1-d or 2-d array, got shape {y_true.shape}")
    if proba.shape[0] != y_true.shape[0]:
        raise ValueError(
            f"y_true and proba have different numbers of samples: "
            f"{y_true.shape[0]} and {proba.shape[0]}"
        )
    if not np.all(np.isfinite(proba)):
        raise ValueError("proba contains NaN or infinite values")
    if proba.min() < -_TOL or proba.max() > 1 + _TOL:
        raise ValueError(
            f"proba must lie in [0, 1], got values in [{proba.min():.3g}, {proba.max():.3g}]"
        )
    proba = np.clip(proba, 0.0, 1.0)

    if y_true.ndim == 2:
        if proba.shape != y_true.shape:
            raise ValueError(
                f"multilabel y_true of shape {y_true.shape} needs proba of the same shape, "
                f"got {proba.shape}"
            )
        if not np.isin(y_true, (0, 1)).all():
            raise ValueError("multilabel y_true must be a 0/1 indicator matrix")
        return _Prepared("multilabel", y_true.astype(int), proba, None)

    labels = np.unique(y_true) if labels is None else np.asarray(labels)
    if len(np.unique(labels)) != len(labels):
        raise ValueError(f"labels must be distinct, got {labels.tolist()}")
    unknown = ~np.isin(y_true, labels)
    if unknown.any():
        raise ValueError(f"y_true has labels not in labels: {np.unique(y_true[unknown]).tolist()}")
    if proba.ndim == 1 or (proba.ndim == 2 and proba.shape[1] == 2):
        if len(labels) != 2:
            raise ValueError(
                f"binary proba needs exactly two labels, got {labels.tolist()}: "
                "pass labels= when y_true holds one class only"
            )
        if proba.ndim == 2:
            _check_rows(proba)
            proba = proba[:, 1]
        return _Prepared("binary", (y_true == labels[1]).astype(int), proba, labels)
    if proba.ndim != 2:
        raise ValueError(f"proba must be 1-d or 2-d, got shape {proba.shape}")
    if proba.shape[1] != len(labels):
        raise ValueError(
            f"proba has {proba.shape[1]} columns but there are {len(labels)} labels "
            f"{labels.tolist()}: pass labels= in the order of the columns"
        )
    _check_rows(proba)
    order = np.argsort(labels, kind="stable")
    column = order[np.searchsorted(labels[order], y_true)]
    return _Prepared("multiclass", column, proba, labels)


def _check_rows(proba):
    sums = proba.sum(axis=1)
    if np.abs(sums - 1).max() > _TOL:
        raise ValueError(f"proba rows must sum to 1, found sums up to {sums.max():.6g}")


def _check_eps(eps):
    if not (0 < eps < 0.5):
        raise ValueError(f"eps must lie in (0, 0.5), got {eps!r}")


def clip_probabilities(proba, eps=EPS):
    """Clip probabilities away from 0 and 1 for the log loss.

    Parameters
    ----------
    proba : array of shape (n,) or (n, K)
        Probabilities of the positive class (1-d) or rows of class probabilities (2-d).
    eps : float, default=EPS
        1-d values are clipped to ``[eps, 1 - eps]``; 2-d rows to ``[eps, 1]`` and then
        divided by their sum.

    Returns
    -------
    clipped : ndarray
        The clipped probabilities.
    n_clipped : int
        Number of values (1-d) or rows (2-d) that were changed.
    """
    _check_eps(eps)
    proba = np.asarray(proba, dtype=float)
    if proba.ndim == 1:
        out = np.clip(proba, eps, 1 - eps)
        return out, int(np.count_nonzero(out != proba))
    if proba.ndim != 2:
        raise ValueError(f"proba must be 1-d or 2-d, got shape {proba.shape}")
    low = proba < eps
    out = np.where(low, eps, proba)
    out = out / out.sum(axis=1, keepdims=True)
    return out, int(np.count_nonzero(low.any(axis=1)))


def _binary_log_loss(y, p, eps):
    p, n_clipped = clip_probabilities(p, eps)
    return _sk_log_loss(y, y_proba=np.column_stack([1 - p, p]), labels=[0, 1]), n_clipped


def _log_loss(prep, eps):
    if prep.kind == "binary":
        return _binary_log_loss(prep.y, prep.proba, eps)
    if prep.kind == "multiclass":
        p, n_clipped = clip_probabilities(prep.proba, eps)
        k = p.shape[1]
        return _sk_log_loss(prep.y, y_proba=p, labels=np.arange(k)), n_clipped
    per = [_binary_log_loss(prep.y[:, j], prep.proba[:, j], eps) for j in range(prep.y.shape[1])]
    return float(np.mean([v for v, _ in per])), int(sum(c for _, c in per))


def log_loss(y_true, proba, *, labels=None, eps=EPS, return_n_clipped=False):
    """Mean negative log-likelihood of the true labels (natural log).

    ``-mean_i log p_i(y_i)`` after :func:`clip_probabilities`; computed by
    :func:`sklearn.metrics.log_loss`.  Multilabel: mean over labels of the per-label
    binary log loss.

    Parameters
    ----------
    y_true, proba, labels
        See the module docstring.
    eps : float, default=EPS
        Clipping of probabilities (0 < eps < 0.5).
    return_n_clipped : bool, default=False
        Also return the number of clipped predictions.

    Returns
    -------
    loss : float
    n_clipped : int
        Only when ``return_n_clipped``.
    """
    _check_eps(eps)
    loss, n_clipped = _log_loss(_prepare(y_true, proba, labels), eps)
    loss = float(loss)
    return (loss, n_clipped) if return_n_clipped else loss


def _brier(prep):
    if prep.kind == "binary":
        return _sk_brier(prep.y, prep.proba, pos_label=1)
    if prep.kind == "multiclass":
        k = prep.proba.shape[1]
        return _sk_brier(prep.y, prep.proba, labels=np.arange(k), scale_by_half=False)
    return float(
        np.mean([np.mean((prep.proba[:, j] - prep.y[:, j]) ** 2) for j in range(prep.y.shape[1])])
    )


def brier_score(y_true, proba, *, labels=None):
    """Brier score: mean squared distance between probabilities and the 0/1 outcome.

    Binary (and per label): ``mean_i (p_i - y_i)^2`` in [0, 1].  Multi-class: Brier's
    original ``mean_i sum_k (p_ik - [y_i = k])^2`` in [0, 2].  Computed by
    :func:`sklearn.metrics.brier_score_loss`.
    """
    return float(_brier(_prepare(y_true, proba, labels)))


def _bin_edges(confidence, n_bins, strategy):
    if not (isinstance(n_bins, (int, np.integer)) and n_bins >= 1):
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    if strategy == "quantile":
        return np.percentile(confidence, np.linspace(0, 100, n_bins + 1))
    raise ValueError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")


def _curve(confidence, hit, n_bins, strategy):
    edges = _bin_edges(confidence, n_bins, strategy)
    ids = np.searchsorted(edges[1:-1], confidence)  # sklearn's calibration_curve binning
    count = np.bincount(ids, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.bincount(ids, weights=confidence, minlength=n_bins) / count
        freq = np.bincount(ids, weights=hit, minlength=n_bins) / count
    return ReliabilityCurve(edges, count, conf, freq)


def _confidence_and_hit(prep):
    if prep.kind == "binary":
        return [(prep.proba, prep.y.astype(float))]
    if prep.kind == "multiclass":
        top = prep.proba.argmax(axis=1)
        return [(prep.proba.max(axis=1), (top == prep.y).astype(float))]
    return [(prep.proba[:, j], prep.y[:, j].astype(float)) for j in range(prep.y.shape[1])]


def _ece(curve):
    filled = curve.count > 0
    w = curve.count[filled] / curve.count.sum()
    return float(np.sum(w * np.abs(curve.frequency[filled] - curve.confidence[filled])))


def reliability_curve(y_true, proba, *, labels=None, n_bins=10, strategy="uniform"):
    """Reliability diagram data: per bin, count, mean confidence and observed frequency.

    For multilabel input, one :class:`ReliabilityCurve` per label (a list); otherwise a
    single one.  Non-empty bins agree with :func:`sklearn.calibration.calibration_curve`
    (``prob_pred`` = ``confidence``, ``prob_true`` = ``frequency``) for binary input.
    """
    prep = _prepare(y_true, proba, labels)
    curves = [_curve(c, h, n_bins, strategy) for c, h in _confidence_and_hit(prep)]
    return curves if prep.kind == "multilabel" else curves[0]


def expected_calibration_error(y_true, proba, *, labels=None, n_bins=10, strategy="uniform"):
    """Expected calibration error over ``n_bins`` equal-width or equal-mass bins.

    ``sum_b n_b / n * |frequency_b - confidence_b|`` (module docstring); multilabel:
    mean over labels.
    """
    prep = _prepare(y_true, proba, labels)
    return float(
        np.mean([_ece(_curve(c, h, n_bins, strategy)) for c, h in _confidence_and_hit(prep)])
    )


def probability_metrics(y_true, proba, *, labels=None, n_bins=10, eps=EPS):
    """All scalar metrics at once.

    Returns
    -------
    dict
        ``log_loss``, ``brier``, ``ece`` (equal-width bins), ``ece_mass`` (equal-mass
        bins), ``n_clipped`` and ``n`` (number of predictions scored).
    """
    _check_eps(eps)
    prep = _prepare(y_true, proba, labels)
    pairs = _confidence_and_hit(prep)
    loss, n_clipped = _log_loss(prep, eps)
    return {
        "log_loss": float(loss),
        "brier": float(_brier(prep)),
        "ece": float(np.mean([_ece(_curve(c, h, n_bins, "uniform")) for c, h in pairs])),
        "ece_mass": float(np.mean([_ece(_curve(c, h, n_bins, "quantile")) for c, h in pairs])),
        "n_clipped": n_clipped,
        "n": int(prep.y.size),
    }


def _bin_metric(kind, b, n_bins):
    width = max(2, len(str(n_bins - 1)))
    return f"rel_{kind}_b{b:0{width}d}"


def calibration_by_task(y_true, proba, *, task, labels=None, n_bins=10, eps=EPS):
    """The probability metrics of one fit, per task, with the reliability bins.

    Metrics per task: ``log_loss``, ``brier``, ``ece``, ``ece_mass``, ``n_clipped``,
    ``n_scored`` and, for each of the ``n_bins`` equal-width bins ``bXX`` (``b00`` ..),
    ``rel_count_bXX``, ``rel_conf_bXX`` and ``rel_pos_bXX`` (count, mean confidence and
    observed frequency; the last two NaN when the bin is empty), so that reliability
    diagrams can be pooled over tasks and trials afterwards.

    Parameters
    ----------
    y_true, proba, labels
        See the module docstring.
    task : str or sequence of str
        The task's name; for multilabel input one name per label (column).
    n_bins : int, default=10
    eps : float, default=EPS

    Returns
    -------
    list of (str, dict)
        ``(task name, {metric: value})`` per task, metrics in the order above.
    """
    _check_eps(eps)
    prep = _prepare(y_true, proba, labels)
    if prep.kind == "multilabel":
        n_labels = prep.y.shape[1]
        if isinstance(task, str) or len(task) != n_labels:
            raise ValueError(f"multilabel input with {n_labels} labels needs {n_labels} task names")
        parts = [
            (str(name), _Prepared("binary", prep.y[:, j], prep.proba[:, j], None))
            for j, name in enumerate(task)
        ]
    else:
        if not isinstance(task, str):
            raise ValueError(f"task must be a string for {prep.kind} input, got {task!r}")
        parts = [(task, prep)]

    out = []
    for name, part in parts:
        ((confidence, hit),) = _confidence_and_hit(part)
        loss, n_clipped = _log_loss(part, eps)
        curve = _curve(confidence, hit, n_bins, "uniform")
        values = {
            "log_loss": loss,
            "brier": _brier(part),
            "ece": _ece(curve),
            "ece_mass": _ece(_curve(confidence, hit, n_bins, "quantile")),
            "n_clipped": n_clipped,
            "n_scored": part.y.size,
        }
        for b in range(n_bins):
            values[_bin_metric("count", b, n_bins)] = curve.count[b]
            values[_bin_metric("conf", b, n_bins)] = curve.confidence[b]
            values[_bin_metric("pos", b, n_bins)] = curve.frequency[b]
        out.append((name, values))
    return out


# --- multilabel label-set measures ------------------------------------------------------------
#: metric name -> True when higher is better
MULTILABEL_METRICS = {
    "hamming_loss": False,
    "subset_accuracy": True,
    "example_accuracy": True,
    "example_precision": True,
    "example_recall": True,
    "example_f1": True,
    "micro_f1": True,
    "macro_f1": True,
}


def _check_indicators(Y_true, Y_pred):
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
    """All measures of :data:`MULTILABEL_METRICS` as a dict of floats."""
    Y_true, Y_pred = _check_indicators(Y_true, Y_pred)
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
