"""The folds of every cross-validation inside the library (private): the searches of
:class:`kclf.LSPCCV` and :class:`kclf.KernelLogisticRegressionCV` and CorrLog's penalty
search.  Below the estimators: it imports none of them."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold, check_cv


def cv_folds(y, cv, random_state):
    """``cv`` folds of the rows of ``y``: stratified for one task when every class has
    ``cv`` members, else plain K-fold.

    ``random_state`` None: the rows in their order, unshuffled (as scikit-learn's
    searches with an integer ``cv``), so the same data give the same folds on every run;
    otherwise shuffled with that seed (an int or a ``RandomState``).  ``ValueError``
    naming ``cv`` when there are fewer rows than folds.
    """
    n = y.shape[0]
    if cv > n:
        raise ValueError(f"cv={cv} folds need at least {cv} training rows, got {n}")
    shuffle = random_state is not None
    seed = random_state if shuffle else None
    if y.ndim == 1 and np.min(np.unique(y, return_counts=True)[1]) >= cv:
        splitter = StratifiedKFold(cv, shuffle=shuffle, random_state=seed)
        return list(splitter.split(np.zeros(n), y))
    return list(KFold(cv, shuffle=shuffle, random_state=seed).split(np.zeros(n)))


def cv_splits(cv, X, y, random_state):
    """``[(train, validation), ...]`` index arrays for a CV search.

    ``cv`` an integer: :func:`cv_folds` (unshuffled with ``random_state`` None, shuffled
    by a given seed).  Otherwise anything :func:`sklearn.model_selection.check_cv`
    accepts: a splitter (``split(X, y)`` is called) or an iterable of ``(train,
    validation)`` index arrays.  Every fold must have non-empty training and validation
    parts indexing the ``n`` samples.
    """
    n = X.shape[0]
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        return cv_folds(y, int(cv), random_state)
    splitter = check_cv(cv, y, classifier=True)
    folds = []
    for k, (tr, va) in enumerate(splitter.split(X, y)):
        tr, va = np.asarray(tr), np.asarray(va)
        for part, idx in (("training", tr), ("validation", va)):
            if idx.dtype == bool:
                raise ValueError(f"cv: fold {k} gives a boolean mask; give index arrays")
            if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
                raise ValueError(f"cv: fold {k} has an empty or non-integer {part} part")
            if idx.min() < 0 or idx.max() >= n:
                raise ValueError(f"cv: fold {k} indexes {part} samples outside 0..{n - 1}")
        folds.append((tr, va))
    if not folds:
        raise ValueError("cv gave no folds")
    return folds
