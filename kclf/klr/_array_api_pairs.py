"""Pairwise coupling's pairs of kernel logistic regression in any array API namespace
(private).

:class:`kclf.PairwiseCoupling` fits one binary kernel logistic regression per pair of
classes (Roth 2001, Section 3).  On arrays of an array API namespace (PyTorch, CuPy,
``array-api-strict``) a pair of the exact kernel is fitted by its own
:meth:`kclf.KernelLogisticRegression.fit` in that namespace
(:mod:`kclf.klr._array_api_paths`); in Nystroem mode (``n_components``) the pairs share one
basis, as on NumPy (:func:`kclf.klr._pairs.fit_pairs_shared_basis`), and
:func:`fit_pairs_shared_basis` fits every pair of one width in one Newton loop on the
design of all rows: pair ``p`` is the column whose rows outside the pair weigh 0, which
leaves its objective, gradient and Hessian those of the fit on its rows
(:class:`PairColumnsProblem`).  On an accelerator the pairs' Hessians are then batched
matrix products over all rows; the NumPy path instead cuts each pair's rows
(:func:`kclf.klr._solver.stack_pairs`), whose gathers and LAPACK calls the standard
lacks.
"""

from __future__ import annotations

import numpy as np

from .._array_api import compute_dtype, device, from_numpy, to_numpy
from .._newton import newton
from ..coupling import couple_pairs
from ._array_api_paths import (
    PrimalProblem,
    _dual_path,
    _primal_path,
    landmark_rows_of,
    nystroem_map_of_rows,
)
from ._pairs import warn_pair


class PairColumnsProblem(PrimalProblem):
    """:class:`kclf.klr._array_api_paths.PrimalProblem` with one column of row weights per
    problem (``weights`` (n, T), 0 on the rows outside a pair): the weights of the columns
    the loop passes are selected before each objective and step."""

    def __init__(self, xp, Phi, Y, lam, *, weights, cache=None):
        super().__init__(xp, Phi, Y, lam, cache=cache)
        self.column_weights = weights

    def _select(self, cols):
        self.weights = self.xp.take(self.column_weights, cols, axis=1)

    def objective(self, x, z, cols):
        self._select(cols)
        return super().objective(x, z, cols)

    def direction(self, x, z, cols):
        self._select(cols)
        return super().direction(x, z, cols)


def coupling_inputs(estimator, xp, X, y, sample_weight):
    """``(X, y, sample_weight)`` of :meth:`kclf.KernelLogisticRegression.fit`'s pairwise
    coupling on arrays of ``xp`` (more than two classes, ``multi_class="pairwise"``):
    validated, float32 upcast to float64 (with :func:`kclf._array_api.compute_dtype`'s
    warning), the weights on the host; None for another fit."""
    from .._validation import check_precomputed, class_labels, validate_data
    from ..lspc._array_api_paths import host_weights

    if estimator.multi_class != "pairwise":
        return None
    X, y = validate_data(estimator, X, y, dtype=[xp.float64, xp.float32])
    if class_labels(to_numpy(y), type(estimator).__name__)[0].size <= 2:
        return None
    if estimator.kernel == "precomputed":
        check_precomputed(X)
    X = compute_dtype(estimator, xp, X)
    sw = None if sample_weight is None else host_weights(sample_weight, X.shape[0])
    return X, y, sw


def fit_pairs_shared_basis(estimator, xp, X, yi, pairs, pair_index, sample_weight=None):
    """:func:`kclf.klr._pairs.fit_pairs_shared_basis` on arrays ``X`` of ``xp`` (float64):
    per width one Nystroem map drawn from all rows (the same landmarks as on NumPy) and
    its design of all rows, every pair of that width one column of one Newton loop
    (module docstring).  ``yi``, ``pairs``, ``pair_index`` and ``sample_weight`` are
    NumPy (the host's bookkeeping).  The fitted pairs keep their arrays in ``xp``."""
    dev = device(X)
    n = X.shape[0]
    params = estimator.get_params(deep=False)
    widths = []
    for idx in pair_index:
        w = None if sample_weight is None else sample_weight[idx]
        widths.append(estimator._fit_width(xp.take(X, from_numpy(idx, xp, dev), axis=0), w))
    fitted = [None] * len(pairs)
    rows = landmark_rows_of(xp, X, sample_weight)
    for width in dict.fromkeys(widths):  # in order of first use
        group = [p for p, s in enumerate(widths) if s == width]
        offset, scale, nystroem, Phi = nystroem_map_of_rows(
            xp,
            X,
            estimator.kernel,
            width,
            estimator.n_components,
            estimator.random_state,
            rows,
            estimator.fit_intercept,
        )
        Y, C = np.zeros((n, len(group))), np.zeros((n, len(group)))
        for q, p in enumerate(group):
            idx = pair_index[p]
            Y[idx, q] = yi[idx] == pairs[p][0]
            C[idx, q] = 1.0 if sample_weight is None else sample_weight[idx]
        Y, C = from_numpy(Y, xp, dev), from_numpy(C, xp, dev)
        problem = PairColumnsProblem(xp, Phi, Y, float(estimator.lam), weights=C)
        W = xp.zeros((Phi.shape[1], len(group)), dtype=Phi.dtype, device=dev)
        r = newton(problem, W, Phi @ W, tol=estimator.tol, max_iter=estimator.max_iter)
        n_iter, conv = to_numpy(r.n_iter), to_numpy(r.converged)
        for q, p in enumerate(group):
            est = type(estimator)._from_pair_fit(
                params,
                n_features_in=X.shape[1],
                sigma=width,
                n_iter=int(n_iter[q]),
                converged=conv[q],
                coef_=r.x[:, q],
                nystroem_offset_=offset,
                nystroem_scale_=scale,
                nystroem_=nystroem,
            )
            est.classes_ = from_numpy(est.classes_, xp, dev)
            est.n_iter_ = from_numpy(est.n_iter_, xp, dev)
            fitted[p] = est
            if not conv[q]:
                warn_pair(estimator)
    return fitted


def pairwise_path(paths, xp, K, tr, va, yi_tr, c, lams, conv, w_tr=None):
    """:meth:`kclf.klr._solver.IRLSPaths.pairwise_path` on arrays of ``xp``: the coupled
    class posteriors of the validation rows ``va`` for every lambda, (n_va, n_lams, c).

    ``K`` is the kernel of all rows, or with ``n_components`` the Nystroem design of all
    rows (shared by the folds and pairs, as on NumPy).  Exact kernel: each pair's lambdas
    by one IRLS call on its training rows' kernel
    (:func:`kclf.klr._array_api_paths._dual_path`).  Nystroem: every pair is one column of
    one warm-started lambda path on the training rows' design, the rows outside the pair
    weighing 0 (:class:`PairColumnsProblem`; the same maximiser as the NumPy path's fit on
    the pair's rows, whose ``w`` the penalty keeps in their row space).  The pairs'
    ``r_ij`` are coupled by Eq. (10) with ``n_ij`` the pairs' (weighted) training counts
    (:func:`kclf.coupling.couple`, in ``xp``), all lambdas in one call.  ``tr``, ``va``,
    ``yi_tr`` (the training rows' class indices) and ``w_tr`` are NumPy; appends the fits'
    converged flags to ``conv``."""
    dev = device(K)
    iu, ju = np.triu_indices(c, k=1)
    in_pair = (yi_tr[:, None] == iu) | (yi_tr[:, None] == ju)  # (n_tr, n_pairs)
    first = (yi_tr[:, None] == iu).astype(float)  # label 1 <=> class i
    vax = from_numpy(va, xp, dev)
    if paths.n_components is not None:
        C = in_pair * (1.0 if w_tr is None else w_tr[:, None])
        trx, Y, C = (from_numpy(a, xp, dev) for a in (tr, first, C))
        r = _primal_path(paths, xp, K, trx, vax, Y, lams, conv, C, problem=PairColumnsProblem)
    else:
        parts = []
        for p in range(iu.size):
            rows = in_pair[:, p]
            y = from_numpy(first[rows, p : p + 1], xp, dev)
            w = None if w_tr is None else from_numpy(w_tr[rows][:, None], xp, dev)
            trx = from_numpy(tr[rows], xp, dev)
            parts.append(_dual_path(paths, xp, K, trx, vax, y, lams, conv, w))
        r = xp.concat(parts, axis=2)
    # r: (n_va, n_lams, n_pairs); every (row, lambda) one coupling problem
    n_va, L = va.size, lams.size
    counts = np.bincount(yi_tr, weights=w_tr, minlength=c)
    P = couple_pairs(xp.reshape(r, (n_va * L, iu.size)), counts[:, None] + counts[None, :])
    return xp.reshape(P, (n_va, L, c))
