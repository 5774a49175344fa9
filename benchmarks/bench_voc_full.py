"""The expected time of workflow/configs/voc2010_full.yaml, from its measured pieces.  Not a
test.

The real VOC 2010 is not on the project's machines, so the run's time is estimated from
the cost of each of its jobs measured here, one process, on the data each job sees:

* SURF (mahotas, the config's defaults): generated 500 x 375 JPEGs (VOC's usual size;
  ``render_image``), per image, after a warm-up;
* vocabulary: MiniBatchKMeans, 500 words, on a 100,000 x 64 sample (the config's
  ``sample_size``) of SURF-like unit vectors (a mixture of 2000 directions);
* bag of words: one 250-image shard of 1024 descriptors per image (SURF's
  ``max_points``, the most a shard can hold) against the 500 words;
* the fits: ``LSPCCV(n_basis=1000)`` (LSPC-new and LSPC, 9 sigma x 9 lambda, 2-fold, 20
  tasks) on 4,998 training rows of 500 word counts, then predicting 5,105 val rows
  (``bench_lspc.make_counts``).

The estimate adds the jobs as the DAG runs them on ``--cores`` cores: the SURF and word-count
shards in parallel, the vocabulary alone, the two fit jobs in parallel.

    .venv/bin/python benchmarks/bench_voc_full.py
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lspc import make_counts  # noqa: E402

from kclf import LSPCCV  # noqa: E402
from kclf.features.surf_bow import (  # noqa: E402
    bag_of_words,
    extract_descriptors,
    fit_vocabulary,
    read_grey,
)
from kclf_workflow.datasets.synthetic_voc import render_image  # noqa: E402

N_TRAIN, N_VAL, PER_SHARD = 4998, 5105, 250  # VOC 2010 Main: train, val; images per shard


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=30)
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)

    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k in range(args.images):
            rgb, _ = render_image(1, f"bench_{k}", size=(500, 375), max_objects=4)
            paths.append(Path(tmp) / f"{k}.jpg")
            Image.fromarray(rgb).save(paths[-1], format="JPEG", quality=90)
        extract_descriptors(read_grey(paths[0]))  # warm-up
        t, descs = _timed(lambda: [extract_descriptors(read_grey(p)) for p in paths])
    surf = t / args.images
    per_image = np.mean([len(d) for d in descs])

    dirs = rng.normal(size=(2000, 64))
    sample = dirs[rng.integers(0, 2000, 100_000)] + 0.3 * rng.normal(size=(100_000, 64))
    sample = (sample / np.linalg.norm(sample, axis=1, keepdims=True)).astype(np.float32)
    vocab, km = _timed(lambda: fit_vocabulary(sample, n_words=500, random_state=0))
    shard = sample[rng.integers(0, len(sample), PER_SHARD * 1024)]
    counts = np.full(PER_SHARD, 1024)
    bow, _ = _timed(lambda: bag_of_words(shard, counts, km.cluster_centers_))

    X, Y = make_counts(N_TRAIN + N_VAL, 20, seed=1)
    fits = []
    for rounding in ("outputs", "parameters"):  # LSPC-new, LSPC
        model = LSPCCV(cv=2, rounding=rounding, scoring="auc", n_basis=1000, random_state=0)
        t0 = time.perf_counter()
        model.fit(X[:N_TRAIN], Y[:N_TRAIN]).predict_proba(X[N_TRAIN:])
        fits.append(time.perf_counter() - t0)

    n_images = N_TRAIN + N_VAL
    shards = math.ceil(n_images / PER_SHARD)
    waves = math.ceil(shards / args.cores)
    t_surf = waves * PER_SHARD * surf
    t_bow = waves * bow
    t_fit = max(fits) if args.cores >= 2 else sum(fits)
    total = t_surf + vocab + t_bow + t_fit
    print(f"# bench_voc_full ({args.cores} cores for the estimate)\n")
    print("| piece | measured | jobs | wall (estimate) |")
    print("|---|---:|---:|---:|")
    print(
        f"| SURF, 500x375 JPEG ({per_image:.0f} descriptors) | {1e3 * surf:.0f} ms/image | "
        f"{shards} x {PER_SHARD} images | {t_surf / 60:.1f} min |"
    )
    print(f"| vocabulary, 100,000 x 64 -> 500 words | {vocab:.1f} s | 1 | {vocab / 60:.1f} min |")
    print(
        f"| bag of words, {PER_SHARD} images x 1024 descriptors | {bow:.1f} s/shard | "
        f"{shards} | {t_bow / 60:.1f} min |"
    )
    print(
        f"| LSPCCV(n_basis=1000) fit + predict, {N_TRAIN} -> {N_VAL} rows, 20 tasks | "
        f"{fits[0]:.1f} s (LSPC-new), {fits[1]:.1f} s (LSPC) | 2 | {t_fit / 60:.1f} min |"
    )
    print(f"| total | | | {total / 60:.0f} min |")
    print(
        f"\nSURF at the workflow's measured 3.4 images/s per core instead: "
        f"{(waves * PER_SHARD / 3.4 + vocab + t_bow + t_fit) / 60:.0f} min"
    )


if __name__ == "__main__":
    main()
