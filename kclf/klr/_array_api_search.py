"""Kernel logistic regression's CV search in any array API namespace (private):
:meth:`kclf.klr._solver.IRLSPaths.search` for :class:`kclf.KernelLogisticRegressionCV` under
``array_api_dispatch``, over the one-task paths of :mod:`kclf.klr._array_api_paths` and the
pairs of :mod:`kclf.klr._array_api_pairs` (a module of its own: it builds on both)."""

from __future__ import annotations

import numpy as np

from .._array_api import device
from ..kernels import gram
from ..lspc._array_api_paths import FoldScores
from ._array_api_pairs import pairwise_path
from ._array_api_paths import (
    _dual_path,
    _index,
    _primal_path,
    finite,
    landmark_rows_of,
    nystroem_map_of_rows,
)
from ._solver import check_pair_folds


def search(paths, xp, X, labels, folds, table, classes, sample_weight):
    """:meth:`kclf.klr._solver.IRLSPaths.search` on arrays of ``xp`` (binary tasks,
    one-vs-rest or pairwise coupling): per width the kernel (or the Nystroem design) once,
    per fold every lambda and task by one IRLS call (Nystroem: along the lambda path,
    warm-started; pairwise: :func:`kclf.klr._array_api_pairs.pairwise_path`), the scores in
    ``xp``; returns the converged flags."""
    dev = device(X)
    c, n_tasks = classes.size, labels.shape[1]
    pairwise = c > 2 and paths.multi_class == "pairwise"
    if pairwise:
        check_pair_folds(labels, folds, classes)
    sw = sample_weight
    L = table.lams.size
    labels_x = xp.asarray(labels, device=dev)
    if c == 2:
        targets = labels.astype(float)
    else:
        targets = np.eye(c)[labels[:, 0]]
    targets = xp.asarray(targets, dtype=X.dtype, device=dev)

    def width(si):
        import sklearn

        with sklearn.config_context(array_api_dispatch=True):  # also on the workers' threads
            return fold_scores(si)

    def fold_scores(si):
        sigma = table.sigmas[si]
        sigma = None if np.isnan(sigma) else float(sigma)
        conv, scores = [], []
        if paths.n_components is not None:  # the design of all rows, not a kernel
            K = nystroem_map_of_rows(
                xp,
                X,
                paths.kernel,
                sigma,
                paths.n_components,
                paths.random_state,
                rows,
                paths.fit_intercept,
            )[3]
        else:
            K = finite(xp, gram(paths.kernel, X, None, sigma))
        for tr, va in folds:
            trx, vax = _index(xp, tr, X), _index(xp, va, X)
            Ytr = xp.take(targets, trx, axis=0)
            w_tr = None if sw is None else xp.asarray(sw[tr][:, None], dtype=X.dtype, device=dev)
            if pairwise:
                w = None if sw is None else sw[tr]
                P1 = pairwise_path(paths, xp, K, tr, va, labels[tr, 0], c, table.lams, conv, w)
            elif paths.n_components is not None:
                P1 = _primal_path(paths, xp, K, trx, vax, Ytr, table.lams, conv, w_tr)
            else:
                P1 = _dual_path(paths, xp, K, trx, vax, Ytr, table.lams, conv, w_tr)
            # P1: (n_va, n_lams, T); T = tasks (binary), classes (one-vs-rest, pairwise)
            if c == 2:
                P = xp.stack([1.0 - P1, P1], axis=3)
            elif pairwise:  # coupled: rows of class probabilities
                P = P1[:, :, None, :]
            else:
                P = (P1 / xp.sum(P1, axis=2, keepdims=True))[:, :, None, :]
            acc = FoldScores(xp, L, n_tasks, paths.scoring)
            w_va = None if sw is None else xp.asarray(sw[va], device=dev)
            acc.add(P, xp.take(labels_x, vax, axis=0), w_va)
            scores.append(acc.scores())
        return scores, np.concatenate(conv)

    # the landmarks' candidate rows do not depend on the width: found once
    rows = landmark_rows_of(xp, X, sw) if paths.n_components is not None else None
    conv = table.run(width) if n_tasks else []
    return np.concatenate(conv) if conv else np.ones(0, dtype=bool)
