"""All pairs of pairwise coupling fitted and predicted at once for kernel logistic
regression (private).

:class:`kclf.PairwiseCoupling` fits one binary classifier per pair of classes ``i < j``
on the two classes' samples (Roth 2001, Section 3). For
:class:`kclf.KernelLogisticRegression` these fits are many small IRLS problems of the
same form (Eq. 9); :func:`fit_pairs` solves every pair the per-pair fit would solve by
direct steps in one stacked IRLS (:func:`kclf.klr._solver.irls` with one kernel per
pair), the pairs' Gaussian kernels cut from one distance matrix, and
:func:`pairs_decision` computes every pair's ``f_p(x)`` by one matrix product per width.
Both are reached through the estimator's :class:`kclf.coupling.PairBatching` interface;
the results equal the per-pair fits up to round-off.

In Nystroem mode (``n_components``) the pairs share one basis instead
(:func:`fit_pairs_shared_basis`): one set of landmarks drawn from all training rows and
one design matrix per width, each pair fitted by the primal Newton path
(:func:`kclf.klr._solver.irls_primal`) on its rows of that design, so a pair costs
``n_pair m`` per pass (``n_pair m^2`` per Hessian) rather than a feature map of its own;
:func:`pairs_decision` then computes every pair's ``f_p(x)`` from one test design per
width.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from ..kernels import gaussian, gram, median_sigma, scaled_squared_distances
from ._solver import (
    AUTO_CG_MIN_N,
    CHOLESKY_BATCH_ENTRIES,
    irls,
    irls_primal,
    nystroem_design,
    nystroem_map,
    pair_chunks,
    stack_pairs,
    warn_fit,
)

# largest training (or test x training) distance matrix, in float64 entries, computed
# once and cut into the pairs' blocks (else one kernel per pair)
PAIR_DISTANCE_ENTRIES = 2**25


def batched(estimator, sizes):
    """Per pair (of ``sizes`` samples): whether its own fit would take direct IRLS steps
    (``solver="direct"``, or ``"auto"`` below ``AUTO_CG_MIN_N`` samples, not Nystroem),
    i.e. whether the stacked :func:`irls` does the same steps."""
    if estimator.n_components is not None:
        return np.zeros(sizes.size, dtype=bool)
    if estimator.solver == "direct":
        return np.ones(sizes.size, dtype=bool)
    return (sizes < AUTO_CG_MIN_N) & (estimator.solver == "auto")


def warn_pair(estimator):
    """The warning of one pair whose IRLS did not reach ``tol`` (as its own fit warns)."""
    warn_fit(
        f"KernelLogisticRegression: IRLS did not reach tol={estimator.tol} "
        f"within max_iter={estimator.max_iter} steps for 1 of 1 binary "
        f"problem(s) (lam={estimator.lam}); increase max_iter or lam",
        stacklevel=4,
    )


def fit_pairs_shared_basis(estimator, X, yi, pairs, pair_index, sample_weight=None):
    """Nystroem mode of :func:`fit_pairs`: the pairs ``(i, j)`` fitted in one shared basis.

    Per width (``sigma``; with ``sigma=None`` each pair's own median width, as its own fit
    takes it) one feature map is drawn by :func:`kclf.klr._solver.nystroem_map` from all
    training rows (``random_state``, the weights' distinct rows), and one design matrix
    of the rows is computed; every pair of that width is the primal Newton fit
    (:func:`kclf.klr._solver.irls_primal`) of its rows of it, label 1 <=> class ``i``,
    with its rows' weights.  A pair's model is a fitted ``type(estimator)`` whose
    landmarks are the shared ones (not drawn from its own rows): with the landmarks all
    the training rows both are the exact kernel model of the pair.
    """
    params = estimator.get_params(deep=False)
    widths = []
    for idx in pair_index:
        w = None if sample_weight is None else sample_weight[idx]
        widths.append(estimator._fit_width(X[idx], w))
    fitted = [None] * len(pairs)
    for width in dict.fromkeys(widths):  # in order of first use
        group = [p for p, s in enumerate(widths) if s == width]
        offset, scale, nystroem = nystroem_map(
            X,
            estimator.kernel,
            width,
            estimator.n_components,
            estimator.random_state,
            sample_weight,
        )
        shared = len(group) > 1
        rows = slice(None) if shared else pair_index[group[0]]
        design = nystroem_design(X[rows], offset, scale, nystroem, estimator.fit_intercept).formed()
        index = [pair_index[p] if shared else np.arange(pair_index[p].size) for p in group]
        for chunk in pair_chunks(np.array([idx.size for idx in index]), design.shape[1]):
            members = [group[q] for q in chunk]
            targets = [yi[pair_index[p]] == pairs[p][0] for p in members]
            w = [None if sample_weight is None else sample_weight[pair_index[p]] for p in members]
            train, Y, c, basis = stack_pairs(design, [index[q] for q in chunk], targets, w)
            coef, n_iter, conv = irls_primal(
                train, Y, float(estimator.lam), estimator.tol, estimator.max_iter, weights=c
            )
            if basis is not None:
                coef = basis @ coef
            for q, p in enumerate(members):
                fitted[p] = type(estimator)._from_pair_fit(
                    params,
                    n_features_in=X.shape[1],
                    sigma=width,
                    n_iter=n_iter[q],
                    converged=conv[q],
                    coef_=coef[:, q].copy(),
                    nystroem_offset_=offset,
                    nystroem_scale_=scale,
                    nystroem_=nystroem,
                )
                if not conv[q]:
                    warn_pair(estimator)
    return fitted


def pair_kernel(estimator, X, D, idx, sample_weight=None):
    """``(K, sigma_)`` of one pair's rows ``idx``, as its own ``fit`` computes them (``D``
    the squared distances of all rows in units ``u``, ``(D, u)`` of
    :func:`kclf.kernels.scaled_squared_distances`, or None)."""
    if estimator.kernel == "precomputed":
        return X[np.ix_(idx, idx)], None
    if estimator.kernel != "rbf":
        return gram(estimator.kernel, X[idx]), None
    if estimator.sigma is not None:
        sigma = float(estimator.sigma)
    else:
        w = None if sample_weight is None else sample_weight[idx]
        sigma = median_sigma(X[idx], sample_weight=w)
    if D is None:
        return gram("rbf", X[idx], None, sigma), sigma
    K = D[0][np.ix_(idx, idx)]
    return gaussian(K, sigma, D[1], out=K), sigma


def fit_pairs(estimator, X, yi, pairs, pair_index, sample_weight=None):
    """One fitted estimator per pair ``(i, j)`` of ``pairs`` on the rows ``pair_index``
    (label 1 <=> class ``i``), equal to ``clone(estimator).fit`` on the pair's samples
    (with their ``sample_weight``).

    In Nystroem mode the pairs share one basis (:func:`fit_pairs_shared_basis`).  Else
    every pair that :func:`batched` admits is fitted by one stacked :func:`irls`, all
    pairs of one size together (in chunks of at most ``CHOLESKY_BATCH_ENTRIES`` matrix
    entries); the pairs' Gaussian kernels are blocks of one distance matrix of the
    training rows.  The fitted pairs are built by ``type(estimator)._from_pair_fit``.  The
    other pairs (and Nystroem mode) are fitted one by one.
    """
    if estimator.n_components is not None:
        return fit_pairs_shared_basis(estimator, X, yi, pairs, pair_index, sample_weight)
    precomputed = estimator.kernel == "precomputed"
    fitted = [None] * len(pairs)
    sizes = np.array([idx.size for idx in pair_index])
    batch = batched(estimator, sizes)
    D = None
    if estimator.kernel == "rbf" and batch.any() and X.shape[0] ** 2 <= PAIR_DISTANCE_ENTRIES:
        D = scaled_squared_distances(X)
    K_all = None
    if D is not None and estimator.sigma is not None:
        # the same values as gram("rbf", X[idx], None, sigma) up to round-off
        K_all = gaussian(D[0], float(estimator.sigma), D[1])
    params = estimator.get_params(deep=False)
    for size in np.unique(sizes[batch]):
        members = np.flatnonzero(batch & (sizes == size))
        step = max(1, CHOLESKY_BATCH_ENTRIES // (size * size))
        for lo in range(0, members.size, step):
            chunk = members[lo : lo + step]
            if K_all is not None:
                # one width: all the chunk's kernels by one gather
                rows = np.stack([pair_index[p] for p in chunk])
                Ks = K_all[rows[:, :, None], rows[:, None, :]]
                sig = [float(estimator.sigma)] * chunk.size
            else:
                Ks = np.empty((chunk.size, size, size))
                sig = [None] * chunk.size
                for q, p in enumerate(chunk):
                    Ks[q], sig[q] = pair_kernel(estimator, X, D, pair_index[p], sample_weight)
            if estimator.fit_intercept:
                Ks += 1.0
            Ys = np.stack([(yi[pair_index[p]] == pairs[p][0]) for p in chunk], axis=1)
            Ws = None
            if sample_weight is not None:
                Ws = np.stack([sample_weight[pair_index[p]] for p in chunk], axis=1)
            A, n_iter, conv = irls(
                Ks,
                Ys.astype(float),
                float(estimator.lam),
                estimator.tol,
                estimator.max_iter,
                weights=Ws,
            )
            for q, p in enumerate(chunk):
                idx = pair_index[p]
                alpha = A[:, q].copy()
                fitted[p] = type(estimator)._from_pair_fit(
                    params,
                    n_features_in=idx.size if precomputed else X.shape[1],
                    sigma=sig[q],
                    n_iter=n_iter[q],
                    converged=conv[q],
                    X_fit_=X[np.ix_(idx, idx)] if precomputed else X[idx],
                    dual_coef_=alpha,
                    intercept_=alpha.sum() * float(estimator.fit_intercept),
                )
                if not conv[q]:
                    warn_pair(estimator)
    for p in np.flatnonzero(~batch):
        idx = pair_index[p]
        Xp = X[np.ix_(idx, idx)] if precomputed else X[idx]
        w = {} if sample_weight is None else {"sample_weight": sample_weight[idx]}
        fitted[p] = clone(estimator).fit(Xp, (yi[idx] == pairs[p][0]).astype(int), **w)
    return fitted


def pairs_decision(estimators, X_train, X, pair_index):
    """``f_p(x)`` of every pair's fitted estimator (n_samples, n_pairs), or None when
    some estimator is not a dual-form Gaussian fit or the cross distances would exceed
    ``PAIR_DISTANCE_ENTRIES`` (each pair's own ``predict_proba`` is then used).

    The pairs of one width share one cross-kernel to all training rows ``X_train``: their
    ``alpha`` scattered into an (n_train, n_pairs) matrix, one matrix product gives all
    their outputs.  Pairs fitted in a shared Nystroem basis
    (:func:`fit_pairs_shared_basis`): :func:`shared_basis_decision`.
    """
    if all(getattr(e, "nystroem_", None) is not None for e in estimators):
        return shared_basis_decision(estimators, X)
    if X_train is None or X.shape[0] * X_train.shape[0] > PAIR_DISTANCE_ENTRIES:
        return None
    if not all(e.kernel == "rbf" and e.n_components is None for e in estimators):
        return None
    D, u = scaled_squared_distances(X, X_train)
    F = np.empty((X.shape[0], len(estimators)))
    sig = np.array([e.sigma_ for e in estimators])
    for sigma in np.unique(sig):
        group = np.flatnonzero(sig == sigma)
        if group.size == 1:  # a width of its own (sigma=None: each pair's median)
            e, idx = estimators[group[0]], pair_index[group[0]]
            K = D[:, idx]
            F[:, group[0]] = gaussian(K, sigma, u, out=K) @ e.dual_coef_ + e.intercept_
            continue
        coef = np.zeros((X_train.shape[0], group.size))
        for q, p in enumerate(group):
            coef[pair_index[p], q] = estimators[p].dual_coef_
        K = gaussian(D, sigma, u)
        F[:, group] = K @ coef + np.array([estimators[p].intercept_ for p in group])
    return F


def shared_basis_decision(estimators, X):
    """``f_p(x)`` (n_samples, n_pairs) of pairs fitted by :func:`fit_pairs_shared_basis`:
    per feature map the design of ``X`` once, and all its pairs' weights by one product."""
    F = np.empty((X.shape[0], len(estimators)))
    maps = {}
    for p, e in enumerate(estimators):
        maps.setdefault(id(e.nystroem_), []).append(p)
    for group in maps.values():
        design = estimators[group[0]]._design(X)
        F[:, group] = design.forward(np.column_stack([estimators[p].coef_ for p in group]))
    return F
