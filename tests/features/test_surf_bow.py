"""SURF/SIFT extraction on every input kind, bad images, shards, vocabulary, word counts."""

import binascii
import logging

import numpy as np
import PIL
import pytest
from PIL import Image

from kclf.features.surf_bow import (
    BadImageError,
    bag_of_words,
    extract_descriptors,
    fit_vocabulary,
    opencv_surf_available,
    read_grey,
)
from kclf_workflow.datasets.synthetic_voc import render_image
from kclf_workflow.shards import n_shards_for, shard_members, shard_of
from kclf_workflow.shards.images import extract_shard, load_shard, sample_descriptors, save_shard


@pytest.fixture(scope="module")
def scene():
    rgb, _ = render_image(7, "2010_000001", size=(160, 120))
    return rgb


@pytest.fixture
def files(tmp_path, scene):
    pil = Image.fromarray(scene)
    paths = {
        "png_rgb": tmp_path / "a.png",
        "png_grey": tmp_path / "b.png",
        "tif_cmyk": tmp_path / "c.tif",
        "jpg_rgb": tmp_path / "d.jpg",
        "jpg_cmyk": tmp_path / "e.jpg",
        "png_16": tmp_path / "f.png",
    }
    pil.save(paths["png_rgb"])
    pil.convert("L").save(paths["png_grey"])
    pil.convert("CMYK").save(paths["tif_cmyk"])
    pil.save(paths["jpg_rgb"], quality=95)
    pil.convert("CMYK").save(paths["jpg_cmyk"], quality=95)
    grey16 = np.asarray(pil.convert("L"), dtype=np.uint16) * 257  # 8-bit v -> 16-bit v*257
    Image.fromarray(grey16).save(paths["png_16"])
    return paths


def test_read_grey_every_kind_agrees(files):
    ref = read_grey(files["png_rgb"])
    assert ref.shape == (120, 160) and 0 <= ref.min() and ref.max() <= 1
    # lossless inputs: the same luma exactly (CMYK = 255 - RGB with K = 0 in Pillow)
    np.testing.assert_array_equal(read_grey(files["png_grey"]), ref)
    np.testing.assert_array_equal(read_grey(files["tif_cmyk"]), ref)
    np.testing.assert_allclose(read_grey(files["png_16"]), ref, atol=1e-12)
    # JPEG at quality 95: a few grey levels of error on average at most
    for k in ("jpg_rgb", "jpg_cmyk"):
        assert np.abs(read_grey(files[k]) - ref).mean() < 4 / 255


def test_corrupt_image_names_its_path(tmp_path, files, caplog):
    data = files["jpg_rgb"].read_bytes()
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(data[: len(data) // 2])
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not an image at all")
    for p in (bad, junk):
        with pytest.raises(BadImageError, match=str(p)):
            read_grey(p)
    with pytest.raises(BadImageError) as e:
        read_grey(junk)
    assert str(e.value) == (
        f"cannot read image {junk}: Pillow {PIL.__version__} cannot decode it "
        f"(UnidentifiedImageError: not an image format it knows); convert it to PNG or JPEG if "
        f"it opens elsewhere, or remove it"
    )
    ids, paths = ["good", "broken", "junk"], [files["jpg_rgb"], bad, junk]
    with pytest.raises(BadImageError, match="broken.jpg"):
        extract_shard(ids, paths)
    with caplog.at_level(logging.WARNING, logger="kclf_workflow.shards.images"):
        shard = extract_shard(ids, paths, skip_bad_images=True)
    messages = [r.getMessage() for r in caplog.records if r.name == "kclf_workflow.shards.images"]
    assert shard["ids"] == ["good"]
    assert [b[0] for b in shard["bad"]] == [str(bad), str(junk)]
    assert len(messages) == 2 and str(bad) in messages[0]
    assert shard["counts"].sum() == len(shard["descriptors"]) > 0


def test_surf_descriptors_are_unit_64d(scene):
    grey = np.asarray(Image.fromarray(scene).convert("L"), float) / 255
    d = extract_descriptors(grey)
    assert d.dtype == np.float32 and d.shape[1] == 64 and len(d) > 20
    # SURF normalises each descriptor to unit Euclidean length (Bay et al. 2008, Sec. 4.1)
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-4)
    assert len(extract_descriptors(np.full((64, 64), 0.5))) == 0  # no structure, no points
    few = extract_descriptors(grey, params={"max_points": 10})
    assert len(few) <= 10
    with pytest.raises(ValueError, match="nr_octave"):
        extract_descriptors(grey, params={"nr_octave": 3})


def test_sift_and_opencv_surf(scene):
    grey = np.asarray(Image.fromarray(scene).convert("L"), float) / 255
    d = extract_descriptors(grey, "sift", {"nfeatures": 50})
    assert d.shape[1] == 128 and 0 < len(d) <= 60
    if not opencv_surf_available():
        with pytest.raises(ValueError, match="mahotas"):
            extract_descriptors(grey, "opencv-surf")
    with pytest.raises(ValueError, match="detector"):
        extract_descriptors(grey, "orb")


def test_shard_assignment_is_by_id_only():
    ids = [f"2008_{k:06d}" for k in range(1, 301)]
    n = n_shards_for(len(ids), 50)
    assert n == 6 and n_shards_for(301, 50) == 7 and n_shards_for(0, 5) == 1
    # the documented hash: CRC-32 of the UTF-8 id (cached shards rely on it never changing)
    assert all(shard_of(i, n) == binascii.crc32(i.encode()) % n for i in ids)
    members = shard_members(ids, n)
    more = shard_members(ids + ["2012_999999"], n)
    changed = [s for s in members if members[s] != more[s]]
    assert changed == [shard_of("2012_999999", n)]
    sizes = np.array([len(v) for v in members.values()])
    assert sizes.sum() == 300 and sizes.min() > 25  # roughly even (binomial(300, 1/6))
    with pytest.raises(ValueError, match="n_shards"):
        shard_of("x", 0)


def test_shard_roundtrip_and_sample(tmp_path):
    rng = np.random.default_rng(0)
    paths = []
    for s, counts in enumerate(([3, 0, 4], [5], [])):
        D = rng.normal(size=(sum(counts), 64)).astype(np.float32) + 10 * s
        sh = {
            "ids": [f"s{s}_{i}" for i in range(len(counts))],
            "counts": np.array(counts, dtype=np.int64),
            "descriptors": D,
            "bad": [("/x/y.jpg", "truncated")] if s == 2 else [],
        }
        paths.append(save_shard(sh, tmp_path / f"{s}.npz"))
        back = load_shard(paths[-1])
        assert back["ids"] == sh["ids"] and back["bad"] == sh["bad"]
        np.testing.assert_array_equal(back["descriptors"], D)
    everything = np.concatenate([load_shard(p)["descriptors"] for p in paths])
    s1 = sample_descriptors(paths, 5, 42)
    np.testing.assert_array_equal(s1, sample_descriptors(paths, 5, 42))
    rows = {r.tobytes() for r in everything}
    assert len(s1) == 5 and len({r.tobytes() for r in s1}) == 5
    assert all(r.tobytes() in rows for r in s1)
    assert len(sample_descriptors(paths, 1000, 0)) == 12  # fewer than asked: all of them


def test_vocabulary_recovers_separated_clusters():
    rng = np.random.default_rng(1)
    centres = rng.normal(size=(8, 64)) * 10
    X = np.repeat(centres, 200, axis=0) + rng.normal(size=(1600, 64)) * 0.1
    km = fit_vocabulary(X, n_words=8, random_state=0, batch_size=256)
    d = np.linalg.norm(km.cluster_centers_[:, None] - centres[None], axis=2)
    assert np.sort(d.min(axis=1)).max() < 0.1  # every fitted centre sits on a true one
    assert len(set(d.argmin(axis=1))) == 8
    with pytest.raises(ValueError, match="n_words"):
        fit_vocabulary(X[:5], n_words=8)


def test_bag_of_words_counts_nearest_centres():
    rng = np.random.default_rng(2)
    C = rng.normal(size=(5, 3)).astype(np.float32)
    D = rng.normal(size=(11, 3)).astype(np.float32)
    counts = [4, 0, 7]
    H = bag_of_words(D, counts, C)
    expected = np.zeros((3, 5))
    owner = [0] * 4 + [2] * 7
    for row, img in zip(D, owner):
        expected[img, np.argmin(((C - row) ** 2).sum(1))] += 1
    np.testing.assert_array_equal(H, expected)
    Hn = bag_of_words(D, counts, C, normalize=True)
    np.testing.assert_allclose(Hn.sum(1), [1, 0, 1])
    np.testing.assert_allclose(Hn[2], expected[2] / 7)
    with pytest.raises(ValueError, match="counts"):
        bag_of_words(D, [4, 4], C)
