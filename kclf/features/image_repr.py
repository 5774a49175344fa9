"""The three image representations compared in Table 1 of the MGPC paper (Fradi et al.).

* :func:`gradient_field` — the image gradient ``(d/dy, d/dx)`` at every pixel (central
  differences, one-sided at the border; exact on affine images).
* :func:`gabor_responses` — magnitudes of a quadrature pair of Gabor filters (OpenCV's
  ``getGaborKernel``) over a bank of orientations and wavelengths.
* :func:`binarize` — per-image Otsu binarisation (OpenCV's ``THRESH_OTSU``).

Each takes ``images`` of shape ``(n, h, w)`` (or flat rows with ``image_shape=(h, w)``)
and returns one feature row per image.
"""

from __future__ import annotations

import cv2
import numpy as np

__all__ = [
    "gradient_field",
    "gabor_bank",
    "gabor_responses",
    "otsu_threshold",
    "binarize",
    "represent",
]

REPRESENTATIONS = ("gradient", "gabor", "binarization")


def as_images(X, image_shape=None):
    """``X`` as a float array of shape ``(n, h, w)``; flat rows need ``image_shape``."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 2 and image_shape is not None:
        h, w = image_shape
        if X.shape[1] != h * w:
            raise ValueError(
                f"image_shape={tuple(image_shape)} needs {h * w} columns, got {X.shape[1]}"
            )
        X = X.reshape(X.shape[0], h, w)
    if X.ndim != 3:
        raise ValueError(
            "images must have shape (n, h, w), or (n, h*w) with image_shape given; "
            f"got shape {X.shape}"
        )
    if not np.all(np.isfinite(X)):
        raise ValueError("images contain NaN or infinity")
    return X


def gradient_field(images, image_shape=None):
    """Gradient field: rows ``[d/dy of every pixel, d/dx of every pixel]`` (length ``2 h w``)."""
    X = as_images(images, image_shape)
    gy, gx = np.gradient(X, axis=(1, 2))
    n = X.shape[0]
    return np.hstack([gy.reshape(n, -1), gx.reshape(n, -1)])


def gabor_bank(n_orientations=4, wavelengths=(3.0, 6.0), bandwidth_sigma=0.56, gamma=0.5):
    """Quadrature pairs ``(even, odd)`` of OpenCV Gabor kernels.

    ``sigma = bandwidth_sigma * wavelength`` (about one octave); kernel size
    ``2 * ceil(3 sigma) + 1``; orientations ``theta = k pi / n_orientations``.
    """
    if n_orientations < 1:
        raise ValueError(f"n_orientations must be >= 1, got {n_orientations!r}")
    bank = []
    for lam in wavelengths:
        if not lam > 0:
            raise ValueError(f"wavelengths must be positive, got {wavelengths!r}")
        sigma = bandwidth_sigma * lam
        half = int(np.ceil(3 * sigma))
        size = (2 * half + 1, 2 * half + 1)
        for k in range(n_orientations):
            theta = k * np.pi / n_orientations
            even = cv2.getGaborKernel(size, sigma, theta, lam, gamma, 0.0, ktype=cv2.CV_64F)
            odd = cv2.getGaborKernel(size, sigma, theta, lam, gamma, -np.pi / 2, ktype=cv2.CV_64F)
            even -= even.mean()  # zero DC: flat regions give no response
            bank.append((float(theta), float(lam), even, odd))
    return bank


def gabor_responses(
    images,
    image_shape=None,
    n_orientations=4,
    wavelengths=(3.0, 6.0),
    bandwidth_sigma=0.56,
    pool=1,
):
    """Gabor energy ``sqrt(even^2 + odd^2)`` per pixel for every filter of :func:`gabor_bank`.

    Rows are ``[filter 0 map, filter 1 map, ...]``; borders are reflected
    (``cv2.BORDER_REFLECT_101``).  ``pool > 1`` averages each map over ``pool x pool``
    blocks (``h`` and ``w`` must be multiples of ``pool``), giving
    ``n_filters * (h/pool) * (w/pool)`` features.
    """
    X = as_images(images, image_shape)
    n, h, w = X.shape
    if not isinstance(pool, int) or pool < 1 or h % pool or w % pool:
        raise ValueError(f"pool must be a positive integer dividing h={h} and w={w}, got {pool!r}")
    bank = gabor_bank(n_orientations, wavelengths, bandwidth_sigma)
    out = np.empty((n, len(bank), h // pool, w // pool))
    for i in range(n):
        im = X[i]
        for j, (_, _, even, odd) in enumerate(bank):
            re = cv2.filter2D(im, cv2.CV_64F, even, borderType=cv2.BORDER_REFLECT_101)
            im_ = cv2.filter2D(im, cv2.CV_64F, odd, borderType=cv2.BORDER_REFLECT_101)
            energy = np.hypot(re, im_)
            out[i, j] = energy.reshape(h // pool, pool, w // pool, pool).mean(axis=(1, 3))
    return out.reshape(n, -1)


def otsu_threshold(image):
    """Otsu's threshold of one image on the 8-bit scale of its own range, as
    ``(threshold_in_image_units, binary_image)``; a constant image gives all zeros."""
    im = np.asarray(image, dtype=float)
    lo, hi = float(im.min()), float(im.max())
    if hi <= lo:
        return lo, np.zeros(im.shape)
    u8 = np.round((im - lo) * (255.0 / (hi - lo))).astype(np.uint8)
    t, binary = cv2.threshold(u8, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return lo + t * (hi - lo) / 255.0, binary.astype(float)


def binarize(images, image_shape=None):
    """Per-image Otsu binarisation: rows of 0/1 pixels (length ``h w``)."""
    X = as_images(images, image_shape)
    return np.stack([otsu_threshold(im)[1].ravel() for im in X])


def represent(X, kind, image_shape=None, **options):
    """Dispatch to one of :data:`REPRESENTATIONS` (``"raw"`` returns the flat pixels)."""
    if kind == "raw":
        return as_images(X, image_shape).reshape(len(X), -1)
    if kind == "gradient":
        return gradient_field(X, image_shape)
    if kind == "gabor":
        return gabor_responses(X, image_shape, **options)
    if kind == "binarization":
        return binarize(X, image_shape)
    raise ValueError(f"kind must be 'raw' or one of {REPRESENTATIONS}, got {kind!r}")
