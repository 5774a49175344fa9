"""A small generated image set in the exact VOCdevkit layout (the offline stand-in for VOC2010).

Each image is a photographic-like scene (a sky gradient over ground textured by 1/f
noise, both in random colours) with one to a few objects.  Every class is drawn as its
own shape filled with its own texture and hue, so bag-of-visual-words features can
tell the classes apart, yet not trivially (objects vary in size, position, rotation
and lighting; small objects are marked ``difficult``).  Most images are colour JPEGs;
given fractions are grey JPEGs, CMYK JPEGs and PNGs, to exercise every decoder path.

Every image is generated from its own seed stream (``seed``, its id), so asking for
more images later re-creates the same first images byte for byte, and files whose
content is unchanged are not rewritten: their modification times stay, and a workflow
recomputes only what depends on the new images.
"""

from __future__ import annotations

import io
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np
from PIL import Image, ImageDraw

from ..files import write_if_changed
from ..seeding import rng_for
from .voc import VOC_CLASSES, parse_annotation

SHAPES = ("ellipse", "rectangle", "triangle", "star", "hexagon")
TEXTURES = ("stripes", "checker", "dots", "rings")


def image_ids(n_images, year="2010"):
    """The ids ``<year>_000001``, ... of a generated set of ``n_images`` images."""
    return [f"{year}_{k:06d}" for k in range(1, n_images + 1)]


def _pink_noise(rng, h, w, beta=1.8):
    """Noise with a ``1/f**beta`` power spectrum, scaled to [0, 1] (natural-image-like)."""
    fy = np.fft.fftfreq(h)[:, None]
    fx = np.fft.rfftfreq(w)[None, :]
    f = np.sqrt(fx**2 + fy**2)
    f[0, 0] = 1.0
    spec = rng.standard_normal((h, w // 2 + 1)) + 1j * rng.standard_normal((h, w // 2 + 1))
    field = np.fft.irfft2(spec / f ** (beta / 2), s=(h, w))
    field -= field.min()
    return field / max(field.max(), 1e-12)


def _background(rng, h, w):
    sky_top, sky_bottom = rng.uniform(0.3, 1.0, 3), rng.uniform(0.5, 1.0, 3)
    ground_a, ground_b = rng.uniform(0.0, 0.7, 3), rng.uniform(0.1, 0.9, 3)
    horizon = int(h * rng.uniform(0.25, 0.6))
    t = np.linspace(0, 1, h)[:, None, None]
    img = (1 - t) * sky_top + t * sky_bottom
    img = np.broadcast_to(img, (h, w, 3)).copy()
    clouds = _pink_noise(rng, h, w, beta=2.2)[..., None]
    img = 0.8 * img + 0.2 * clouds
    ground = _pink_noise(rng, h, w, beta=1.6)[..., None]
    ground_rgb = (1 - ground) * ground_a + ground * ground_b
    img[horizon:] = ground_rgb[horizon:]
    return img


def _texture(j, h, w, rng):
    """Class ``j``'s texture (values in [0, 1]) on an ``h x w`` patch."""
    kind = TEXTURES[(j // len(SHAPES)) % len(TEXTURES)]
    period = 5.0 + 2.5 * (j % 4)
    angle = np.deg2rad(23.0 * j) + rng.uniform(-0.2, 0.2)
    y, x = np.mgrid[0:h, 0:w].astype(float)
    u = x * np.cos(angle) + y * np.sin(angle)
    v = -x * np.sin(angle) + y * np.cos(angle)
    if kind == "stripes":
        t = 0.5 + 0.5 * np.sin(2 * np.pi * u / period)
    elif kind == "checker":
        t = ((np.floor(u / period) + np.floor(v / period)) % 2).astype(float)
    elif kind == "dots":
        t = np.hypot((u % period) - period / 2, (v % period) - period / 2) < period / 3.5
        t = t.astype(float)
    else:
        r = np.hypot(x - w / 2, y - h / 2)
        t = 0.5 + 0.5 * np.cos(2 * np.pi * r / period)
    return t


def _class_colours(j):
    hue = (j * 0.381966) % 1.0
    base = np.array([np.cos(2 * np.pi * (hue + k / 3)) for k in range(3)]) * 0.45 + 0.5
    dark = base * 0.25
    return dark, base


def _shape_mask(shape, h, w, rotation):
    mask = Image.new("L", (w, h), 0)
    d = ImageDraw.Draw(mask)
    cx, cy, rx, ry = w / 2, h / 2, w / 2 - 1, h / 2 - 1
    if shape == "ellipse":
        d.ellipse([0, 0, w - 1, h - 1], fill=255)
    elif shape == "rectangle":
        d.rectangle([w * 0.05, h * 0.1, w * 0.95, h * 0.9], fill=255)
    else:
        if shape == "triangle":
            angles, radii = np.arange(3) * 2 * np.pi / 3, np.ones(3)
        elif shape == "star":
            angles, radii = np.arange(10) * np.pi / 5, np.tile([1.0, 0.45], 5)
        else:
            angles, radii = np.arange(6) * np.pi / 3, np.ones(6)
        angles = angles + rotation
        pts = [(cx + rx * r * np.cos(a), cy + ry * r * np.sin(a)) for a, r in zip(angles, radii)]
        d.polygon(pts, fill=255)
    return np.asarray(mask, dtype=float) / 255.0


def _draw_object(img, rng, j, box):
    x0, y0, x1, y1 = box
    h, w = y1 - y0, x1 - x0
    tex = _texture(j, h, w, rng)
    dark, light = _class_colours(j)
    light = np.clip(light * rng.uniform(0.75, 1.15), 0, 1)
    patch = dark + tex[..., None] * (light - dark)
    mask = _shape_mask(SHAPES[j % len(SHAPES)], h, w, rng.uniform(0, 2 * np.pi))[..., None]
    img[y0:y1, x0:x1] = mask * patch + (1 - mask) * img[y0:y1, x0:x1]


def render_image(
    seed, image_id, classes=VOC_CLASSES, size=(320, 240), max_objects=3, difficult_fraction=0.15
):
    """One scene: ``(rgb uint8 array of shape (h, w, 3), objects)``; ``objects`` as in
    :func:`kclf_workflow.datasets.voc.parse_annotation` (names from ``classes``)."""
    rng = rng_for(seed, "synthetic_voc", image_id)
    w, h = size
    img = _background(rng, h, w)
    objects = []
    for _ in range(int(rng.integers(1, max_objects + 1))):
        cls = str(classes[int(rng.integers(len(classes)))])
        j = VOC_CLASSES.index(cls) if cls in VOC_CLASSES else len(objects)
        difficult = bool(rng.random() < difficult_fraction)
        frac = rng.uniform(0.10, 0.15) if difficult else rng.uniform(0.28, 0.55)
        ow = max(8, int(frac * min(w, h) * rng.uniform(0.8, 1.5)))
        oh = max(8, int(frac * min(w, h) * rng.uniform(0.8, 1.3)))
        x0 = int(rng.integers(0, w - ow))
        y0 = int(rng.integers(0, h - oh))
        _draw_object(img, rng, j, (x0, y0, x0 + ow, y0 + oh))
        objects.append(
            {"name": cls, "difficult": difficult, "bbox": (x0 + 1, y0 + 1, x0 + ow, y0 + oh)}
        )
    img *= rng.uniform(0.7, 1.1)
    img += rng.normal(0, 0.02, img.shape)
    return (np.clip(img, 0, 1) * 255).round().astype(np.uint8), objects


def annotation_xml(image_id, filename, width, height, depth, objects):
    """A VOC-style ``Annotations/<id>.xml`` text."""
    parts = [
        "<annotation>",
        "\t<folder>VOC2010</folder>",
        f"\t<filename>{escape(filename)}</filename>",
        "\t<source><database>kclf synthetic VOC</database></source>",
        f"\t<size><width>{width}</width><height>{height}</height><depth>{depth}</depth></size>",
        "\t<segmented>0</segmented>",
    ]
    for obj in objects:
        x0, y0, x1, y1 = obj["bbox"]
        parts += [
            "\t<object>",
            f"\t\t<name>{escape(obj['name'])}</name>",
            "\t\t<pose>Unspecified</pose>",
            "\t\t<truncated>0</truncated>",
            f"\t\t<difficult>{int(obj['difficult'])}</difficult>",
            f"\t\t<bndbox><xmin>{x0}</xmin><ymin>{y0}</ymin><xmax>{x1}</xmax><ymax>{y1}</ymax></bndbox>",
            "\t</object>",
        ]
    parts.append("</annotation>")
    return "\n".join(parts) + "\n"


def _encode(rgb, mode):
    buf = io.BytesIO()
    pil = Image.fromarray(rgb, "RGB")
    if mode == "grey":
        pil.convert("L").save(buf, format="JPEG", quality=90)
    elif mode == "cmyk":
        pil.convert("CMYK").save(buf, format="JPEG", quality=90)
    elif mode == "png":
        pil.save(buf, format="PNG")
    else:
        pil.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _check_settings(classes, grey_fraction, cmyk_fraction, png_fraction):
    unknown = [c for c in classes if c not in VOC_CLASSES]
    if unknown or len(classes) == 0:
        raise ValueError(f"classes must be a non-empty subset of VOC_CLASSES, bad: {unknown}")
    fracs = (grey_fraction, cmyk_fraction, png_fraction)
    if min(fracs) < 0 or sum(fracs) > 1:
        raise ValueError(f"grey/cmyk/png fractions must be >= 0 with sum <= 1, got {fracs}")


def image_mode(seed, image_id, grey_fraction=0.1, cmyk_fraction=0.05, png_fraction=0.1):
    """How image ``image_id`` is stored: ``"grey"``, ``"cmyk"`` (JPEG), ``"png"`` or ``"rgb"``
    (JPEG), drawn from the image's own stream."""
    u = rng_for(seed, "synthetic_voc", image_id, "format").random()
    if u < grey_fraction:
        return "grey"
    if u < grey_fraction + cmyk_fraction:
        return "cmyk"
    if u < grey_fraction + cmyk_fraction + png_fraction:
        return "png"
    return "rgb"


def image_filename(seed, image_id, grey_fraction=0.1, cmyk_fraction=0.05, png_fraction=0.1):
    """File name of ``image_id`` in ``JPEGImages/`` (known without rendering the image)."""
    mode = image_mode(seed, image_id, grey_fraction, cmyk_fraction, png_fraction)
    return f"{image_id}.png" if mode == "png" else f"{image_id}.jpg"


def write_images(
    root,
    ids,
    classes=VOC_CLASSES,
    seed=0,
    size=(320, 240),
    max_objects=3,
    difficult_fraction=0.15,
    grey_fraction=0.1,
    cmyk_fraction=0.05,
    png_fraction=0.1,
):
    """Render ``ids`` into ``root/JPEGImages`` and ``root/Annotations``; only changed
    files are written.  Returns the image paths."""
    _check_settings(classes, grey_fraction, cmyk_fraction, png_fraction)
    root = Path(root)
    paths = []
    for image_id in ids:
        rgb, objects = render_image(seed, image_id, classes, size, max_objects, difficult_fraction)
        mode = image_mode(seed, image_id, grey_fraction, cmyk_fraction, png_fraction)
        name = f"{image_id}.png" if mode == "png" else f"{image_id}.jpg"
        path = root / "JPEGImages" / name
        write_if_changed(path, _encode(rgb, mode))
        depth = 1 if mode == "grey" else 3
        xml = annotation_xml(image_id, name, size[0], size[1], depth, objects)
        write_if_changed(root / "Annotations" / f"{image_id}.xml", xml)
        paths.append(path)
    return paths


def write_image_sets(root, ids, classes=VOC_CLASSES, image_set="trainval"):
    """Write ``ImageSets/Main/<image_set>.txt`` and ``<class>_<image_set>.txt`` from the
    annotations the way the VOC devkit labels images: 1 (a non-difficult object of the
    class), 0 (only difficult ones), -1 (none)."""
    root = Path(root)
    labels = {c: [] for c in classes}
    for image_id in ids:
        objects = parse_annotation(root / "Annotations" / f"{image_id}.xml")["objects"]
        for c in classes:
            present = [o["difficult"] for o in objects if o["name"] == c]
            lab = 1 if any(not d for d in present) else (0 if present else -1)
            labels[c].append(f"{image_id} {lab:2d}")
    main = root / "ImageSets" / "Main"
    written = [main / f"{image_set}.txt"]
    write_if_changed(written[0], "\n".join(ids) + "\n")
    for c in classes:
        written.append(main / f"{c}_{image_set}.txt")
        write_if_changed(written[-1], "\n".join(labels[c]) + "\n")
    return written


def make_synthetic_voc(
    root,
    n_images=120,
    classes=VOC_CLASSES,
    seed=0,
    size=(320, 240),
    max_objects=3,
    difficult_fraction=0.15,
    grey_fraction=0.1,
    cmyk_fraction=0.05,
    png_fraction=0.1,
    year="2010",
):
    """Write a generated image set in the VOCdevkit layout under ``root`` (the ``VOC<year>``
    folder): ``JPEGImages/``, ``Annotations/``, ``ImageSets/Main/trainval.txt`` and
    ``<class>_trainval.txt`` (see :func:`write_image_sets`).

    Only files whose content changes are written.  Returns the list of image ids.
    """
    if int(n_images) < 1:
        raise ValueError(f"n_images must be >= 1, got {n_images!r}")
    ids = image_ids(int(n_images), year)
    write_images(
        root,
        ids,
        classes,
        seed,
        size,
        max_objects,
        difficult_fraction,
        grey_fraction,
        cmyk_fraction,
        png_fraction,
    )
    write_image_sets(root, ids, classes)
    return ids
