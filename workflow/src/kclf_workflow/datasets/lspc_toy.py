"""The one-dimensional toy problem of the LSPC-new paper, Section 3.1.

    p(x | y=1) = N(x; 0, 1),    p(x | y=2) = 1/2 N(x; -2, 1) + 1/2 N(x; 2, 1),

with equal class sizes, so the true posterior is known in closed form.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


def sample(n_per_class, rng):
    """``n_per_class`` draws of each class: X of shape (2 n, 1), y in {1, 2}."""
    x1 = rng.normal(0.0, 1.0, n_per_class)
    centres = rng.choice([-2.0, 2.0], size=n_per_class)
    x2 = rng.normal(centres, 1.0)
    X = np.r_[x1, x2][:, None]
    y = np.r_[np.ones(n_per_class, int), np.full(n_per_class, 2)]
    return X, y


def class_densities(x):
    """(len(x), 2) array of p(x | y=1), p(x | y=2)."""
    x = np.asarray(x, dtype=float).ravel()
    p1 = norm.pdf(x, 0.0, 1.0)
    p2 = 0.5 * norm.pdf(x, -2.0, 1.0) + 0.5 * norm.pdf(x, 2.0, 1.0)
    return np.c_[p1, p2]


def true_posterior(x):
    """(len(x), 2) array of p(y | x) for equal class priors (Eq. 1)."""
    d = class_densities(x)
    return d / d.sum(axis=1, keepdims=True)
