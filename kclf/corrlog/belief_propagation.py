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

Both vanish when ``a_ij = 0``, so only the pairs with a non-zero coupling (the edges of the
model's graph; the elastic net makes many couplings exactly zero) carry messages. The
messages of all rows are arrays ``(rows, directed edges)`` (or ``(rows, m, m)`` when most
pairs are coupled) updated together (synchronous "flooding" schedule); a row whose
messages moved by at most ``tol`` in a sweep has reached a fixed point and leaves the loop,
the others go on. Rows that have not converged after ``max_iter`` sweeps can be run again
from uniform messages with damping (``retry_damping``); max-product can finish them by
local search from the decisions of the last sweeps (``polish``): undamped flooding on
frustrated loops typically flips with period two, and its answer would otherwise depend on
the parity of ``max_iter``.

All returned label vectors are in ``{-1, +1}``; ties in a max-marginal resolve to ``+1``.
"""

from __future__ import annotations

import itertools

import numpy as np

MAX_EXACT_LABELS = 16
#: Messages per block of rows (rows x directed edges) kept in memory at once.
BLOCK_MESSAGES = 1 << 21
#: From this fraction of coupled pairs on, messages are kept as dense m x m arrays.
DENSE_FRACTION = 0.5


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


def _max_update(h, graph):
    """``|h/2 + a| - |h/2 - a| = sign(a) clip(h, -2|a|, 2|a|)``, in place on ``h``."""
    np.clip(h, -graph.bound, graph.bound, out=h)
    h *= graph.sign
    return h


def _sum_update(h, graph):
    """``log cosh(h/2 + a) - log cosh(h/2 - a) = 2 atanh(tanh(h/2) tanh(a))``.

    The product form costs one exp and one log per message; where ``|tanh(h/2) tanh(a)|``
    is within 1e-4 of 1 (strong couplings and fields) its rounding error would exceed
    1e-12, and those few messages take the log-cosh form.
    """
    with np.errstate(over="ignore"):
        p = np.exp(h)
    p += 1.0
    np.divide(-2.0, p, out=p)
    p += 1.0  # tanh(h / 2), saturating to +-1
    p *= graph.tanh
    out = np.log((1.0 + p) / (1.0 - p))
    close = np.abs(p) > 1.0 - 1e-4
    if close.any():
        x, a = 0.5 * h[close], np.broadcast_to(graph.a, h.shape)[close]
        out[close] = np.logaddexp(x + a, -x - a) - np.logaddexp(x - a, a - x)
    return out


class _Graph:
    """The messages of one row as a flat vector, and one flooding sweep over many rows.

    Sparse couplings: the directed edges ``src -> dst`` of the non-zero couplings, grouped
    by ``dst``. Dense ones (at least :data:`DENSE_FRACTION` of the pairs coupled): all
    ``m x m`` messages, ``mu[i, j]`` from ``i`` to ``j`` (a zero coupling's message stays
    0), which trades the gathers for a transpose and is faster there.
    """

    def __init__(self, coupling):
        m = coupling.shape[0]
        dst, src = np.nonzero(coupling)  # row-major: sorted by dst
        self.m = m
        self.dense = src.size >= DENSE_FRACTION * m * (m - 1) and src.size > 0
        if self.dense:
            self.size, self.a = m * m, coupling[None, :, :]
        else:
            self.src, self.size = src, src.size
            self.a = coupling[dst, src]
            pos = {(int(s), int(t)): e for e, (s, t) in enumerate(zip(src, dst))}
            self.rev = np.array([pos[(int(t), int(s))] for s, t in zip(src, dst)], dtype=np.intp)
            self.nodes = np.unique(dst)  # nodes with at least one neighbour
            self.starts = np.searchsorted(dst, self.nodes)
        self.bound, self.sign, self.tanh = 2.0 * np.abs(self.a), np.sign(self.a), np.tanh(self.a)

    def incoming(self, mu):
        """``(rows, m)``: the sum of the messages into each node."""
        if self.dense:
            return mu.reshape(-1, self.m, self.m).sum(axis=1)
        out = np.zeros((mu.shape[0], self.m))
        if self.nodes.size:
            out[:, self.nodes] = np.add.reduceat(mu, self.starts, axis=1)
        return out

    def sweep(self, field, mu, update):
        """New messages from ``h = field_i + sum of incoming - the reverse message``."""
        if self.dense:
            M = mu.reshape(-1, self.m, self.m)
            h = (field + M.sum(axis=1))[:, :, None] - M.transpose(0, 2, 1)
            return update(h, self).reshape(mu.shape)
        h = (field + self.incoming(mu))[:, self.src]
        h -= mu[:, self.rev]
        return update(h, self)


def _run(field, graph, update, max_iter, damping, tol):
    """Flooding BP on the rows of ``field`` (``2 u``): beliefs, iterations, converged, and
    the beliefs one sweep before the last (for the rows that did not converge).

    The messages of the rows still moving are kept together in ``cur``; a row that
    converges is written to ``mu`` and leaves.
    """
    rows = field.shape[0]
    mu = np.zeros((rows, graph.size))
    iters = np.zeros(rows, dtype=int)
    active, cur, fld, before = np.arange(rows), mu.copy(), field, None
    for it in range(1, max_iter + 1):
        new = graph.sweep(fld, cur, update)
        if damping:
            new *= 1.0 - damping
            new += damping * cur
        diff = new - cur
        moved = np.abs(diff, out=diff).max(axis=1, initial=0.0)
        iters[active] = it
        going = moved > tol
        if it == max_iter:
            before = cur[going]
        if not going.all():
            mu[active[~going]] = new[~going]
            active, new, fld = active[going], new[going], fld[going]
        cur = new
        if not active.size:
            break
    converged = np.ones(rows, dtype=bool)
    converged[active] = False
    mu[active] = cur
    belief = field + graph.incoming(mu)
    previous = belief.copy()
    if active.size:
        previous[active] = field[active] + graph.incoming(before)
    return belief, iters, converged, previous


def _blocks(field, graph, update, max_iter, damping, tol):
    """:func:`_run` over blocks of rows (bounded memory)."""
    n = field.shape[0]
    belief, previous = field.copy(), field.copy()
    iters = np.zeros(n, dtype=int)
    converged = np.ones(n, dtype=bool)
    if graph.size == 0:
        return belief, iters, converged, previous
    block = max(1, BLOCK_MESSAGES // graph.size)
    for start in range(0, n, block):
        sl = slice(start, start + block)
        belief[sl], iters[sl], converged[sl], previous[sl] = _run(
            field[sl], graph, update, max_iter, damping, tol
        )
    return belief, iters, converged, previous


def _loopy_bp(unary, coupling, update, max_iter, damping, tol, retry_damping=None):
    """Beliefs, sweeps and convergence per row; and, for the rows the first run left
    unconverged, their indices and the candidate beliefs (last and previous sweep of the
    first run, then of the damped retry)."""
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping!r}")
    if retry_damping is not None and not 0.0 <= retry_damping < 1.0:
        raise ValueError(f"retry_damping must be in [0, 1), got {retry_damping!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    unary, coupling = _check(unary, coupling)
    field = 2.0 * unary
    graph = _Graph(coupling)
    belief, iters, converged, previous = _blocks(field, graph, update, max_iter, damping, tol)
    bad = np.flatnonzero(~converged)
    candidates = [belief[bad], previous[bad]]
    if retry_damping is not None and retry_damping > damping and bad.size:
        b, it, c, p = _blocks(field[bad], graph, update, max_iter, retry_damping, tol)
        belief[bad], iters[bad], converged[bad] = b, iters[bad] + it, c
        candidates += [b, p]
    return belief, iters, converged, (bad, candidates)


def max_product(
    unary,
    coupling,
    max_iter=50,
    damping=0.0,
    tol=1e-9,
    return_info=False,
    retry_damping=None,
    polish=False,
):
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
        A row has converged when none of its message log-ratios moves by more than ``tol``
        in a sweep; it then leaves the loop.
    return_info : bool, default=False
        Also return ``(max_marginal_log_ratios, n_iter, converged)``: ``n_iter`` the
        largest number of sweeps any row took, ``converged`` a boolean per instance.
    retry_damping : float in [0, 1) or None, default=None
        Rows not converged after ``max_iter`` sweeps are run again from uniform messages
        with this damping (when it exceeds ``damping``); their beliefs and ``converged``
        flag are then those of the second run.
    polish : bool, default=False
        For the rows the first run left unconverged (undamped max-product on frustrated
        loops typically flips with period two, so the decision depends on the parity of
        the last sweep): start :func:`local_search` from the decisions of the last two
        sweeps of each run and keep the highest-scoring result, a label vector no single
        flip can improve, as a converged max-product fixed point is (Weiss and Freeman,
        2001).

    Returns
    -------
    Y : int array of shape (n, m) in {-1, +1}
    """
    belief, iters, conv, (bad, candidates) = _loopy_bp(
        unary, coupling, _max_update, max_iter, damping, tol, retry_damping
    )
    Y = np.where(belief >= 0, 1, -1)
    if polish and bad.size:
        unary, coupling = _check(unary, coupling)
        u = unary[bad]
        tries = [local_search(u, coupling, np.where(c >= 0, 1, -1)) for c in candidates]
        best = np.argmax([_row_scores(u, coupling, t) for t in tries], axis=0)
        Y[bad] = np.choose(best[:, None], tries)
    return (Y, (belief, int(iters.max(initial=0)), conv)) if return_info else Y


def sum_product(
    unary, coupling, max_iter=50, damping=0.0, tol=1e-9, return_info=False, retry_damping=None
):
    """Per-label marginals ``P(y_i = +1 | x)`` by loopy sum-product belief propagation.

    Same parameters as :func:`max_product` (without ``polish``); exact on trees (and
    forests).

    Returns
    -------
    P : float array of shape (n, m)
    """
    belief, iters, conv, _ = _loopy_bp(
        unary, coupling, _sum_update, max_iter, damping, tol, retry_damping
    )
    P = 0.5 * (1.0 + np.tanh(0.5 * belief))  # logistic(belief), stable
    return (P, (belief, int(iters.max(initial=0)), conv)) if return_info else P


def _row_scores(unary, coupling, Y):
    return np.einsum("ki,ki->k", Y, unary) + 0.5 * np.einsum("ki,ij,kj->k", Y, coupling, Y)


def local_search(unary, coupling, Y, max_sweeps=None):
    """Greedy ascent of ``y^T u + sum_{i<j} a_ij y_i y_j`` by single flips (ICM).

    Each step flips, in every row that can still improve, the label with the largest gain
    ``-2 y_i (u_i + sum_j a_ij y_j)``; it stops when no flip gains. ``Y`` in {-1, +1}.
    """
    unary, coupling = _check(unary, coupling)
    Y = np.array(Y, dtype=int, copy=True).reshape(unary.shape)
    rows = np.arange(len(Y))
    for _ in range(max_sweeps or 10 * unary.shape[1] + 10):
        gain = -2.0 * Y[rows] * (unary[rows] + Y[rows] @ coupling)
        best = np.argmax(gain, axis=1)
        up = gain[np.arange(len(rows)), best] > 1e-12
        if not up.any():
            break
        rows, best = rows[up], best[up]
        Y[rows, best] *= -1
    return Y


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
