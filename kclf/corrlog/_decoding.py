"""CorrLog's decisions (Li et al., Sec. III-B, and the example-based F1's Bayes decision):
the joint MAP (21) by max-product belief propagation or enumeration, the marginals by
sum-product or enumeration, the F1 decision (GFM) from the joint's size marginals, and
the CV criteria that score them.  Labels in {0, 1}; fields ``U`` (n, m) and couplings
``A`` (m, m) as :mod:`kclf.corrlog.belief_propagation` takes them."""

from __future__ import annotations

import numpy as np

from .._validation import warn_convergence
from . import belief_propagation as bp
from ._f_measure import f1_decision, size_marginals_exact, size_marginals_gibbs

#: Up to this many labels, exact enumeration of the ``2^m`` label vectors.
MAX_EXACT_LABELS = 12
#: Up to this many labels, the F1 decision enumerates the joint; Gibbs sampling beyond.
MAX_EXACT_F1_LABELS = 16
#: Label vectors scored at once per chunk of rows by the F1 decision's enumeration.
F1_CHUNK_CONFIGS = 1 << 20
#: The decoders of :meth:`CorrLog.decode_labels` (and of ``decode``).
DECODERS = ("map", "marginal", "f1")
#: Belief propagation: rows that do not converge are run again with this damping.
BP_RETRY_DAMPING = 0.5
#: Warn when more than this fraction of the rows' belief propagation did not converge.
BP_WARN_FRACTION = 0.05


def _decode(U, A, decode, inference, bp_max_iter, bp_damping, gibbs=None):
    """0/1 labels (n, m) and the number of rows whose belief propagation did not converge.

    ``decode="map"``: the joint MAP (21), max-product BP or enumeration (``inference``);
    ``"marginal"``: the marginals of :func:`_marginals` thresholded at 1/2; ``"f1"``: the
    expected-F1 maximiser of :func:`_f1_labels` (``gibbs``: its sampler's settings).
    """
    if decode == "f1":
        return _f1_labels(U, A, **(gibbs or {})), 0
    if decode == "marginal":
        P, n_bad = _marginals(U, A, inference, bp_max_iter, bp_damping)
        return (P > 0.5).astype(int), n_bad
    if inference == "exact":
        return (bp.exact_map(U, A) > 0).astype(int), 0
    S, (_, _, conv) = bp.max_product(
        U,
        A,
        bp_max_iter,
        bp_damping,
        return_info=True,
        retry_damping=BP_RETRY_DAMPING,
        polish=True,
    )
    return (S > 0).astype(int), int(np.sum(~conv))


def _bp_rows(decode, inference, A, n):
    """How many of the ``n`` rows :func:`_decode` decodes by belief propagation: all of them
    for the MAP with ``inference="bp"`` and the marginals beyond :data:`MAX_EXACT_LABELS`
    labels, when there are couplings ``A``; none otherwise."""
    exact = decode == "f1" or inference == "exact"
    exact = exact or (decode == "marginal" and A.shape[0] <= MAX_EXACT_LABELS)
    return 0 if exact or not A.any() else n


def _warn_bp(n_bad, n, bp_max_iter):
    """A ``ConvergenceWarning`` (pointing at the caller's caller, the user's) when more
    than :data:`BP_WARN_FRACTION` of the ``n`` rows decoded by belief propagation did not
    converge, ``n_bad`` of them, after the damped retry."""
    if n and n_bad > BP_WARN_FRACTION * n:
        warn_convergence(
            f"belief propagation did not converge for {n_bad} of {n} rows "
            f"({100.0 * n_bad / n:.1f}%) in bp_max_iter={bp_max_iter} sweeps, "
            f"nor with damping {BP_RETRY_DAMPING}; their labels come from the last "
            "messages",
            stacklevel=3,
        )


def _marginals(U, A, inference, bp_max_iter, bp_damping):
    """``P(y_i = 1 | x)``: enumeration up to :data:`MAX_EXACT_LABELS` labels (or with
    ``inference="exact"``), sum-product BP beyond; and the non-converged BP row count."""
    if inference == "exact" or U.shape[1] <= MAX_EXACT_LABELS:
        return bp.exact_marginals(U, A), 0
    P, (_, _, conv) = bp.sum_product(
        U, A, bp_max_iter, bp_damping, return_info=True, retry_damping=BP_RETRY_DAMPING
    )
    return P, int(np.sum(~conv))


def _f1_labels(U, A, n_sweeps=2000, burn_in=200, seed=0):
    """The Bayes decision for the example-based F1 (GFM, :func:`._f_measure.f1_decision`)
    under the joint (4) with fields ``U`` and couplings ``A``.

    Its inputs ``P(y = 0 | x)`` and ``P(y_j = 1, |y| = s | x)`` are exact (enumeration of
    the ``2^m`` label vectors) up to :data:`MAX_EXACT_F1_LABELS` labels or without couplings
    (independent labels: the size distribution by convolution), and beyond estimated by
    Gibbs sampling from the model, ``n_sweeps`` sweeps after ``burn_in``, seeded by
    ``seed``.
    """
    n, m = U.shape
    if not A.any():
        p0, delta = _size_marginals_independent(U)
    elif m <= MAX_EXACT_F1_LABELS:
        chunk = max(1, F1_CHUNK_CONFIGS >> m)
        p0, delta = size_marginals_exact(U, A, chunk=chunk)
    else:
        p0, delta = size_marginals_gibbs(U, A, n_sweeps, burn_in, random_state=seed)
    return f1_decision(p0, delta)[0]


def _size_marginals_independent(U):
    """``P(y = 0)`` and ``P(y_j = 1, |y| = s)`` for independent labels with
    ``P(y_j = 1) = sigmoid(2 u_j)``: ``p_j`` times the probability that the other labels
    hold ``s - 1`` (the Poisson-binomial size distribution without label ``j``)."""
    n, m = U.shape
    P = 0.5 * (1.0 + np.tanh(U))  # sigmoid(2 u)
    delta = np.zeros((n, m, m))
    for j in range(m):
        dist = np.zeros((n, m))  # dist[:, s]: P(s of the other labels are on)
        dist[:, 0] = 1.0
        for i in range(m):
            if i != j:
                p = P[:, i : i + 1]
                dist[:, 1:] = dist[:, 1:] * (1.0 - p) + dist[:, :-1] * p
                dist[:, :1] *= 1.0 - p
        delta[:, j, :] = P[:, j : j + 1] * dist
    return np.prod(1.0 - P, axis=1), delta


#: A flip of the true label vector must gain more than this (in log-probability) to rule
#: it out as the MAP without decoding (:func:`_map_subset_accuracy`).
FLIP_GAIN_TOL = 1e-9


def _map_subset_accuracy(U, A, Y_true, rows_ok, inference, bp_max_iter, bp_damping, w=None):
    """The subset accuracy of the MAP decoding (:func:`_decode`, ``"map"``), decoding only
    the rows whose true label vector can be the decoded one (the rows weighted by ``w``).

    A row scores 1 only when the decoded vector is its true one ``y``. The decoded vectors
    are single-flip maxima of ``y^T u + sum_{i<j} a_ij y_i y_j``: the exact MAP is a
    global one, a converged max-product fixed point is a neighbourhood maximum (Weiss and
    Freeman, 2001), and non-converged rows are finished by local search. So a row whose
    ``y`` some single flip improves (by more than :data:`FLIP_GAIN_TOL`) scores 0 without
    decoding; on many-label sets (CAL500) that is nearly every row, and belief
    propagation runs only on the rest. ``rows_ok``: the rows whose constant labels are
    right (the others score 0).
    """
    S = 2.0 * Y_true - 1.0
    gain = -2.0 * S * (U + S @ A)  # log-probability gained by flipping each label
    cand = rows_ok & np.all(gain <= FLIP_GAIN_TOL, axis=1)
    if not cand.any():
        return 0.0
    pred = _decode(U[cand], A, "map", inference, bp_max_iter, bp_damping)[0]
    hit = np.all(pred == Y_true[cand], axis=1)
    if w is None:
        return float(np.sum(hit)) / len(U)
    return float(w[cand] @ hit) / float(w.sum())


def _conditional_log_likelihood(U, A, Y_true, w=None):
    """Each label's mean held-out log-likelihood given the other labels, Eq. (11):
    ``log sigmoid(2 y_i (u_i + sum_j a_ij y_j))``, the term of the pseudo-likelihood (12)
    that the label's weights control (the criterion of ``penalty="per_label"``); the mean
    weighted by ``w`` over the rows."""
    S = 2.0 * Y_true - 1.0
    return -np.average(np.logaddexp(0.0, -2.0 * S * (U + S @ A)), axis=0, weights=w)


def _example_f1(Y_true, Y_pred, w=None):
    """Mean example-based F1 (an empty truth and prediction score 1), weighted by ``w``."""
    both = np.sum(Y_true & Y_pred, axis=1)
    total = np.sum(Y_true, axis=1) + np.sum(Y_pred, axis=1)
    f1 = np.where(total == 0, 1.0, 2.0 * both / np.maximum(total, 1))
    return float(np.average(f1, weights=w))


def _score(Y_true, Y_pred, decode, w=None):
    """CV criterion: subset accuracy for the MAP, 1 - Hamming loss for the marginals,
    example-based F1 for the F1 decision; means over the rows weighted by ``w``."""
    if decode == "map":
        return float(np.average(np.all(Y_pred == Y_true, axis=1), weights=w))
    if decode == "f1":
        return _example_f1(Y_true.astype(int), Y_pred.astype(int), w)
    if w is None:
        return 1.0 - float(np.mean(Y_pred != Y_true))
    return 1.0 - float(np.average(np.mean(Y_pred != Y_true, axis=1), weights=w))
