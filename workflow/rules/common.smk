# Shared by every stage: config validation, the list of final outputs, small helpers.
import os
from pathlib import Path

import jsonschema
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from kclf.repro import config_checks as _checks
from kclf.repro import methods as METHOD_REGISTRY
from kclf.repro import schemas as _schemas
from kclf.repro.datasets import user_data as _user_data
from kclf.repro.seeding import chunk_trials


def _checkout():
    """The folder holding this workflow (its Snakefile, schemas, lock). Not
    ``workflow.basedir``: when another project uses the workflow as a module, that is the
    other project's folder."""
    try:
        return Path(workflow.current_basedir).parents[1]
    except TypeError:
        raise WorkflowError(
            "the kclf workflow runs from a local checkout: give the module's snakefile as "
            "the path of a clone's Snakefile, not a remote source"
        ) from None


WORKFLOW_ROOT = _checkout()
SCHEMAS = WORKFLOW_ROOT / "workflow" / "schemas"


include: "envs.smk"


def _check_against(schema_file, cfg, where):
    """Reject the config before any job, in one line naming the key and the problem."""
    validator = jsonschema.Draft202012Validator(_schemas.load_schema(schema_file))
    errors = sorted(validator.iter_errors(cfg), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        key = ".".join([where, *map(str, e.absolute_path)]).strip(".") or "(top level)"
        raise WorkflowError(f"invalid config: key '{key}': {e.message}")
    validate(cfg, str(schema_file), set_default=True)


_check_against(SCHEMAS / "config.schema.yaml", config, "")
# A module's config (`module kclf: config: ...`) replaces config.yaml instead of being
# layered on it: it needs every block of config.yaml, or a family would fail on its key.
_DEFAULT_CONFIG = WORKFLOW_ROOT / "config.yaml"
_missing = [k for k in yaml.safe_load(_DEFAULT_CONFIG.read_text()) if k not in config]
if _missing:
    raise WorkflowError(
        f"invalid config: no key {', '.join(map(repr, _missing))}: a config given to the "
        f"module replaces {_DEFAULT_CONFIG}, so start from a copy of it"
    )
for _family, _cfg in config.items():
    if isinstance(_cfg, dict) and (SCHEMAS / f"{_family}.schema.yaml").exists():
        _check_against(SCHEMAS / f"{_family}.schema.yaml", _cfg, _family)


def _sorted_keys(node):
    """``node`` with every mapping's keys sorted: params built from a config block then do
    not depend on the order of the keys in the YAML file (reordering them reruns nothing)."""
    if isinstance(node, dict):
        return {k: _sorted_keys(node[k]) for k in sorted(node, key=str)}
    if isinstance(node, list):
        return [_sorted_keys(v) for v in node]
    return node


for _key in list(config):
    config[_key] = _sorted_keys(config[_key])

# Your own data sets (the top-level block datasets:): names that clash with no built-in one.
USER_DATASETS = config.get("datasets") or {}
BUILTIN_DATASETS = _user_data.builtin_dataset_names(SCHEMAS)
for _name in USER_DATASETS:
    try:
        _user_data.check_dataset_name(_name, BUILTIN_DATASETS)
    except ValueError as _e:
        raise WorkflowError(f"invalid config: {_e}")


def checked(check, *args):
    """``check(*args)`` of kclf.repro.config_checks; its ConfigError stops the workflow
    before any job, in one line."""
    try:
        return check(*args)
    except _checks.ConfigError as e:
        raise WorkflowError(str(e)) from None


def user_datasets(family, names):
    """The user's data sets among a family's ``names`` (those not built in); a name that
    is neither built in nor under ``datasets:``, or whose files are missing, is an error."""
    return checked(_checks.user_datasets, family, names, USER_DATASETS, BUILTIN_DATASETS)


def user_files(name):
    """The files of the user's data set ``name`` (path, or train and test)."""
    entry = USER_DATASETS[name]
    return [entry[k] for k in ("path", "train", "test") if entry.get(k) is not None]


def user_entry(name):
    """The params of a data rule reading the user's data set ``name`` (None when it is not
    the user's): its entry, without sep / decimal while they are null (detected from the
    file, an input), so a finished run replans nothing until one of them is set."""
    if name not in USER_DATASETS:
        return None
    entry = USER_DATASETS[name]
    return {k: v for k, v in entry.items() if v is not None or k not in ("sep", "decimal")}


def user_caption(name):
    """How captions name a data set: the name, and for the user's own where it comes from."""
    if name not in USER_DATASETS:
        return name
    files = ", ".join(Path(f).name for f in user_files(name))
    return f"{name}, your data (datasets.{name}: {files})"


# Same numbers whatever --cores is: BLAS threads are fixed by the config, not the job.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(config["blas_threads"])
# Jobs import kclf from this checkout even in a conda env that holds only its dependencies,
# and when the workflow is another project's module (an optional variable, extended rather
# than required, hence no `envvars:`).
_PATHVAR = "PYTHONPATH"
os.environ[_PATHVAR] = os.pathsep.join(
    p for p in (str(WORKFLOW_ROOT), os.environ.get(_PATHVAR)) if p
)

FINAL_OUTPUTS = []

# The multi-task AUC experiments (voc, scene, audio): display name -> file slug.
AUC_METHODS = METHOD_REGISTRY.slugs_by_name("auc")

# A chunk of trials in file names: "<first>-<last>".
CHUNK = r"\d+-\d+"


def trial_chunks(trials, per_job):
    """Labels ``first-last`` of the trial chunks: chunk k holds trials [k*m, (k+1)*m) of
    0..trials-1 (m = per_job). Trial t is drawn from the seed and t alone, so raising
    `trials` keeps every full chunk and adds (or extends) only the last ones."""
    return [f"{a}-{min(a + per_job, trials) - 1}" for a in range(0, trials, per_job)]


def pick(block, keys):
    """The config entries ``keys`` of ``block``: a fit's params hold only what it reads,
    so editing any other key (a report-only one, another method's grid, the trial count)
    reruns no fit."""
    return {k: block[k] for k in keys}


def fit_keys(experiment, method, keys):
    """``keys`` plus ``n_basis`` for the LSPC methods when the family's experiment sets it
    (null = the exact model: the key stays out, so a finished exact run replans nothing),
    and the LSPC-new variant (``lspc_new``: basis, class_weight) for LSPC-new only."""
    low_rank = experiment.get("n_basis") is not None and method in METHOD_REGISTRY.ROUNDING
    variant = method == "lspc_new" and "lspc_new" in experiment
    return list(keys) + (["n_basis"] if low_rank else []) + (["lspc_new"] if variant else [])


def enabled(family):
    return bool(config.get(family, {}).get("enabled", False))


def mirror_file(relpath):
    """Path of ``relpath`` inside the local data mirror, or None when it is not there."""
    mirror = config.get("mirror")
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
    import hashlib

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


# MULAN scene (the scene and multilabel families, mgpc's scene tasks): the mirror's ARFF
# files when present, else the ones rule multilabel_scene_download fetches into the cache.
SCENE_FILES = ["mulan/scene-train.arff", "mulan/scene-test.arff"]
SCENE_IN_MIRROR = all(mirror_file(f) for f in SCENE_FILES)
SCENE_DOWNLOAD_DIR = f"{config['cache_dir']}/mulan/scene"
SCENE_INPUT = (
    [mirror_file(f) for f in SCENE_FILES]
    if SCENE_IN_MIRROR
    else [f"{SCENE_DOWNLOAD_DIR}/{Path(f).name}" for f in SCENE_FILES]
)
