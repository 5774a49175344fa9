"""PASCAL VOC classification labels from a VOCdevkit folder (LSPC-new paper, Sec. 4.1).

Layout read (the official VOCdevkit one)::

    <root>/JPEGImages/<id>.jpg
    <root>/Annotations/<id>.xml
    <root>/ImageSets/Main/<image_set>.txt            one id per line
    <root>/ImageSets/Main/<class>_<image_set>.txt    "<id> <label>", label in {1, -1, 0}

``root`` is the year folder (``VOCdevkit/VOC2010``); :func:`resolve_voc_root` also
accepts the ``VOCdevkit`` folder or the folder the archive was extracted into.

How "difficult" (label 0) is counted
------------------------------------
In the ImageSets files, 0 means the image holds objects of the class but all of them
are marked ``difficult`` in the annotation.  The object *is* in the image, so by
default (``difficult="positive"``) such an image counts as a positive of that task:
the 0/1 matrix says "the class is present".  ``difficult="negative"`` counts it as
absent instead (the VOC challenge ignores these images in its own evaluation; a 0/1
matrix over all images cannot ignore them, so this is the only other choice).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

VOC_CLASSES = (
    "aeroplane",
    "bicycle",
    "bird",
    "boat",
    "bottle",
    "bus",
    "car",
    "cat",
    "chair",
    "cow",
    "diningtable",
    "dog",
    "horse",
    "motorbike",
    "person",
    "pottedplant",
    "sheep",
    "sofa",
    "train",
    "tvmonitor",
)

IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".JPG", ".JPEG", ".PNG")
DIFFICULT_MODES = ("positive", "negative")


def resolve_voc_root(path, year="2010"):
    """The ``VOC<year>`` folder holding ``ImageSets/``, given it, ``VOCdevkit`` or their parent."""
    path = Path(path)
    for cand in (path, path / f"VOC{year}", path / "VOCdevkit" / f"VOC{year}"):
        if (cand / "ImageSets" / "Main").is_dir():
            return cand
    raise ValueError(
        f"voc_root {str(path)!r}: no ImageSets/Main found there, nor under VOC{year}/ "
        f"or VOCdevkit/VOC{year}/ (expected the VOCdevkit layout)"
    )


def _main(root):
    return Path(root) / "ImageSets" / "Main"


def list_image_ids(root, image_set="trainval", classes=VOC_CLASSES):
    """Image ids of ``image_set`` in the order of ``<image_set>.txt``.

    Without that file, the ids of the first class file are used (every class file of
    an image set lists the same images).
    """
    main = _main(root)
    listing = main / f"{image_set}.txt"
    if not listing.is_file():
        listing = main / f"{classes[0]}_{image_set}.txt"
    if not listing.is_file():
        raise ValueError(
            f"image_set {image_set!r}: neither {image_set}.txt nor a class file in {main}"
        )
    ids = [line.split()[0] for line in listing.read_text().splitlines() if line.strip()]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{listing}: duplicate image ids")
    return ids


def read_class_labels(root, cls, image_set="trainval"):
    """``{id: label}`` from ``<cls>_<image_set>.txt`` with labels in {1, -1, 0}."""
    path = _main(root) / f"{cls}_{image_set}.txt"
    if not path.is_file():
        raise ValueError(f"class {cls!r}: missing label file {path}")
    out = {}
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or parts[1] not in ("1", "-1", "0"):
            raise ValueError(f"{path}:{lineno}: expected '<id> <1|-1|0>', got {line!r}")
        out[parts[0]] = int(parts[1])
    return out


def load_voc_labels(root, image_set="trainval", classes=VOC_CLASSES, difficult="positive"):
    """The ``n x len(classes)`` 0/1 label matrix of an image set.

    Parameters
    ----------
    root : path
        The ``VOC<year>`` folder (see :func:`resolve_voc_root`).
    image_set : str
        ``"trainval"`` (the list the paper's experiment draws from), ``"train"`` or ``"val"``.
    classes : sequence of str
        Class names; the columns of the matrix in this order.
    difficult : {"positive", "negative"}
        How label 0 (only difficult objects of the class) is counted; see the module
        docstring.

    Returns
    -------
    ids : list of str
    Y : ndarray of shape (n_images, n_classes), dtype int8
    """
    if difficult not in DIFFICULT_MODES:
        raise ValueError(f"difficult must be one of {DIFFICULT_MODES}, got {difficult!r}")
    ids = list_image_ids(root, image_set, classes)
    Y = np.zeros((len(ids), len(classes)), dtype=np.int8)
    zero_value = 1 if difficult == "positive" else 0
    for j, cls in enumerate(classes):
        labels = read_class_labels(root, cls, image_set)
        missing = [i for i in ids if i not in labels]
        if missing:
            raise ValueError(
                f"class {cls!r}: {len(missing)} image(s) of {image_set} lack a label, "
                f"e.g. {missing[0]!r}"
            )
        lab = np.array([labels[i] for i in ids])
        Y[:, j] = np.where(lab == 1, 1, np.where(lab == 0, zero_value, 0))
    return ids, Y


def voc_dataset(rows, root, image_sets, classes, difficult="positive"):
    """The arrays of the VOC data set (rule voc_dataset) from the images' word counts.

    ``rows`` maps image id -> bag-of-words row (images left out as unreadable are absent
    and skipped).  ``image_sets``: one set (random splits later), or two, ``[train,
    test]``: the images of the first come first and ``n_train`` says how many (the
    experiment's trial 0 trains on them and tests on the rest).  Returns ``X``, ``Y``,
    ``ids``, ``classes`` (and ``n_train``).
    """
    ids, Ys, n_first = [], [], None
    for image_set in image_sets:
        got, Y = load_voc_labels(root, image_set, classes, difficult)
        ids += got
        Ys.append(Y)
        n_first = len(ids) if n_first is None else n_first
    keep = [k for k, i in enumerate(ids) if i in rows]
    out = {
        "X": np.stack([rows[ids[k]] for k in keep]),
        "Y": np.concatenate(Ys)[keep],
        "ids": np.asarray(ids, dtype=str)[keep],
        "classes": np.asarray(classes),
    }
    if len(image_sets) > 1:
        out["n_train"] = np.int64(sum(k < n_first for k in keep))
    return out


def parse_annotation(path):
    """One ``Annotations/<id>.xml`` as ``{"filename", "width", "height", "depth", "objects"}``;
    ``objects`` is a list of ``{"name", "difficult", "bbox": (xmin, ymin, xmax, ymax)}``."""
    try:
        tree = ET.parse(path)
    except (ET.ParseError, OSError) as exc:
        raise ValueError(f"annotation {path}: cannot parse ({exc})") from exc
    root = tree.getroot()
    size = root.find("size")

    def _int(node, tag, default=0):
        if node is None or node.find(tag) is None or not (node.find(tag).text or "").strip():
            return default
        return int(float(node.find(tag).text))

    objects = []
    for obj in root.findall("object"):
        box = obj.find("bndbox")
        objects.append(
            {
                "name": obj.findtext("name", "").strip(),
                "difficult": bool(_int(obj, "difficult")),
                "bbox": tuple(_int(box, t) for t in ("xmin", "ymin", "xmax", "ymax")),
            }
        )
    return {
        "filename": root.findtext("filename", "").strip(),
        "width": _int(size, "width"),
        "height": _int(size, "height"),
        "depth": _int(size, "depth"),
        "objects": objects,
    }


def labels_from_annotations(root, ids, classes=VOC_CLASSES, difficult="positive"):
    """The 0/1 matrix recomputed from the XML annotations (same ``difficult`` rule):
    a class is present when the image has an object of it, non-difficult or, with
    ``difficult="positive"``, difficult."""
    if difficult not in DIFFICULT_MODES:
        raise ValueError(f"difficult must be one of {DIFFICULT_MODES}, got {difficult!r}")
    index = {c: j for j, c in enumerate(classes)}
    Y = np.zeros((len(ids), len(classes)), dtype=np.int8)
    for i, image_id in enumerate(ids):
        ann = parse_annotation(Path(root) / "Annotations" / f"{image_id}.xml")
        for obj in ann["objects"]:
            j = index.get(obj["name"])
            if j is not None and (difficult == "positive" or not obj["difficult"]):
                Y[i, j] = 1
    return Y


def image_path(root, image_id):
    """Path of the image file of ``image_id`` in ``JPEGImages/`` (``.jpg`` first, then
    other extensions)."""
    folder = Path(root) / "JPEGImages"
    for ext in IMAGE_EXTENSIONS:
        p = folder / f"{image_id}{ext}"
        if p.exists():
            return p
    raise ValueError(f"image {image_id!r}: no file {image_id}.jpg (or .png) in {folder}")


def image_paths(root, ids):
    """:func:`image_path` for many ids, listing ``JPEGImages/`` once."""
    folder = Path(root) / "JPEGImages"
    by_stem = {}
    for p in sorted(folder.iterdir()) if folder.is_dir() else []:
        if p.suffix in IMAGE_EXTENSIONS:
            by_stem.setdefault(p.stem, p)
    missing = [i for i in ids if i not in by_stem]
    if missing:
        raise ValueError(f"{len(missing)} image(s) have no file in {folder}, e.g. {missing[0]!r}")
    return [by_stem[i] for i in ids]
