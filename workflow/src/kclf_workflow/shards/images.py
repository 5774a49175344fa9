"""Image shards of the bag-of-words chain (rules voc_surf_shard, voc_vocabulary,
voc_bow_shard, voc_bad_images): one shard's descriptors and their ``.npz`` file."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from kclf.features.surf_bow import BadImageError, descriptor_dim, extract_descriptors, read_grey

from ..files import atomic_write
from ..progress import Progress
from ..readers import reading

logger = logging.getLogger(__name__)

__all__ = ["extract_shard", "save_shard", "load_shard", "sample_descriptors"]


def extract_shard(ids, paths, detector="surf", params=None, skip_bad_images=False):
    """Descriptors of the images of one shard.

    Returns a dict with ``ids`` (the images kept), ``counts`` (descriptors per image),
    ``descriptors`` (all stacked, float32), ``bad`` (``[(path, reason)]`` of images left
    out).  A bad image raises :class:`~kclf.features.surf_bow.BadImageError` unless
    ``skip_bad_images``; then it is listed in ``bad`` and logged as a warning.
    """
    if len(ids) != len(paths):
        raise ValueError(f"ids and paths differ in length: {len(ids)} != {len(paths)}")
    dim = descriptor_dim(detector, params)
    kept, counts, descs, bad = [], [], [], []
    progress = Progress(logger, "images", len(ids))
    for image_id, path in zip(ids, paths):
        try:
            grey = read_grey(path)
        except BadImageError as exc:
            if not skip_bad_images:
                raise
            bad.append((str(path), exc.reason))
            logger.warning("skipping bad image %s: %s", path, exc.reason)
            progress.step("bad")
            continue
        d = extract_descriptors(grey, detector, params)
        kept.append(str(image_id))
        counts.append(d.shape[0])
        descs.append(d)
        progress.step(f"{sum(counts)} descriptors")
    return {
        "ids": kept,
        "counts": np.asarray(counts, dtype=np.int64),
        "descriptors": np.concatenate(descs) if descs else np.zeros((0, dim), np.float32),
        "bad": bad,
    }


def save_shard(shard, path):
    """Write a shard (from :func:`extract_shard`) to ``path`` (``.npz``), atomically."""
    bad = shard["bad"]

    def _write(tmp):
        with open(tmp, "wb") as fh:
            np.savez(
                fh,
                ids=np.asarray(shard["ids"], dtype=str),
                counts=shard["counts"],
                descriptors=shard["descriptors"],
                bad_paths=np.asarray([b[0] for b in bad], dtype=str),
                bad_reasons=np.asarray([b[1] for b in bad], dtype=str),
            )

    atomic_write(path, _write)
    return Path(path)


def load_shard(path):
    """Read a shard written by :func:`save_shard`."""
    with reading(path, "SURF shard"), np.load(path, allow_pickle=False) as z:
        return {
            "ids": [str(i) for i in z["ids"]],
            "counts": z["counts"].astype(np.int64),
            "descriptors": z["descriptors"],
            "bad": list(zip(map(str, z["bad_paths"]), map(str, z["bad_reasons"]))),
        }


def sample_descriptors(shard_paths, sample_size, random_state):
    """A uniform sample (without replacement) of ``sample_size`` descriptors across all
    shards (all of them when there are fewer), loading one shard at a time.

    ``random_state`` is an int or a :class:`numpy.random.Generator`; the sample depends
    only on it and the shards' contents in the given order.
    """
    rng = np.random.default_rng(random_state)
    sizes = []
    for p in shard_paths:
        with reading(p, "SURF shard"), np.load(p, allow_pickle=False) as z:
            sizes.append(int(z["counts"].sum()))
    total = sum(sizes)
    if total == 0:
        raise ValueError("no descriptors in any shard: cannot fit a vocabulary")
    take = np.sort(rng.choice(total, size=min(int(sample_size), total), replace=False))
    out, start = [], 0
    for p, n in zip(shard_paths, sizes):
        sel = take[(take >= start) & (take < start + n)] - start
        if sel.size:
            with reading(p, "SURF shard"), np.load(p, allow_pickle=False) as z:
                out.append(z["descriptors"][sel])
        start += n
    return np.concatenate(out).astype(np.float32)
