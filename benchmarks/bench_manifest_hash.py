"""Cost of the content hash in the per-shard manifests, against the work it guards.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_manifest_hash.py --images 40

Images: ``--images`` photographic-like JPEGs at VOC's usual 500x375 (kclf_workflow.datasets.
synthetic_voc); prints the seconds of one manifest (stat + SHA-256 of every file,
kclf_workflow.manifests.manifest_rows) and of SURF on the same images (decode + mahotas SURF, the
voc_surf_shard step), and their ratio.  Clips (``--clips``, default the mirror's real
UrbanSound8K clips, 44.1 kHz stereo WAV): the manifest against frame features + one HMM
per clip (kclf_workflow.shards.audio.clip_model, the audio_hmm_shard step, no cache).

The workflow keeps the hash while the ratio is below 0.1 (10 % of the feature time).
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from pathlib import Path

from PIL import Image

from kclf.features.audio import AudioFeatureConfig
from kclf.features.surf_bow import extract_descriptors, read_grey
from kclf_workflow.datasets.synthetic_voc import render_image
from kclf_workflow.manifests import manifest_rows
from kclf_workflow.shards.audio import clip_model

ROOT = Path(__file__).resolve().parents[1]
CLIPS = ROOT.parent / "shared" / "data" / "urbansound8k_sample" / "UrbanSound8K" / "audio"


def _make_jpegs(folder, n, seed):
    paths = []
    for k in range(n):
        rgb, _ = render_image(seed, f"bench_{k}", size=(500, 375), max_objects=4)
        buf = io.BytesIO()
        Image.fromarray(rgb).save(buf, format="JPEG", quality=90)
        p = Path(folder) / f"bench_{k}.jpg"
        p.write_bytes(buf.getvalue())
        paths.append(p)
    return paths


def _best(f, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=40)
    ap.add_argument("--clips", type=Path, default=CLIPS)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        paths = _make_jpegs(tmp, args.images, seed=1)
        ids = [p.stem for p in paths]
        mb = sum(p.stat().st_size for p in paths) / 2**20
        t_hash = _best(lambda: manifest_rows(ids, paths), args.repeats)
        extract_descriptors(read_grey(paths[0]), "surf")  # warm-up
        t_surf = _best(lambda: [extract_descriptors(read_grey(p), "surf") for p in paths], 1)
    print(
        f"images: {args.images} JPEGs 500x375 ({mb:.1f} MiB): manifest (stat + sha256) "
        f"{1e3 * t_hash / args.images:.2f} ms/image, SURF {1e3 * t_surf / args.images:.0f} "
        f"ms/image; hash / SURF = {t_hash / t_surf:.4f}"
    )

    clips = sorted(Path(args.clips).rglob("*.wav")) if Path(args.clips).is_dir() else []
    if not clips:
        print(f"clips: none under {args.clips}; skipped")
        return
    cfg = AudioFeatureConfig(sample_rate=22050, max_seconds=60.0)
    mb = sum(p.stat().st_size for p in clips) / 2**20
    t_hash = _best(lambda: manifest_rows([p.stem for p in clips], clips), args.repeats)
    clip_model(clips[0], "warm-up", cfg, seed=0, n_states=4, n_iter=20)  # imports, JIT
    t0 = time.perf_counter()
    for p in clips:
        clip_model(p, p.stem, cfg, seed=0, n_states=4, n_iter=20)
    t_feat = time.perf_counter() - t0
    print(
        f"clips: {len(clips)} WAVs ({mb:.1f} MiB): manifest {1e3 * t_hash / len(clips):.2f} "
        f"ms/clip, features + HMM {1e3 * t_feat / len(clips):.0f} ms/clip; "
        f"hash / features = {t_hash / t_feat:.4f}"
    )


if __name__ == "__main__":
    main()
