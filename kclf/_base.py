"""What the kernel estimators share (private): the precomputed-kernel tag and the
default Gaussian width (:class:`KernelMixin`), the decision by the largest posterior
(:class:`ArgmaxPredictMixin`), the log-probabilities (:class:`LogProbaMixin`), and finite
log-odds of posteriors (:func:`log_odds`)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._array_api import get_namespace, same_namespace
from .kernels import median_sigma

#: The log-odds given to a posterior of exactly 0 (-) or 1 (+): beyond every finite
#: log-odds of a float64 probability in (0, 1), from ``log(5e-324) = -744.4`` to
#: ``-log(2**-53) = 36.7``, so the scores keep the posteriors' order (ties included) and
#: stay finite, as scikit-learn's scorers (``roc_auc``, ...) need.
CERTAIN_LOG_ODDS = 745.0


def log_odds(p):
    """``log p - log(1 - p)`` computed without cancellation; ``-+CERTAIN_LOG_ODDS`` at
    exactly 0 or 1."""
    with np.errstate(divide="ignore"):
        return np.clip(np.log(p) - np.log1p(-p), -CERTAIN_LOG_ODDS, CERTAIN_LOG_ODDS)


class KernelMixin:
    """An estimator with a ``kernel`` parameter (and, for a single model, a width
    ``sigma``): with ``kernel="precomputed"`` its inputs are Gram matrices (scikit-learn's
    ``pairwise`` tag, so its splitters cut them in both axes)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _width(self, X, factor=1.0, sample_weight=None):
        """The Gaussian width of a fit on ``X``: ``sigma``, or ``factor`` times the median
        pairwise distance of ``X`` (:func:`kclf.kernels.median_sigma`, weighted by
        ``sample_weight``) when it is None; None for a kernel without a width."""
        if self.kernel != "rbf":
            return None
        if self.sigma is not None:
            return float(self.sigma)
        return factor * median_sigma(X, sample_weight=sample_weight)


class ArgmaxPredictMixin:
    """``predict``: the class of the largest ``predict_proba`` column."""

    @same_namespace
    def predict(self, X):
        """The class of largest estimated posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`predict_proba`.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels from ``classes_`` (the first of tied posteriors).
        """
        check_is_fitted(self)
        P = self.predict_proba(X)
        xp, is_xp = get_namespace(P)
        if is_xp:
            return xp.take(self.classes_, xp.argmax(P, axis=1))
        return self.classes_[np.argmax(P, axis=1)]


class LogProbaMixin:
    """``predict_log_proba``: the log of ``predict_proba``."""

    @same_namespace
    def predict_log_proba(self, X):
        """``log`` of :meth:`predict_proba` (probabilities clipped at the smallest float).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`predict_proba`.

        Returns
        -------
        log_P : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        P = self.predict_proba(X)
        xp, is_xp = get_namespace(P)
        if is_xp:
            return xp.log(xp.clip(P, xp.finfo(P.dtype).smallest_normal, None))
        return np.log(np.clip(P, np.finfo(float).tiny, None))
