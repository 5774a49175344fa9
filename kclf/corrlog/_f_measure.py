"""The Bayes decision for the example-based F-measure (Dembczyński, Waegeman, Cheng and
Hüllermeier, "An exact algorithm for F-measure maximization", NIPS 2011: GFM).

For one instance with label vector ``y`` in ``{0, 1}^m`` drawn from ``P(y | x)``, the
expected F1 of a prediction ``h`` with ``|h| = k > 0`` labels is

    E[F(y, h)] = sum_{j in h} sum_{s=1}^{m} Delta[j, s] * 2 / (s + k),
    Delta[j, s] = P(y_j = 1, |y| = s),

and ``E[F(y, 0)] = P(y = 0)`` (``F(0, 0) = 1``, the ``zero_division=1`` convention of
:func:`kclf.metrics.multilabel_scores`).  For each ``k`` the best ``h`` holds the ``k``
labels of largest ``F[j, k] = sum_s Delta[j, s] 2 / (s + k)``; GFM takes the best ``k``.
So the ``m x m`` numbers ``Delta`` (and ``P(y = 0)``) are all the decision needs: exact
by enumerating the joint for small ``m``, estimated by Gibbs sampling beyond.

The joint is the CorrLog posterior (:mod:`kclf.corrlog.belief_propagation`), in ``{-1, +1}``:
``log P(y | x) = sum_i y_i u_i + sum_{i<j} a_ij y_i y_j - log Z(x)``.
"""

from __future__ import annotations

import numpy as np

from . import belief_propagation as bp

__all__ = ["f1_decision", "size_marginals_exact", "size_marginals_gibbs"]


def f1_decision(p_empty, delta):
    """GFM: the 0/1 label vectors of largest expected F1.

    Parameters
    ----------
    p_empty : ndarray of shape (n,)
        ``P(y = 0 | x)``.
    delta : ndarray of shape (n, m, m)
        ``delta[:, j, s - 1] = P(y_j = 1, |y| = s | x)``.

    Returns
    -------
    H : int ndarray of shape (n, m)
    expected_f1 : ndarray of shape (n,)
        The expected F1 of each decision.
    """
    delta = np.asarray(delta, dtype=float)
    n, m, _ = delta.shape
    s = np.arange(1, m + 1, dtype=float)
    W = 2.0 / (s[:, None] + s[None, :])  # W[s - 1, k - 1] = 2 / (s + k)
    F = delta @ W  # F[:, j, k - 1]
    order = np.argsort(-F, axis=1, kind="stable")
    top = np.take_along_axis(F, order, axis=1)  # labels by F[:, :, k - 1], largest first
    # value of the best h with k labels: the sum of the k largest F[:, j, k - 1]
    value = np.cumsum(top, axis=1)[:, np.arange(m), np.arange(m)]  # (n, k)
    best_k = np.argmax(value, axis=1) + 1
    best = value[np.arange(n), best_k - 1]
    empty = np.asarray(p_empty, dtype=float) >= best
    H = np.zeros((n, m), dtype=int)
    rows = np.flatnonzero(~empty)
    for r in rows:
        H[r, order[r, : best_k[r], best_k[r] - 1]] = 1
    return H, np.where(empty, p_empty, best)


def _tally(Y01, weights, m):
    """``P(y = 0)`` and ``Delta`` from label vectors ``Y01`` (rows, m) and their weights
    (n, rows): a weighted count of (label, size) pairs."""
    size = Y01.sum(axis=1).astype(int)
    onehot = np.zeros((len(Y01), m + 1))
    onehot[np.arange(len(Y01)), size] = 1.0
    # delta[:, j, s] = sum_r w[:, r] y[r, j] [|y_r| = s]
    delta = np.einsum("nr,rj,rs->njs", weights, Y01, onehot[:, 1:], optimize=True)
    return weights @ onehot[:, 0], delta


def size_marginals_exact(unary, coupling, chunk=256):
    """``P(y = 0 | x)`` (n,) and ``Delta`` (n, m, m) by enumerating all ``2^m`` label
    vectors (``m <= 16``)."""
    unary, coupling = bp._check(unary, coupling)
    m = unary.shape[1]
    configs = bp.all_label_vectors(m)
    Y01 = (configs > 0).astype(float)
    p0, deltas = [], []
    for start in range(0, len(unary), chunk):
        s = bp.scores(unary[start : start + chunk], coupling, configs)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        a, d = _tally(Y01, w, m)
        p0.append(a)
        deltas.append(d)
    if not p0:
        return np.empty(0), np.empty((0, m, m))
    return np.concatenate(p0), np.concatenate(deltas)


def size_marginals_gibbs(unary, coupling, n_sweeps=2000, burn_in=200, random_state=None):
    """``P(y = 0 | x)`` and ``Delta`` estimated by Gibbs sampling, all rows at once.

    One sweep visits every label in turn and draws ``y_i`` from
    ``P(y_i = +1 | y_-i, x) = sigmoid(2 (u_i + sum_j a_ij y_j))``; after ``burn_in``
    sweeps, the state after each of the ``n_sweeps`` sweeps is counted.  Each estimate
    is a mean of ``n_sweeps`` correlated 0/1 draws: its standard error is at most
    ``0.5 / sqrt(n_eff)`` with ``n_eff`` the effective number of draws.
    """
    unary, coupling = bp._check(unary, coupling)
    rng = np.random.default_rng(random_state)
    n, m = unary.shape
    Y = np.where(rng.random((n, m)) < 0.5, -1.0, 1.0)
    p0 = np.zeros(n)
    delta = np.zeros((n, m, m))
    rows = np.arange(n)
    for sweep in range(burn_in + n_sweeps):
        for i in range(m):
            field = unary[:, i] + Y @ coupling[:, i]
            p_up = 0.5 * (1.0 + np.tanh(field))  # sigmoid(2 field)
            Y[:, i] = np.where(rng.random(n) < p_up, 1.0, -1.0)
        if sweep >= burn_in:
            Y01 = Y > 0
            size = Y01.sum(axis=1)
            p0 += size == 0
            on = np.nonzero(Y01)
            delta[rows[on[0]], on[1], size[on[0]] - 1] += 1.0
    return p0 / n_sweeps, delta / n_sweeps
