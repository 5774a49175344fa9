"""The parse-time helpers every family's rules share: the config's checks and key order,
the trial chunks, what a job's params hold, the mirror's and the user's files, and the
params of a manifest rule."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import jsonschema

from .. import config_checks
from ..methods import spec
from ..schemas import load_schema, read_yaml

#: the MULAN scene ARFF files, as the mirror holds them (kclf_workflow.datasets.mulan)
SCENE_MIRROR_DIR = "mulan"


def schema_error(schema_file, cfg, where):
    """One line naming the first key of ``cfg`` (the block ``where``; "" for the top level)
    that the JSON schema ``schema_file`` rejects, and why; None when it is valid."""
    validator = jsonschema.Draft202012Validator(load_schema(schema_file))
    errors = sorted(validator.iter_errors(cfg), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    e = errors[0]
    key = ".".join([where, *map(str, e.absolute_path)]).strip(".") or "(top level)"
    return f"invalid config: key '{key}': {e.message}"


def check_blocks(config, default_config):
    """A config given to the workflow as a module replaces ``config.yaml`` instead of being
    layered on it: it needs every block of ``default_config`` (the checkout's
    ``config.yaml``), or a family would fail on its key."""
    missing = [k for k in read_yaml(default_config) if k not in config]
    if missing:
        raise config_checks.ConfigError(
            f"invalid config: no key {', '.join(map(repr, missing))}: a config given to the "
            f"module replaces {default_config}, so start from a copy of it"
        )


def sorted_keys(node):
    """``node`` with every mapping's keys sorted: params built from a config block then do
    not depend on the order of the keys in the YAML file (reordering them reruns nothing)."""
    if isinstance(node, dict):
        return {k: sorted_keys(node[k]) for k in sorted(node, key=str)}
    if isinstance(node, list):
        return [sorted_keys(v) for v in node]
    return node


def trial_chunks(trials, per_job):
    """Labels ``first-last`` of the trial chunks: chunk k holds trials [k*m, (k+1)*m) of
    0..trials-1 (m = per_job). Trial t is drawn from the seed and t alone, so raising
    `trials` keeps every full chunk and adds (or extends) only the last ones
    (:func:`kclf_workflow.seeding.chunk_trials` reads a label back)."""
    return [f"{a}-{min(a + per_job, trials) - 1}" for a in range(0, trials, per_job)]


def pick(block, keys):
    """The config entries ``keys`` of ``block``: a fit's params hold only what it reads,
    so editing any other key (a report-only one, another method's grid, the trial count)
    reruns no fit."""
    return {k: block[k] for k in keys}


def fit_keys(family, experiment, method, keys):
    """``keys`` plus ``n_basis`` for a method of ``family`` whose spec takes LSPC's low-rank
    path when the family's experiment sets it (null = the exact model: the key stays out,
    so a finished exact run replans nothing), and the method's variant block (LSPC-new's
    ``lspc_new``: basis, class_weight) for the method that has one."""
    method_spec = spec(family, method)
    low_rank = experiment.get("n_basis") is not None and method_spec.low_rank
    variant = method_spec.variant is not None and method_spec.variant in experiment
    return (
        list(keys) + (["n_basis"] if low_rank else []) + ([method_spec.variant] if variant else [])
    )


def mirror_file(mirror, relpath):
    """Path of ``relpath`` inside the local data ``mirror``, or None when it is not there
    (or there is no mirror)."""
    if not mirror:
        return None
    path = Path(mirror) / relpath
    return str(path) if path.exists() else None


def existing_file(path):
    """``[path]`` when the configured file exists, else ``[]``: an optional input such as a
    paper's reference table, so a run outside this checkout's neighbourhood still works."""
    return [str(path)] if path and Path(path).is_file() else []


def path_key(path):
    """8 hex digits naming a folder outside the project by its absolute path (relative
    paths from the working directory): data folders of different sources never collide."""
    return hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:8]


def file_signature(paths):
    """``[(path, size, mtime_ns), ...]`` of existing files: the params of a manifest rule,
    so the manifest is rewritten when a file's bytes change even if its time goes back
    (a copy keeping the old time), not only when it gets newer than the manifest."""
    out = []
    for p in paths:
        st = os.stat(p)
        out.append((str(p), st.st_size, st.st_mtime_ns))
    return out


def user_entry(user_datasets, name):
    """The params of a data rule reading the user's data set ``name`` (None when it is not
    the user's): its entry, without sep / decimal while they are null (detected from the
    file, an input), so a finished run replans nothing until one of them is set."""
    if name not in user_datasets:
        return None
    entry = user_datasets[name]
    return {k: v for k, v in entry.items() if v is not None or k not in ("sep", "decimal")}


def user_files(user_datasets, name):
    """The files of the user's data set ``name`` (path, or train and test)."""
    entry = user_datasets[name]
    return [entry[k] for k in ("path", "train", "test") if entry.get(k) is not None]


def user_caption(user_datasets, name):
    """How captions name a data set: the name, and for the user's own where it comes from."""
    if name not in user_datasets:
        return name
    files = ", ".join(Path(f).name for f in user_files(user_datasets, name))
    return f"{name}, your data (datasets.{name}: {files})"


def scene_inputs(mirror, download_dir):
    """``(in_mirror, files)`` of MULAN scene (the scene and multilabel families, mgpc's
    scene tasks): the mirror's two ARFF files when it holds both, else the ones the
    workflow downloads into ``download_dir``."""
    from ..datasets.mulan import SCENE_FILES

    found = [mirror_file(mirror, f"{SCENE_MIRROR_DIR}/{f}") for f in SCENE_FILES]
    if all(found):
        return True, found
    return False, [f"{download_dir}/{f}" for f in SCENE_FILES]
