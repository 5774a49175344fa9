"""VOC loader on a hand-written VOCdevkit and on the generated one (labels match the XML)."""

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from kclf_workflow.datasets.synthetic_voc import image_ids, make_synthetic_voc
from kclf_workflow.datasets.voc import (
    VOC_CLASSES,
    image_path,
    image_paths,
    labels_from_annotations,
    list_image_ids,
    load_voc_labels,
    parse_annotation,
    resolve_voc_root,
)

XML = """<annotation><filename>{id}.jpg</filename>
<size><width>40</width><height>30</height><depth>3</depth></size>
{objects}</annotation>"""
OBJ = """<object><name>{name}</name><difficult>{d}</difficult>
<bndbox><xmin>1</xmin><ymin>2</ymin><xmax>10</xmax><ymax>12</ymax></bndbox></object>"""


def _write_devkit(root, images, classes=("cat", "dog", "person")):
    """images: {id: [(class, difficult)]}; writes labels the way the VOC devkit does."""
    main = root / "ImageSets" / "Main"
    main.mkdir(parents=True)
    (root / "Annotations").mkdir()
    (root / "JPEGImages").mkdir()
    for image_id, objs in images.items():
        body = "".join(OBJ.format(name=n, d=int(d)) for n, d in objs)
        (root / "Annotations" / f"{image_id}.xml").write_text(XML.format(id=image_id, objects=body))
        Image.new("RGB", (40, 30)).save(root / "JPEGImages" / f"{image_id}.jpg")
    (main / "trainval.txt").write_text("\n".join(images) + "\n")
    for c in classes:
        lines = []
        for image_id, objs in images.items():
            mine = [d for n, d in objs if n == c]
            lab = 1 if any(not d for d in mine) else (0 if mine else -1)
            lines.append(f"{image_id} {lab:2d}")
        (main / f"{c}_trainval.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def devkit(tmp_path):
    root = tmp_path / "VOCdevkit" / "VOC2010"
    _write_devkit(
        root,
        {
            "2008_000001": [("cat", False), ("dog", True)],  # dog only difficult -> label 0
            "2008_000002": [("person", False), ("person", True)],
            "2008_000003": [("dog", False)],
        },
    )
    return root


def test_hand_written_devkit_labels(devkit):
    classes = ("cat", "dog", "person")
    ids, Y = load_voc_labels(devkit, classes=classes)
    assert ids == ["2008_000001", "2008_000002", "2008_000003"]
    np.testing.assert_array_equal(Y, [[1, 1, 0], [0, 0, 1], [0, 1, 0]])
    _, Yn = load_voc_labels(devkit, classes=classes, difficult="negative")
    np.testing.assert_array_equal(Yn, [[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    assert Y.dtype == np.int8


def test_annotation_parse(devkit):
    ann = parse_annotation(devkit / "Annotations" / "2008_000001.xml")
    assert (ann["width"], ann["height"], ann["depth"]) == (40, 30, 3)
    assert [(o["name"], o["difficult"]) for o in ann["objects"]] == [("cat", False), ("dog", True)]
    assert ann["objects"][0]["bbox"] == (1, 2, 10, 12)


def test_resolve_root_accepts_parents(devkit):
    assert resolve_voc_root(devkit) == devkit
    assert resolve_voc_root(devkit.parent) == devkit
    assert resolve_voc_root(devkit.parent.parent) == devkit
    with pytest.raises(ValueError, match="voc_root"):
        resolve_voc_root(devkit / "JPEGImages")


def test_bad_inputs_name_the_problem(devkit):
    with pytest.raises(ValueError, match="difficult"):
        load_voc_labels(devkit, classes=("cat",), difficult="ignore")
    with pytest.raises(ValueError, match="'bird'"):
        load_voc_labels(devkit, classes=("cat", "bird"))
    (devkit / "ImageSets" / "Main" / "cat_trainval.txt").write_text("2008_000001 2\n")
    with pytest.raises(ValueError, match="cat_trainval.txt:1"):
        load_voc_labels(devkit, classes=("cat",))
    with pytest.raises(ValueError, match="2008_000009"):
        image_path(devkit, "2008_000009")
    (devkit / "Annotations" / "2008_000003.xml").write_text("<annotation>")
    with pytest.raises(ValueError, match="2008_000003.xml"):
        parse_annotation(devkit / "Annotations" / "2008_000003.xml")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = tmp_path_factory.mktemp("gen") / "VOCdevkit" / "VOC2010"
    ids = make_synthetic_voc(
        root,
        n_images=60,
        seed=3,
        size=(96, 72),
        grey_fraction=0.2,
        cmyk_fraction=0.1,
        png_fraction=0.2,
        difficult_fraction=0.3,
    )
    return root, ids


def test_generated_labels_match_xml(generated):
    root, ids = generated
    assert list_image_ids(root) == ids == image_ids(60)
    for mode in ("positive", "negative"):
        got_ids, Y = load_voc_labels(root, difficult=mode)
        assert got_ids == ids
        np.testing.assert_array_equal(Y, labels_from_annotations(root, ids, difficult=mode))
    # some images hold only difficult objects of a class: the two modes then differ
    _, Yp = load_voc_labels(root)
    _, Yn = load_voc_labels(root, difficult="negative")
    assert (Yp >= Yn).all() and (Yp > Yn).any()
    assert Yp.shape == (60, len(VOC_CLASSES))


def test_generated_formats(generated):
    root, ids = generated
    modes = set()
    for p in image_paths(root, ids):
        with Image.open(p) as im:
            modes.add((p.suffix, im.mode))
    assert {(".jpg", "RGB"), (".jpg", "L"), (".jpg", "CMYK"), (".png", "RGB")} <= modes


def test_generation_is_incremental(tmp_path):
    root = tmp_path / "VOC2010"
    make_synthetic_voc(root, n_images=4, seed=1, size=(64, 48))
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in (root / "JPEGImages").iterdir()}
    ids = make_synthetic_voc(root, n_images=5, seed=1, size=(64, 48))
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in (root / "JPEGImages").iterdir()}
    assert {p: after[p] for p in before} == before  # untouched: same bytes, same mtime
    assert len(after) == 5 and image_path(root, ids[-1]) in set(after) - set(before)
    with pytest.raises(ValueError, match="classes"):
        make_synthetic_voc(Path(tmp_path / "x"), n_images=2, classes=("unicorn",))
