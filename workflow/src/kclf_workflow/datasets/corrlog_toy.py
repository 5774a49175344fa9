"""The two-label toy example of the CorrLog paper (Li et al., Sec. V, Fig. 1).

Instances are uniform on the unit disc. The paper's label formula did not survive in the
stored text (only "labels defined by" two linear boundaries, dashed and solid, remains), so
this is a stated reconstruction with the property the section demonstrates: label 2's
boundary depends on label 1, which CorrLog's coupling can express and independent logistic
regressions (ILR) cannot:

    y1 = sign(x_1)                      (dashed boundary x_1 = 0)
    y2 = sign(x_2 + shift * y1)         (solid boundaries x_2 = -shift / +shift)

For a fixed ``y1`` the conditional (11) of ``y2`` is a logistic model whose boundary moves by
``alpha_12``; marginally ``y2`` has a step-shaped boundary that no single line fits.
"""

from __future__ import annotations

import numpy as np


def sample_unit_disc(n, rng):
    """``n`` points uniform on the unit disc (radius ``sqrt(U)``, angle uniform)."""
    r = np.sqrt(rng.uniform(size=n))
    t = rng.uniform(0.0, 2.0 * np.pi, size=n)
    return np.column_stack([r * np.cos(t), r * np.sin(t)])


def toy_labels(X, shift=0.5):
    """0/1 labels ``(y1, y2)`` of the toy example for points ``X`` (n, 2)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"X must have shape (n, 2), got {X.shape}")
    s1 = np.where(X[:, 0] > 0, 1.0, -1.0)
    y2 = X[:, 1] + shift * s1 > 0
    return np.column_stack([s1 > 0, y2]).astype(int)


def make_corrlog_toy(n, rng, shift=0.5):
    """``(X, Y)``: ``n`` points uniform on the unit disc and their toy labels (n, 2) 0/1."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    X = sample_unit_disc(n, rng)
    return X, toy_labels(X, shift)
