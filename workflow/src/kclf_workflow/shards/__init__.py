"""How the workflow splits its feature stages into jobs, and the files those jobs write.

The feature modules (:mod:`kclf.features.surf_bow`, :mod:`kclf.features.hmm_kernel`)
hold the maths; this package holds the workflow's sharding and shard I/O:

* here, the sharding rules: :func:`shard_of` puts an image or a clip in a shard by a
  CRC-32 of its id (adding one changes only its own shard), :func:`n_shards_for` sizes
  the image shards, :func:`row_shards` splits the rows of the cross log-likelihood
  matrix into contiguous blocks;
* :mod:`.images`: one image shard's SURF descriptors (extraction, ``.npz`` file) and the
  vocabulary's descriptor sample drawn across shard files;
* :mod:`.audio`: one clip shard's frame features and HMMs (with the per-clip cache), the
  cross log-likelihood row blocks (full or landmark columns) and the kernel assembled
  from them.
"""

from __future__ import annotations

import zlib
from numbers import Integral

import numpy as np

__all__ = ["shard_of", "n_shards_for", "shard_members", "row_shards"]


def shard_of(item_id, n_shards):
    """Shard index of ``item_id``: CRC-32 of the id modulo ``n_shards``.

    Depends on the id alone, so adding or removing items leaves every other item in
    its shard (as long as ``n_shards`` stays the same).
    """
    if not isinstance(n_shards, Integral) or n_shards < 1:
        raise ValueError(f"n_shards must be a positive integer, got {n_shards!r}")
    return zlib.crc32(str(item_id).encode("utf-8")) % int(n_shards)


def n_shards_for(n_items, items_per_shard):
    """``ceil(n_items / items_per_shard)`` (at least 1)."""
    if not isinstance(items_per_shard, Integral) or items_per_shard < 1:
        raise ValueError(f"images_per_shard must be a positive integer, got {items_per_shard!r}")
    return max(1, -(-int(n_items) // int(items_per_shard)))


def shard_members(ids, n_shards):
    """``{shard: [ids in their given order]}`` for every shard ``0 .. n_shards-1``."""
    out = {s: [] for s in range(n_shards)}
    for i in ids:
        out[shard_of(i, n_shards)].append(i)
    return out


def row_shards(n, n_shards):
    """Split rows ``0..n-1`` into ``n_shards`` contiguous blocks (some may be empty)."""
    if n_shards < 1:
        raise ValueError(f"n_shards must be >= 1, got {n_shards}")
    edges = np.linspace(0, n, n_shards + 1).round().astype(int)
    return [np.arange(a, b) for a, b in zip(edges[:-1], edges[1:])]
