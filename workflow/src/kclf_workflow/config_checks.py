"""The config's rules between keys, which its JSON schemas cannot say.

The workflow validates each block against ``workflow/schemas/<block>.schema.yaml`` when
it is parsed; what depends on two keys at once, or on the data a key points to, is
checked here, so that it is tested without a dry run.  Every check raises
:class:`ConfigError` with one line naming the key (the workflow turns it into its own
``WorkflowError`` before any job runs).
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "ConfigError",
    "audio_root_required",
    "folds_fit_classes",
    "n_select_fits",
    "leaves_test_items",
    "user_datasets",
    "voc_source",
    "voc_test_sets_disjoint",
]


class ConfigError(ValueError):
    """A config that no job can run: one line naming the key."""


def voc_source(voc):
    """Where the VOC family's images come from: ``"folder"`` (``voc.image_folder``),
    ``"devkit"`` (``voc.voc_root``), else ``voc.source`` (``synthetic`` or ``download``).

    ``image_folder`` excludes ``voc_root`` and ``classes`` (the classes of a folder are its
    subfolders); ``test_image_set`` needs a VOCdevkit, whose lists name the images."""
    if voc.get("image_folder") is not None:
        for key in ("voc_root", "classes"):
            if voc.get(key) is not None:
                raise ConfigError(
                    f"invalid config: key 'voc.{key}': give it or voc.image_folder, not both "
                    "(the classes of an image folder are its subfolders)"
                )
        source = "folder"
    else:
        source = "devkit" if voc.get("voc_root") else voc["source"]
    if voc.get("test_image_set") and source not in ("devkit", "download"):
        raise ConfigError(
            "invalid config: key 'voc.test_image_set' needs a VOCdevkit (voc.voc_root or "
            f"voc.source: download), not source {source}"
        )
    return source


def voc_test_sets_disjoint(image_set, listed):
    """``listed``: ``[(image set, its ids), ...]`` in order; a test set sharing images
    with an earlier one would score images the model was trained on."""
    seen = set()
    for name, ids in listed:
        both = seen & set(ids)
        if both:
            raise ConfigError(
                f"invalid config: key 'voc.test_image_set': {name} shares "
                f"{len(both)} image(s) with {image_set}, e.g. {sorted(both)[0]}"
            )
        seen |= set(ids)


def leaves_test_items(key, n_train, n_items, what):
    """``n_train`` must leave a test item of the ``n_items`` there are; ``what`` says
    what they are and where, e.g. ``"test image (the image set has 40 images)"``."""
    if n_train >= n_items:
        raise ConfigError(f"invalid config: key '{key}': {n_train} leaves no {what}")


def audio_root_required(audio):
    """A collection on disk (Freesound-style, UrbanSound8K, tag folders) needs its root;
    ESC-50 without one is downloaded."""
    if audio["source"] in ("freesound", "urbansound8k", "folder") and not audio.get("root"):
        raise ConfigError(
            f"invalid config: key 'audio.root' is required for source {audio['source']}"
        )


def n_select_fits(n_select, realisations):
    """``ida.n_select`` realisations choose the parameters: each data set (``{name:
    its number of realisations}``, fixed splits left out) must have that many."""
    for name, n in realisations.items():
        if n_select > n:
            raise ConfigError(
                f"invalid config: key 'ida.n_select': {n_select} exceeds the "
                f"{n} realisations of {name} (ida.realisations)"
            )


def folds_fit_classes(key, folds, smallest):
    """Stratified ``folds``-fold CV (the config key ``key``) needs ``folds`` rows of every
    class: ``smallest`` holds the rows of each data set's smallest class (``{name:
    rows}``)."""
    for name, rows in smallest.items():
        if folds > rows:
            raise ConfigError(
                f"invalid config: key '{key}': {folds} folds exceed the {rows} rows of the "
                f"smallest class of {name} (stratified folds need one row of each class in "
                "every fold)"
            )


def user_datasets(family, names, user, builtin):
    """The user's data sets among a family's ``names``: those not built into the family
    (``builtin``: name -> the config lists that know it); each must be a name under
    ``datasets:`` (``user``) whose files exist."""
    out = []
    for name in names:
        if f"{family}.datasets" in builtin.get(name, []):
            continue
        if name not in user:
            raise ConfigError(
                f"invalid config: key '{family}.datasets': {name!r} is neither a built-in "
                f"data set of {family} nor a name under datasets:"
            )
        for key in ("path", "train", "test"):
            path = user[name].get(key)
            if path is not None and not Path(path).is_file():
                raise ConfigError(f"invalid config: key 'datasets.{name}.{key}': no file {path}")
        out.append(name)
    return out
