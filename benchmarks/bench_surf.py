"""Images per second per core for SURF + visual-word assignment on 640x480 JPEGs.

Run with one thread per process (the workflow runs one shard per core):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_surf.py --images 20 --cores 1 2 8 32

Generates ``--images`` photographic-like 640x480 JPEGs (kclf_workflow.datasets.synthetic_voc),
times decoding + SURF (mahotas) + assignment to a 500-word vocabulary per image, prints
images/s per core, the estimated hours for all 11,321 VOC2010 trainval images on each
N of ``--cores`` (perfect scaling across shards), and the ratio against OpenCV's SIFT
(the named peer available in the PyPI wheel) on the same images.
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from kclf.features.surf_bow import bag_of_words, extract_descriptors, fit_vocabulary, read_grey
from kclf_workflow.datasets.synthetic_voc import render_image

VOC2010_IMAGES = 11321


def _make_jpegs(folder, n, seed):
    paths = []
    for k in range(n):
        rgb, _ = render_image(seed, f"bench_{k}", size=(640, 480), max_objects=4)
        buf = io.BytesIO()
        Image.fromarray(rgb).save(buf, format="JPEG", quality=90)
        p = Path(folder) / f"bench_{k}.jpg"
        p.write_bytes(buf.getvalue())
        paths.append(p)
    return paths


def _time_detector(paths, detector, params, centres):
    n_desc, t_feat, t_words = 0, 0.0, 0.0
    for p in paths:
        t0 = time.perf_counter()
        d = extract_descriptors(read_grey(p), detector, params)
        t1 = time.perf_counter()
        if centres is not None:
            bag_of_words(d, [len(d)], centres)
        t_words += time.perf_counter() - t1
        t_feat += t1 - t0
        n_desc += len(d)
    return t_feat, t_words, n_desc


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=20)
    ap.add_argument("--cores", type=int, nargs="+", default=[1, 2, 8, 32])
    ap.add_argument("--words", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        paths = _make_jpegs(tmp, args.images, args.seed)
        # vocabulary from the images' own descriptors (its cost is paid once, not per image)
        sample = np.concatenate([extract_descriptors(read_grey(p)) for p in paths[:5]])
        words = min(args.words, len(sample))
        centres = fit_vocabulary(sample, n_words=words, random_state=0).cluster_centers_
        t_feat, t_words, n_desc = _time_detector(paths, "surf", None, centres)
        s_feat, _, s_desc = _time_detector(paths, "sift", None, None)

    n = len(paths)
    per_image = (t_feat + t_words) / n
    rate = 1.0 / per_image
    print(f"images: {n} JPEGs 640x480, vocabulary {words} words")
    print(
        f"SURF (mahotas): {t_feat / n * 1e3:.1f} ms/image, {n_desc / n:.0f} descriptors/image; "
        f"word assignment {t_words / n * 1e3:.1f} ms/image"
    )
    print(f"SURF + words: {rate:.2f} images/s per core")
    print(
        f"OpenCV SIFT (peer): {s_feat / n * 1e3:.1f} ms/image, {s_desc / n:.0f} descriptors/image; "
        f"SURF/SIFT time ratio {t_feat / s_feat:.2f}"
    )
    for c in args.cores:
        hours = VOC2010_IMAGES * per_image / c / 3600
        print(f"all {VOC2010_IMAGES} VOC2010 images on {c:>3} cores: {hours:.2f} h")


if __name__ == "__main__":
    main()
