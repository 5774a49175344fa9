# Shared by every stage: config validation, the list of final outputs, small helpers.
import os
from pathlib import Path

import jsonschema
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

SCHEMAS = Path(workflow.basedir) / "workflow" / "schemas"


def _check_against(schema_file, cfg, where):
    """Reject the config before any job, in one line naming the key and the problem."""
    schema = yaml.safe_load(Path(schema_file).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(cfg), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        key = ".".join([where, *map(str, e.absolute_path)]).strip(".") or "(top level)"
        raise WorkflowError(f"invalid config: key '{key}': {e.message}")
    validate(cfg, str(schema_file), set_default=True)


_check_against(SCHEMAS / "config.schema.yaml", config, "")
for _family, _cfg in config.items():
    if isinstance(_cfg, dict) and (SCHEMAS / f"{_family}.schema.yaml").exists():
        _check_against(SCHEMAS / f"{_family}.schema.yaml", _cfg, _family)

# Same numbers whatever --cores is: BLAS threads are fixed by the config, not the job.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(config["blas_threads"])
# Jobs import kclf from this checkout even in a conda env that holds only its dependencies
# (an optional variable, extended rather than required, hence no `envvars:`).
_PATHVAR = "PYTHONPATH"
os.environ[_PATHVAR] = os.pathsep.join(
    p for p in (workflow.basedir, os.environ.get(_PATHVAR)) if p
)

FINAL_OUTPUTS = []


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


def log_path(rule_name, pattern=""):
    return f"results/logs/{rule_name}/{pattern or 'all'}.log"


def bench_path(rule_name, pattern=""):
    return f"results/benchmarks/{rule_name}/{pattern or 'all'}.tsv"
