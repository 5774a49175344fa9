"""The linear programme of MAPLP (private).

Nopriadi and Yamashita, "Maximum a Posteriori Based Kernel Classifier Trained by
Linear Programming", section 4: the programme (:func:`maplp_lp`; its derivation in
:class:`kclf.MAPLP`), its dual (:func:`maplp_dual_lp`), which HiGHS solves
(:func:`solve_lp`), the closed form where all inputs coincide in kernel space
(:func:`equal_inputs_solution`), and the criterion the solution maximises
(:func:`maplp_criterion`).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

#: linprog status codes (scipy.optimize.OptimizeResult.status) of the dual programme
#: (:func:`maplp_dual_lp`) and what they mean for MAPLP's own.
_STATUS = {
    1: "iteration or time limit reached",
    2: "the LP is unbounded or infeasible (its dual is infeasible)",
    3: "the LP is infeasible (its dual is unbounded)",
    4: "numerical difficulties",
}


def maplp_lp(K, y_index, n_classes, bias=False, sample_weight=None):
    """The MAPLP linear programme in ``scipy.optimize.linprog`` form (a minimisation).

    Parameters
    ----------
    K : ndarray of shape (n_samples, n_basis)
        Training kernel, ``K[i, j] = k(x_i, c_j)`` with the basis centres ``c_j`` (the
        training inputs themselves, ``n_basis = n_samples``, in the paper).
    y_index : ndarray of shape (n_samples,)
        Class index ``0 .. n_classes - 1`` of every sample.
    n_classes : int
        Number of classes ``C``.
    bias : bool, default=False
        Add the constant basis function ``1`` (one more column of ``K``, all ones) to every
        class: ``w(x, y) = b_y + sum_j alpha_{y,j} k(x, c_j)`` -- not in the paper.
    sample_weight : ndarray of shape (n_samples,) or None
        Positive weights ``s_i`` of the samples (None: all one): the objective's and the
        normalisation's means are weighted (:class:`MAPLP`, "Sample weights").  Only their
        ratios matter: the programme is solved with them scaled to mean one.

    Returns
    -------
    c, A_ub, b_ub, A_eq, b_eq : arrays
        Variables are ``z = [alpha_{0, .}, ..., alpha_{C-1, .}, xi]`` (``C B + N`` entries,
        ``B`` the basis functions, all ``>= 0``; with ``bias`` every ``alpha_{y, .}`` block
        ends with ``b_y``); ``A_ub`` and ``A_eq`` are sparse CSR arrays.  See
        :class:`MAPLP` for the derivation.
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    s = _unit_mean(sample_weight, n)
    if bias:
        K = np.hstack([K, np.ones((n, 1))])
    onehot = np.zeros((n_classes, n))
    onehot[y_index, np.arange(n)] = 1.0
    # objective: sum_i s_i (w(x_i, y_i) - xi_i); coefficient of alpha_{y,j} is
    # sum_i s_i delta(y, y_i) K[i, j]
    gain = (onehot * s) @ K  # (C, B)
    c = np.concatenate([-gain.ravel(), s])
    # cap rows: sum_j alpha_{y_i, j} K[i, j] - xi_i <= 1
    blocks = [sparse.csr_array(K * onehot[k][:, None]) for k in range(n_classes)]
    A_ub = sparse.hstack(blocks + [-sparse.eye_array(n, format="csr")], format="csr")
    b_ub = np.ones(n)
    # normalisation: sum_i s_i sum_y w(x_i, y) = sum_i s_i, i.e.
    # sum_{y, j} alpha_{y,j} sum_i s_i K[i, j] = sum_i s_i
    mass = s @ K
    A_eq = sparse.csr_array(np.concatenate([np.tile(mass, n_classes), np.zeros(n)])[None, :])
    b_eq = np.array([float(s.sum())])
    return c, A_ub, b_ub, A_eq, b_eq


def _unit_mean(sample_weight, n):
    """The weights scaled to mean one (all one for None)."""
    if sample_weight is None:
        return np.ones(n)
    s = np.asarray(sample_weight, dtype=float)
    return s * (n / s.sum())


def maplp_criterion(K, y_index, alpha, intercept=None, sample_weight=None):
    """The empirical criterion ``sum_i s_i min(w(x_i, y_i), 1) / sum_i s_i`` (``s_i`` the
    sample weights, None: all one) for ``alpha`` of shape (C, B) (and the constants ``b_y``
    of ``MAPLP(bias=True)``, shape (C,))."""
    w = np.asarray(K, dtype=float) @ np.asarray(alpha, dtype=float).T  # (N, C)
    if intercept is not None:
        w = w + intercept
    capped = np.minimum(w[np.arange(len(y_index)), y_index], 1.0)
    return float(np.average(capped, weights=sample_weight))


def maplp_dual_lp(K, y_index, n_classes, bias=False, sample_weight=None):
    r"""The dual of :func:`maplp_lp` in ``scipy.optimize.linprog`` form (a minimisation).

    With ``lambda_i >= 0`` the multipliers of the cap rows, ``mu`` that of the
    normalisation and ``nu_i = s_i - lambda_i``, the dual of the programme reads

    .. math:: \max_{\nu, \mu} \sum_i \nu_i - S (1 + \mu)
              \ \text{s.t.}\ \sum_{i: y_i = y} \nu_i K_{ij} \le \mu m_j\ (\text{all } y, j),
              \ 0 \le \nu_i \le s_i ,

    ``m = s^T K`` the normalisation's coefficients and ``S = sum_i s_i`` (the slack
    ``xi_i``'s column gives ``lambda_i <= s_i``, the coefficient ``alpha_{y,j}``'s column
    the row ``(y, j)``).  By LP duality the multipliers of those ``C B`` rows are the
    primal's ``alpha_{y,j}``.  Its ``C B`` rows hold ``N B + C B`` non-zeros, the cap rows'
    coefficients transposed; the dual simplex solves it as fast as the primal's interior
    point at 500 rows and up to 5 times faster beyond (``MAPLP``'s "At any size").

    Returns
    -------
    c, A_ub, b_ub, bounds : arrays
        Variables are ``[nu_0, ..., nu_{N-1}, mu]`` (minimising ``-sum_i nu_i + S mu``, the
        constant ``-S`` dropped); ``A_ub`` is a sparse CSR array of ``C B`` rows, row
        ``y B + j`` for ``alpha_{y,j}`` (with ``bias`` the last of each class's block is
        ``b_y``); ``bounds`` is ``(N + 1, 2)``.
    """
    K = np.asarray(K, dtype=float)
    n = K.shape[0]
    s = _unit_mean(sample_weight, n)
    if bias:
        K = np.hstack([K, np.ones((n, 1))])
    b = K.shape[1]
    mass = s @ K
    # row (y, j) holds K[i, j] of the rows i of class y, then -m_j in mu's column
    data, indices, lengths = [], [], []
    for y in range(n_classes):
        members = np.flatnonzero(y_index == y)
        data.append(np.hstack([K[members].T, -mass[:, None]]).ravel())
        indices.append(np.tile(np.append(members, n), b))
        lengths.append(np.full(b, members.size + 1))
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(lengths))])
    A_ub = sparse.csr_array(
        (np.concatenate(data), np.concatenate(indices), indptr), shape=(n_classes * b, n + 1)
    )
    c = np.concatenate([-np.ones(n), [s.sum()]])
    bounds = np.column_stack([np.zeros(n + 1), np.append(s, np.inf)])
    bounds[n, 0] = -np.inf
    return c, A_ub, np.zeros(n_classes * b), bounds


def solve_lp(K, y_index, n_classes, bias, method, options, sample_weight=None):
    """``(alpha, intercept, n_iter)``: the solution of :func:`maplp_lp`, read from the
    multipliers of its dual (:func:`maplp_dual_lp`) solved by ``scipy.optimize.linprog``
    (``method``, ``options``: HiGHS's), ``alpha`` (C, B) and the constants ``b_y`` (C,)
    (zero without ``bias``); ``ValueError`` naming the status and HiGHS's message when
    the programme is not solved."""
    n = K.shape[1]
    c, A_ub, b_ub, bounds = maplp_dual_lp(K, y_index, n_classes, bias, sample_weight)
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method=method, options=options)
    if res.status != 0:
        what = _STATUS.get(res.status, f"status {res.status}")
        raise ValueError(f"MAPLP linear programme not solved: {what}. HiGHS: {res.message}")
    m = n + 1 if bias else n
    # d(objective)/d(b_ub) of a minimisation with <= rows: minus the primal's alpha
    coef = np.maximum(-res.ineqlin.marginals.reshape(n_classes, m), 0.0)
    intercept = coef[:, n] if bias else np.zeros(n_classes)
    return coef[:, :n], intercept, int(res.nit)


def equal_inputs_solution(K, y_index, n_classes, sample_weight=None):
    """``alpha`` (C, 1) on the first sample when all inputs are equal in kernel space:
    ``w(x_0, y) = n_y / N`` (:class:`kclf.MAPLP`), the classes' weighted frequencies with
    ``sample_weight``."""
    s = _unit_mean(sample_weight, K.shape[0])
    freq = np.bincount(y_index, weights=s, minlength=n_classes) / s.sum()
    return (freq / K[0, 0])[:, None]
