"""SURF descriptors and bag of visual words (LSPC-new paper, Sec. 4.1).

The paper extracts SURF [Bay et al. 2008] from every image, clusters the descriptors by
k-means into 500 *visual words* and describes each image by its 500 word counts.

Pipeline pieces, each usable on its own and each one workflow stage:

* :func:`read_grey` decodes any image Pillow reads (colour, grey, CMYK, PNG, 16-bit) to a
  grey float image in [0, 1]; an undecodable file raises :class:`BadImageError` naming it,
  the decoder (Pillow, with its version), its error and what to do, in one line.
* :func:`extract_descriptors` runs the detector: ``"surf"`` is mahotas' SURF (in the PyPI
  wheels; OpenCV's wheels exclude SURF), ``"opencv-surf"`` OpenCV's SURF where the build
  has it (:func:`opencv_surf_available`), ``"sift"`` OpenCV's SIFT (128-d).
* :func:`fit_vocabulary` fits MiniBatchKMeans on descriptors (the workflow: a seeded
  uniform sample drawn across its shards); :func:`bag_of_words` counts words per image.

The workflow's sharding and shard files are in its own code (``kclf_workflow.shards``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import PIL
from PIL import Image, UnidentifiedImageError

__all__ = [
    "BadImageError",
    "opencv_surf_available",
    "read_grey",
    "descriptor_dim",
    "extract_descriptors",
    "fit_vocabulary",
    "bag_of_words",
]

DETECTORS = ("surf", "opencv-surf", "sift")
SURF_DEFAULTS = {
    "nr_octaves": 4,
    "nr_scales": 6,
    "initial_step_size": 1,
    "threshold": 0.1,
    "max_points": 1024,
}
SIFT_DEFAULTS = {"nfeatures": 1024}
OPENCV_SURF_DEFAULTS = {"hessianThreshold": 400.0}


class BadImageError(ValueError):
    """An image file that cannot be decoded; the message names the file."""

    def __init__(self, path, reason):
        self.path = str(path)
        self.reason = str(reason)
        super().__init__(f"cannot read image {self.path}: {self.reason}")


def _undecodable_reason(path, exc):
    """Why Pillow could not decode ``path``, in one line, and what to do."""
    if not Path(path).is_file():
        return "no such file"
    if isinstance(exc, UnidentifiedImageError):
        said = "not an image format it knows"
    else:
        said = str(exc).replace(repr(str(path)), "the file").replace(str(path), "the file")
        said = " ".join(said.split()).rstrip(".")
    return (
        f"Pillow {PIL.__version__} cannot decode it ({type(exc).__name__}: {said}); "
        f"convert it to PNG or JPEG if it opens elsewhere, or remove it"
    )


def read_grey(path):
    """Decode ``path`` to a 2-D float64 grey image in [0, 1].

    Colour is converted with ITU-R 601 luma (Pillow's ``"L"``); CMYK goes through RGB
    first; 16-bit and float images are rescaled by their type's range.  Truncated or
    corrupt files raise :class:`BadImageError` (Pillow's lenient truncated-image mode
    is not used, so a broken JPEG is never half-read silently).
    """
    try:
        with Image.open(path) as im:
            im.load()
            if im.mode in ("I;16", "I;16B", "I;16L", "I"):
                a = np.asarray(im, dtype=np.float64)
                scale = 65535.0 if im.mode.startswith("I;16") or a.max() > 255 else 255.0
                return np.clip(a / scale, 0.0, 1.0)
            if im.mode == "F":
                a = np.asarray(im, dtype=np.float64)
                return np.clip(a, 0.0, 1.0)
            if im.mode in ("CMYK", "P", "PA", "RGBA", "LA", "YCbCr", "1"):
                im = im.convert("RGB")
            grey = im.convert("L")
            a = np.asarray(grey, dtype=np.float64) / 255.0
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as exc:
        raise BadImageError(path, _undecodable_reason(path, exc)) from exc
    if a.ndim != 2 or min(a.shape) < 16:
        raise BadImageError(path, f"image too small for feature detection, shape {a.shape}")
    return a


def opencv_surf_available():
    """True when the installed OpenCV build has SURF (the PyPI wheels do not)."""
    try:
        import cv2

        cv2.xfeatures2d.SURF_create()
        return True
    except Exception:  # noqa: BLE001 - absent module or "patented, excluded" error
        return False


def _params(detector, params):
    defaults = {"surf": SURF_DEFAULTS, "sift": SIFT_DEFAULTS, "opencv-surf": OPENCV_SURF_DEFAULTS}
    if detector not in defaults:
        raise ValueError(f"detector must be one of {DETECTORS}, got {detector!r}")
    params = dict(params or {})
    unknown = set(params) - set(defaults[detector])
    if unknown:
        raise ValueError(
            f"unknown {detector} parameter(s) {sorted(unknown)}; "
            f"known: {sorted(defaults[detector])}"
        )
    return {**defaults[detector], **params}


def descriptor_dim(detector, params=None):
    """Length of one descriptor of ``detector``."""
    p = _params(detector, params)
    if detector == "sift":
        return 128
    if detector == "opencv-surf":
        return 128 if p.get("extended") else 64
    return 64


def extract_descriptors(grey, detector="surf", params=None):
    """Local descriptors of a grey image as a float32 ``(n_points, dim)`` array.

    ``params`` override the detector's defaults (:data:`SURF_DEFAULTS` are mahotas'
    own defaults; :data:`SIFT_DEFAULTS`, :data:`OPENCV_SURF_DEFAULTS`).
    """
    p = _params(detector, params)
    grey = np.asarray(grey, dtype=np.float64)
    if grey.ndim != 2:
        raise ValueError(f"grey image must be 2-D, got shape {grey.shape}")
    if detector == "surf":
        import mahotas.features.surf

        # mahotas' threshold refers to the 0..255 intensity scale.
        d = mahotas.features.surf.surf(grey * 255.0, descriptor_only=True, **p)
        return np.asarray(d, dtype=np.float32).reshape(-1, 64)
    import cv2

    u8 = np.clip(grey * 255.0 + 0.5, 0, 255).astype(np.uint8)
    if detector == "sift":
        algo = cv2.SIFT_create(**p)
    else:
        if not opencv_surf_available():
            raise ValueError(
                "detector='opencv-surf' needs an OpenCV build with SURF (the PyPI wheels "
                "exclude it); use detector='surf' (mahotas) instead"
            )
        algo = cv2.xfeatures2d.SURF_create(**p)
    _, d = algo.detectAndCompute(u8, None)
    dim = descriptor_dim(detector, params)
    return np.zeros((0, dim), np.float32) if d is None else np.asarray(d, np.float32)


def fit_vocabulary(descriptors, n_words=500, random_state=0, batch_size=4096, n_init=3):
    """MiniBatchKMeans with ``n_words`` centres on ``descriptors``; returns the fitted model."""
    from sklearn.cluster import MiniBatchKMeans

    X = np.asarray(descriptors, dtype=np.float32)
    if X.ndim != 2 or X.shape[0] < n_words:
        raise ValueError(
            f"descriptors: need at least n_words={n_words} rows to fit the vocabulary, "
            f"got shape {X.shape}"
        )
    km = MiniBatchKMeans(
        n_clusters=int(n_words),
        random_state=random_state,
        batch_size=int(batch_size),
        n_init=int(n_init),
    )
    return km.fit(X)


def bag_of_words(descriptors, counts, centres, normalize=False):
    """One word-count vector per image: ``(n_images, n_words)`` float64.

    ``descriptors`` are the images' descriptors stacked in order, ``counts`` how many
    belong to each image; each descriptor counts for its nearest centre (Euclidean).
    With ``normalize=True`` each row is divided by its sum (L1; all-zero rows stay 0).
    """
    from sklearn.metrics import pairwise_distances_argmin

    centres = np.asarray(centres, dtype=np.float32)
    counts = np.asarray(counts, dtype=np.int64)
    n_words = centres.shape[0]
    if counts.sum() != len(descriptors):
        raise ValueError(
            f"counts sum to {counts.sum()} but there are {len(descriptors)} descriptors"
        )
    H = np.zeros((len(counts), n_words))
    if len(descriptors):
        words = pairwise_distances_argmin(np.asarray(descriptors, np.float32), centres)
        owner = np.repeat(np.arange(len(counts)), counts)
        np.add.at(H, (owner, words), 1.0)
    if normalize:
        s = H.sum(axis=1, keepdims=True)
        H = np.divide(H, s, out=np.zeros_like(H), where=s > 0)
    return H
