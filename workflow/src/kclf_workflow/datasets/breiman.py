"""Breiman's synthetic benchmarks: twonorm, ringnorm (20-d) and waveform (21-d).

Definitions from L. Breiman, "Bias, variance, and arcing classifiers", Technical Report
460, Statistics Department, UC Berkeley, 1996 (twonorm, ringnorm), and Breiman,
Friedman, Olshen, Stone, *Classification and Regression Trees*, 1984, section 2.6.2
(waveform).  The IDA benchmark versions (Rätsch et al.) are binary with labels in
{-1, +1}; every generator here returns ``X`` (n, d) and ``y`` in {-1, +1} with the two
(or three) source classes equally likely, drawn from a :class:`numpy.random.Generator`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["twonorm", "ringnorm", "waveform", "waveform_bases", "GENERATORS"]


def _check(n_samples, rng):
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    if not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    return int(n_samples), rng


def twonorm(n_samples, rng=None, n_features=20):
    """Twonorm: class +1 ~ N(mu, I), class -1 ~ N(-mu, I), ``mu = (a, ..., a)`` with
    ``a = 2 / sqrt(20)`` (``n_features = 20``); the Bayes error is ``Phi(-2) = 2.28 %``."""
    n, rng = _check(n_samples, rng)
    y = rng.choice(np.array([-1, 1]), size=n)
    a = 2.0 / np.sqrt(n_features)
    X = rng.normal(size=(n, n_features)) + a * y[:, None]
    return X, y


def ringnorm(n_samples, rng=None, n_features=20):
    """Ringnorm: class +1 ~ N(0, 4 I), class -1 ~ N(mu, I), ``mu = (a, ..., a)`` with
    ``a = 1 / sqrt(20)`` (``n_features = 20``): the +1 class forms a ring around the -1
    class."""
    n, rng = _check(n_samples, rng)
    y = rng.choice(np.array([-1, 1]), size=n)
    a = 1.0 / np.sqrt(n_features)
    Z = rng.normal(size=(n, n_features))
    X = np.where(y[:, None] == 1, 2.0 * Z, Z + a)
    return X, y


def waveform_bases():
    """The three triangular base waves ``h1(i) = max(6 - |i - 11|, 0)``,
    ``h2(i) = h1(i - 4)``, ``h3(i) = h1(i + 4)`` at ``i = 1..21``, shape (3, 21)."""
    i = np.arange(1, 22)
    h1 = np.maximum(6 - np.abs(i - 11), 0)
    h2 = np.maximum(6 - np.abs(i - 15), 0)
    h3 = np.maximum(6 - np.abs(i - 7), 0)
    return np.vstack([h1, h2, h3]).astype(float)


def waveform(n_samples, rng=None, standardize=True):
    """Waveform (21-d), binary as in IDA: class 1 of Breiman's three against the others.

    Source class ``c`` in {1, 2, 3} (equally likely), ``u ~ U(0, 1)``, noise
    ``e ~ N(0, I_21)``: class 1 ``x = u h1 + (1 - u) h2 + e``, class 2
    ``x = u h1 + (1 - u) h3 + e``, class 3 ``x = u h2 + (1 - u) h3 + e`` (bases from
    :func:`waveform_bases`).  ``y = +1`` for class 1 and ``-1`` otherwise (about one third
    positive, as IDA's waveform).  ``standardize``: every feature is centred and scaled to
    unit variance over the generated set (IDA's waveform is).
    """
    n, rng = _check(n_samples, rng)
    h1, h2, h3 = waveform_bases()
    pairs = np.array([[h1, h2], [h1, h3], [h2, h3]])  # (3, 2, 21)
    c = rng.integers(0, 3, size=n)
    u = rng.uniform(size=(n, 1))
    X = u * pairs[c, 0] + (1 - u) * pairs[c, 1] + rng.normal(size=(n, 21))
    if standardize:
        std = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)
    y = np.where(c == 0, 1, -1)
    return X, y


GENERATORS = {"twonorm": twonorm, "ringnorm": ringnorm, "waveform": waveform}
