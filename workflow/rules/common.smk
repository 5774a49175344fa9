# Shared by every stage: config validation, the list of final outputs, and the helpers of
# kclf_workflow.plans bound to this run's config.
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import validate


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
# The rules run the workflow code of their own checkout (workflow/src/kclf_workflow), here
# and in every job (PYTHONPATH below), whatever else the environment holds.
WORKFLOW_CODE = WORKFLOW_ROOT / "workflow" / "src"
if str(WORKFLOW_CODE) not in sys.path:
    sys.path.insert(0, str(WORKFLOW_CODE))

from kclf_workflow import config_checks as _checks
from kclf_workflow import methods as METHOD_REGISTRY
from kclf_workflow.datasets import user_data as _user_data
from kclf_workflow.plans import common as _plans
from kclf_workflow.plans.common import existing_file, fit_keys, pick, trial_chunks

SCHEMAS = WORKFLOW_ROOT / "workflow" / "schemas"


include: "envs.smk"


def checked(check, *args, **kwargs):
    """``check(*args, **kwargs)`` of kclf_workflow (config_checks, plans); its ConfigError
    stops the workflow before any job, in one line."""
    try:
        return check(*args, **kwargs)
    except _checks.ConfigError as e:
        raise WorkflowError(str(e)) from None


def _check_against(schema_file, cfg, where):
    """Reject the config before any job, in one line naming the key and the problem."""
    error = _plans.schema_error(schema_file, cfg, where)
    if error:
        raise WorkflowError(error)
    validate(cfg, str(schema_file), set_default=True)


_check_against(SCHEMAS / "config.schema.yaml", config, "")
checked(_plans.check_blocks, config, WORKFLOW_ROOT / "config.yaml")
for _family, _cfg in config.items():
    if isinstance(_cfg, dict) and (SCHEMAS / f"{_family}.schema.yaml").exists():
        _check_against(SCHEMAS / f"{_family}.schema.yaml", _cfg, _family)
for _key in list(config):
    config[_key] = _plans.sorted_keys(config[_key])

# Your own data sets (the top-level block datasets:): names that clash with no built-in one.
USER_DATASETS = config.get("datasets") or {}
BUILTIN_DATASETS = _user_data.builtin_dataset_names(SCHEMAS)
for _name in USER_DATASETS:
    try:
        _user_data.check_dataset_name(_name, BUILTIN_DATASETS)
    except ValueError as _e:
        raise WorkflowError(f"invalid config: {_e}")


def user_datasets(family, names):
    """The user's data sets among a family's ``names`` (those not built in); a name that
    is neither built in nor under ``datasets:``, or whose files are missing, is an error."""
    return checked(_checks.user_datasets, family, names, USER_DATASETS, BUILTIN_DATASETS)


def user_files(name):
    return _plans.user_files(USER_DATASETS, name)


def user_entry(name):
    return _plans.user_entry(USER_DATASETS, name)


def user_caption(name):
    return _plans.user_caption(USER_DATASETS, name)


def mirror_file(relpath):
    return _plans.mirror_file(config.get("mirror"), relpath)


def enabled(family):
    return bool(config.get(family, {}).get("enabled", False))


# Same numbers whatever --cores is: BLAS threads are fixed by the config, not the job.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(config["blas_threads"])
# Jobs import kclf and kclf_workflow from this checkout even in a conda env that holds only
# their dependencies, and when the workflow is another project's module (an optional
# variable, extended rather than required, hence no `envvars:`).
_PATHVAR = "PYTHONPATH"
os.environ[_PATHVAR] = os.pathsep.join(
    p for p in (str(WORKFLOW_CODE), str(WORKFLOW_ROOT), os.environ.get(_PATHVAR)) if p
)

FINAL_OUTPUTS = []

# The multi-task AUC experiments (voc, scene, audio): display name -> file slug.
AUC_METHODS = METHOD_REGISTRY.slugs_by_name("auc")

# A chunk of trials in file names: "<first>-<last>".
CHUNK = r"\d+-\d+"

# MULAN scene (the scene and multilabel families, mgpc's scene tasks): the mirror's ARFF
# files when present, else the ones rule multilabel_scene_extract unpacks into the cache.
SCENE_DOWNLOAD_DIR = f"{config['cache_dir']}/mulan/scene"
SCENE_IN_MIRROR, SCENE_INPUT = _plans.scene_inputs(config.get("mirror"), SCENE_DOWNLOAD_DIR)
