"""Image representations of the MGPC paper's Table 1: gradient field, Gabor, Otsu binarisation."""

import numpy as np
import pytest

from kclf.features.image_repr import (
    binarize,
    gabor_bank,
    gabor_responses,
    gradient_field,
    otsu_threshold,
    represent,
)


def test_gradient_field_exact_on_affine_images():
    h, w = 7, 9
    yy, xx = np.mgrid[0:h, 0:w]
    images = np.stack([2.0 * yy - 0.5 * xx + 3, -1.0 * yy + 4.0 * xx])
    G = gradient_field(images)
    assert G.shape == (2, 2 * h * w)
    np.testing.assert_allclose(G[0, : h * w], 2.0)
    np.testing.assert_allclose(G[0, h * w :], -0.5)
    np.testing.assert_allclose(G[1, : h * w], -1.0)
    np.testing.assert_allclose(G[1, h * w :], 4.0)
    # flat rows with image_shape give the same
    np.testing.assert_allclose(gradient_field(images.reshape(2, -1), image_shape=(h, w)), G)


def _grating(theta, lam, size=41):
    yy, xx = np.mgrid[0:size, 0:size].astype(float)
    return np.cos(2 * np.pi * (xx * np.cos(theta) + yy * np.sin(theta)) / lam)


def test_gabor_response_is_the_correlation_with_the_kernel():
    rng = np.random.default_rng(0)
    im = rng.normal(size=(25, 25))
    bank = gabor_bank(n_orientations=3, wavelengths=(4.0,))
    R = gabor_responses(im[None], n_orientations=3, wavelengths=(4.0,)).reshape(3, 25, 25)
    for j, (_, _, even, odd) in enumerate(bank):
        half = even.shape[0] // 2
        for r, c in [(12, 12), (half, 20 - half), (25 - half - 1, half + 3)]:
            patch = im[r - half : r + half + 1, c - half : c + half + 1]
            expected = np.hypot((patch * even).sum(), (patch * odd).sum())
            assert R[j, r, c] == pytest.approx(expected, rel=1e-10, abs=1e-10)


def test_gabor_prefers_its_own_orientation_and_ignores_flat_regions():
    for k, theta in enumerate(np.arange(4) * np.pi / 4):
        R = gabor_responses(_grating(theta, 6.0)[None], wavelengths=(6.0,)).reshape(4, 41, 41)
        centre = R[:, 15:26, 15:26].mean(axis=(1, 2))
        assert np.argmax(centre) == k
    pooled = gabor_responses(_grating(0.0, 6.0)[None, :40, :40], wavelengths=(6.0,), pool=4)
    full = gabor_responses(_grating(0.0, 6.0)[None, :40, :40], wavelengths=(6.0,))
    np.testing.assert_allclose(
        pooled.reshape(4, 10, 10), full.reshape(4, 10, 4, 10, 4).mean(axis=(2, 4))
    )
    with pytest.raises(ValueError, match="pool must be"):
        gabor_responses(np.zeros((1, 10, 10)), pool=3)
    flat = gabor_responses(np.full((1, 20, 20), 7.0), wavelengths=(3.0,))
    np.testing.assert_allclose(flat, 0.0, atol=1e-9)


def test_otsu_maximises_between_class_variance():
    rng = np.random.default_rng(1)
    im = np.concatenate([rng.normal(60, 15, 300), rng.normal(180, 20, 200)]).clip(0, 255)
    im = np.round(im).reshape(20, 25)
    t, binary = otsu_threshold(im)

    def between(th):
        lo, hi = im[im <= th], im[im > th]
        if lo.size == 0 or hi.size == 0:
            return 0.0
        return lo.size * hi.size * (lo.mean() - hi.mean()) ** 2

    scale = (im.max() - im.min()) / 255.0
    candidates = im.min() + np.arange(256) * scale
    best = max(between(c) for c in candidates)
    assert between(t) == pytest.approx(best, rel=1e-12)
    np.testing.assert_array_equal(binary, (im > t).astype(float))
    B = binarize(np.stack([im, 255 - im]))
    assert set(np.unique(B)) <= {0.0, 1.0}
    assert B.shape == (2, im.size)
    assert otsu_threshold(np.ones((4, 4)))[1].sum() == 0


def test_represent_dispatch_and_bad_input():
    X = np.random.default_rng(0).random((3, 16))
    assert represent(X, "raw", (4, 4)).shape == (3, 16)
    assert represent(X, "gradient", (4, 4)).shape == (3, 32)
    assert represent(X, "binarization", (4, 4)).shape == (3, 16)
    assert represent(X, "gabor", (4, 4), n_orientations=2, wavelengths=(3.0,)).shape == (3, 32)
    with pytest.raises(ValueError, match="kind must be"):
        represent(X, "hog", (4, 4))
    with pytest.raises(ValueError, match="needs 25 columns"):
        represent(X, "gradient", (5, 5))
    with pytest.raises(ValueError, match=r"shape \(n, h, w\)"):
        gradient_field(X)
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        binarize(X, (4, 4))
