"""Inference in fully connected binary pairwise models (Ising models with fields).

The CorrLog posterior (Li et al., Eq. (4)) for one instance is

    P(y | x) = exp( sum_i y_i u_i + sum_{i<j} a_ij y_i y_j ) / Z(x),   y in {-1, +1}^m,

with fields ``u_i = beta_i^T x`` and a symmetric coupling matrix ``a`` (zero diagonal).
This module gives, for many instances at once (``unary`` is ``(n, m)``):

* :func:`max_product` - loopy max-product belief propagation for the joint MAP, Eq. (21)
  (Sec. III-B: uniform initial messages, at most 50 iterations; optional damping);
* :func:`sum_product` - loopy sum-product belief propagation for the marginals;
* :func:`exact_map`, :func:`exact_marginals` - enumeration of all ``2^m`` label vectors,
  the oracle for small ``m``.

Messages between binary variables are kept as log-ratios ``mu_{i->j} = log m(+1) - log m(-1)``.
With ``h`` the log-ratio of everything node ``i`` receives except from ``j`` (field included,
``h = 2 u_i + sum_{k != j} mu_{k->i}``), the two updates have closed forms:

* max-product: ``mu_{i->j} = |h/2 + a_ij| - |h/2 - a_ij|``;
* sum-product: ``mu_{i->j} = log cosh(h/2 + a_ij) - log cosh(h/2 - a_ij)``.

All returned label vectors are in ``{-1, +1}``; ties in a max-marginal resolve to ``+1``.
"""

from __future__ import annotations

import itertools

import numpy as np

MAX_EXACT_LABELS = 16


def _check(unary, coupling):
    unary = np.atleast_2d(np.asarray(unary, dtype=float))
    coupling = np.asarray(coupling, dtype=float)
    m = unary.shape[1]
    if coupling.shape != (m, m):
        raise ValueError(f"coupling must be ({m}, {m}) for {m} labels, got {coupling.shape}")
    if not np.allclose(coupling, coupling.T):
        raise ValueError("coupling must be symmetric")
    coupling = coupling.copy()
    np.fill_diagonal(coupling, 0.0)
    return unary, coupling


def _log_cosh(z):
    # log cosh z = |z| + log(1 + exp(-2|z|)) - log 2, stable for large |z|
    a = np.abs(z)
    return a + np.log1p(np.exp(-2.0 * a)) - np.log(2.0)


def _loopy_bp(unary, coupling, update, max_iter, damping, tol):
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    unary, coupling = _check(unary, coupling)
    n, m = unary.shape
    mu = np.zeros((n, m, m))  # mu[:, i, j]: message i -> j; uniform start (log-ratio 0)
    field = 2.0 * unary
    n_iter, converged = 0, np.ones(n, dtype=bool)
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - n_iter is reported
        incoming = mu.sum(axis=1)  # incoming[:, i] = sum_k mu[:, k, i]
        h = (field + incoming)[:, :, None] - mu.transpose(0, 2, 1)
        new = update(0.5 * h, coupling[None, :, :])
        new[:, np.arange(m), np.arange(m)] = 0.0
        if damping:
            new = damping * mu + (1.0 - damping) * new
        converged = np.abs(new - mu).reshape(n, -1).max(axis=1, initial=0.0) <= tol
        mu = new
        if converged.all():
            break
    belief = field + mu.sum(axis=1)  # log P(+1) - log P(-1), up to the BP approximation
    return belief, n_iter, converged


def max_product(unary, coupling, max_iter=50, damping=0.0, tol=1e-9, return_info=False):
    """Joint MAP label vectors by loopy max-product belief propagation.

    Parameters
    ----------
    unary : array of shape (n, m)
        Fields ``u_i`` (one row per instance).
    coupling : array of shape (m, m)
        Symmetric couplings ``a_ij``; the diagonal is ignored.
    max_iter : int, default=50
        Early stop after this many synchronous (flooding) iterations, as in Sec. III-B.
    damping : float in [0, 1), default=0
        New message = ``damping * old + (1 - damping) * update``.
    tol : float, default=1e-9
        Converged when no message log-ratio moves by more than ``tol``.
    return_info : bool, default=False
        Also return ``(max_marginal_log_ratios, n_iter, converged)``, ``converged`` a
        boolean per instance (its messages moved by at most ``tol`` in the last sweep).

    Returns
    -------
    Y : int array of shape (n, m) in {-1, +1}
    """
    belief, n_iter, conv = _loopy_bp(
        unary, coupling, lambda h, a: np.abs(h + a) - np.abs(h - a), max_iter, damping, tol
    )
    Y = np.where(belief >= 0, 1, -1)
    return (Y, (belief, n_iter, conv)) if return_info else Y


def sum_product(unary, coupling, max_iter=50, damping=0.0, tol=1e-9, return_info=False):
    """Per-label marginals ``P(y_i = +1 | x)`` by loopy sum-product belief propagation.

    Same parameters as :func:`max_product`; exact on trees (and forests).

    Returns
    -------
    P : float array of shape (n, m)
    """
    belief, n_iter, conv = _loopy_bp(
        unary, coupling, lambda h, a: _log_cosh(h + a) - _log_cosh(h - a), max_iter, damping, tol
    )
    P = 0.5 * (1.0 + np.tanh(0.5 * belief))  # logistic(belief), stable
    return (P, (belief, n_iter, conv)) if return_info else P


def all_label_vectors(m):
    """The ``2^m`` vectors of ``{-1, +1}^m`` as rows, in lexicographic order (-1 first)."""
    if m > MAX_EXACT_LABELS:
        raise ValueError(f"exact enumeration is limited to m <= {MAX_EXACT_LABELS}, got m={m}")
    return np.array(list(itertools.product((-1, 1), repeat=m)), dtype=float).reshape(-1, m)


def scores(unary, coupling, Y):
    """Unnormalised log-probabilities ``y^T u + sum_{i<j} a_ij y_i y_j`` of rows ``Y``."""
    unary, coupling = _check(unary, coupling)
    Y = np.asarray(Y, dtype=float)
    pair = 0.5 * np.einsum("ki,ij,kj->k", Y, coupling, Y)
    return unary @ Y.T + pair[None, :]


def _exact(unary, coupling, chunk):
    unary, coupling = _check(unary, coupling)
    configs = all_label_vectors(unary.shape[1])
    for start in range(0, unary.shape[0], chunk):
        yield configs, scores(unary[start : start + chunk], coupling, configs)


def exact_map(unary, coupling, chunk=512):
    """Joint MAP by enumerating all ``2^m`` label vectors (first maximiser on ties)."""
    parts = [configs[np.argmax(s, axis=1)] for configs, s in _exact(unary, coupling, chunk)]
    m = np.atleast_2d(unary).shape[1]
    return np.concatenate(parts).astype(int) if parts else np.empty((0, m), dtype=int)


def exact_marginals(unary, coupling, chunk=512):
    """Marginals ``P(y_i = +1 | x)`` by enumerating all ``2^m`` label vectors."""
    parts = []
    for configs, s in _exact(unary, coupling, chunk):
        s = s - s.max(axis=1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=1, keepdims=True)
        parts.append(p @ (configs > 0))
    m = np.atleast_2d(unary).shape[1]
    return np.concatenate(parts) if parts else np.empty((0, m))
