"""Seed streams derived from the one ``seed`` of the config.

Every random step (a trial's split, a CV fold assignment, a k-means sample, an HMM
initialisation) asks for its own stream by naming itself, e.g.
``rng_for(seed, "ida", "banana", "trial", 3)``.  The stream depends only on the seed
and the names, never on job order or core count, so any subset of jobs can be rerun
on any machine and give the same numbers.
"""

from __future__ import annotations

import zlib

import numpy as np


def _key(parts):
    return tuple(zlib.crc32(str(p).encode("utf-8")) for p in parts)


def seed_sequence(seed, *names):
    """A :class:`numpy.random.SeedSequence` for the stream named by ``names``."""
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.SeedSequence(entropy=int(seed), spawn_key=_key(names))


def rng_for(seed, *names):
    """A :class:`numpy.random.Generator` for the stream named by ``names``."""
    return np.random.default_rng(seed_sequence(seed, *names))


def seed_for(seed, *names):
    """A 31-bit integer seed (for ``random_state=`` arguments) for the named stream."""
    return int(seed_sequence(seed, *names).generate_state(1, dtype=np.uint32)[0] >> 1)


def chunk_trials(label):
    """Trial indices of a chunk label ``"first-last"`` (inclusive), e.g. ``"5-9"`` ->
    ``range(5, 10)``.  The workflow runs trials in such chunks; every trial's random
    draws come from streams named by the trial index, never by the chunk or the count."""
    try:
        first, last = (int(v) for v in str(label).split("-"))
    except ValueError:
        raise ValueError(f"trial chunk must look like '0-4', got {label!r}") from None
    if not 0 <= first <= last:
        raise ValueError(f"trial chunk {label!r}: need 0 <= first <= last")
    return range(first, last + 1)
