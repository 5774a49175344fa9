"""The distinct weighted training rows of a fit (private): :func:`distinct_rows`.

A row of integer weight ``w`` is the same training data as ``w`` copies of it, and a row
of weight 0 the same as no row, for every model whose fit is a weighted sum over rows
(MAPLP's linear programme, the GP classifier's likelihood).  Fitting on the distinct
``(x, y)`` pairs of positive weight, each weighing the sum of its copies' weights, in an
order that depends on the data only, makes that equality exact: weighted rows, repeated
rows and the rows in any order give the same fit input, bit for bit, so a solver with
several optima (a linear programme's vertices) or a random start (k-means++) cannot tell
them apart.
"""

from __future__ import annotations

from functools import cmp_to_key

import numpy as np
import scipy.sparse as sp


def _sparse_order(X, y):
    """The positions of the rows of the CSR matrix ``X`` (with their labels ``y``) sorted
    as :func:`numpy.unique` sorts the dense rows of ``[X, y]``: lexicographically by
    column, then by label.

    Between two rows the first column where they differ decides; in the sorted
    ``(column, value)`` lists of their non-zeros that is the first entry where the lists
    differ, and a non-zero ``v`` at a column where the other row is 0 puts its row above
    exactly when ``v > 0`` (a row's end behaves as a non-zero of value 0 beyond every
    column)."""
    indptr, indices, data = X.indptr, X.indices, X.data

    def compare(a, b):
        i, j = indptr[a], indptr[b]
        ia, ib = indptr[a + 1], indptr[b + 1]
        while True:
            ca = indices[i] if i < ia else None
            cb = indices[j] if j < ib else None
            if ca is None and cb is None:
                return int(y[a] > y[b]) - int(y[a] < y[b])
            if ca is not None and (cb is None or ca < cb):
                return 1 if data[i] > 0 else -1
            if cb is not None and (ca is None or cb < ca):
                return -1 if data[j] > 0 else 1
            if data[i] != data[j]:
                return 1 if data[i] > data[j] else -1
            i, j = i + 1, j + 1

    return np.array(sorted(range(X.shape[0]), key=cmp_to_key(compare)), dtype=int)


def distinct_rows(X, y, sample_weight=None):
    """``(index, inverse, weight)`` of the distinct ``(x, y)`` pairs of positive weight.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Dense rows are compared as :func:`numpy.unique` does (``-0.0 == 0.0``); sparse rows
        by their values (explicit zeros are zeros).
    y : ndarray of shape (n_samples,)
        Integer class indices.
    sample_weight : ndarray of shape (n_samples,) or None
        Non-negative weights (None: all one).

    Returns
    -------
    index : ndarray of int
        The position of each distinct pair's first copy in ``X``, the pairs in the order of
        their values (lexicographic by column, then label): the same order for any order
        of the rows and for a dense ``X`` and its sparse form.
    inverse : ndarray of shape (n_samples,)
        The distinct pair of every row, ``-1`` for a row of weight 0.
    weight : ndarray of float
        The summed weight of every distinct pair.
    """
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    rows = np.flatnonzero(w > 0)
    y = np.asarray(y)
    if sp.issparse(X):
        Xs = sp.csr_array(X[rows])
        Xs.eliminate_zeros()
        Xs.sum_duplicates()
        Xs.sort_indices()
        order = _sparse_order(Xs, y[rows])
        keys = [
            (
                Xs.indices[Xs.indptr[i] : Xs.indptr[i + 1]].tobytes(),
                Xs.data[Xs.indptr[i] : Xs.indptr[i + 1]].tobytes(),
                y[rows][i],
            )
            for i in order
        ]
        new = np.r_[True, [keys[k] != keys[k - 1] for k in range(1, len(keys))]]
        group = np.cumsum(new) - 1
        inv_sorted = np.empty(rows.size, dtype=int)
        inv_sorted[order] = group
        first = np.full(int(group[-1]) + 1 if rows.size else 0, n, dtype=int)
        np.minimum.at(first, inv_sorted, rows)
    else:
        key = np.column_stack([np.asarray(X, dtype=float)[rows], y[rows]])
        _, inv_sorted = np.unique(key, axis=0, return_inverse=True)
        inv_sorted = inv_sorted.ravel()
        first = np.full(int(inv_sorted.max()) + 1 if rows.size else 0, n, dtype=int)
        np.minimum.at(first, inv_sorted, rows)
    inverse = np.full(n, -1, dtype=int)
    inverse[rows] = inv_sorted
    weight = np.bincount(inv_sorted, weights=w[rows], minlength=first.size)
    return first, inverse, weight
