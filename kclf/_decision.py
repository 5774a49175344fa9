"""Scores that rank as the probabilities do (private): :func:`ranked_log_odds`.

scikit-learn's scorers (``roc_auc``, ...) and ``CalibratedClassifierCV`` call
``decision_function`` before ``predict_proba``; a score that ranks the rows otherwise than
the probability tunes and calibrates another model.  The log-odds of the probability are a
strictly increasing function of it, but the probability itself ties where a clip or a
rounding makes it exactly 0 or 1; there the score breaks the tie by what the model still
knows (a margin before the clip), inside a band beyond every finite log-odds.
"""

from __future__ import annotations

import numpy as np

from ._base import CERTAIN_LOG_ODDS

#: The centre of the bands of probabilities exactly 0 (``-SATURATED``) and 1 (``+``): one
#: beyond :data:`kclf._base.CERTAIN_LOG_ODDS`, which is beyond the log-odds of every float
#: probability in (0, 1) (``-744.4 .. 36.7``); the tie-break moves a score by less than 1.
SATURATED = CERTAIN_LOG_ODDS + 1.0


def ranked_log_odds(p, margin):
    """``log(p / (1 - p))`` where ``0 < p < 1``; ``-+SATURATED + margin / (1 + |margin|)``
    where ``p`` is exactly 0 or 1.

    A non-decreasing function of ``p`` (``log p`` and ``-log(1 - p)`` both are), strictly
    increasing where the log-odds of two probabilities differ; rows
    whose ``p`` is exactly 0 (or 1) are ordered among themselves by ``margin`` (any real,
    mapped into (-1, 1)), and stay below (above) every other row.  Finite everywhere, as
    scikit-learn's scorers require.

    Parameters
    ----------
    p : ndarray
        Probabilities in [0, 1].
    margin : ndarray of the same shape
        The tie-break where ``p`` is 0 or 1: larger means more evidence for the event.
    """
    p = np.asarray(p, dtype=float)
    margin = np.broadcast_to(np.asarray(margin, dtype=float), p.shape)
    inside = (p > 0) & (p < 1)
    out = np.empty_like(p)
    with np.errstate(divide="ignore"):
        out[inside] = np.log(p[inside]) - np.log1p(-p[inside])
    edge = ~inside
    m = np.nan_to_num(margin[edge])  # an infinite margin: the largest float
    out[edge] = np.where(p[edge] >= 1, SATURATED, -SATURATED) + m / (1.0 + np.abs(m))
    return out
