# The multi-class family's plan (kclf_workflow.plans.multiclass): trials, captions, fit
# params, the files a data job reads; the UCI ISOLET files (kclf_workflow.datasets.isolet).
from kclf_workflow.datasets import isolet as _isolet
from kclf_workflow.plans.multiclass import MulticlassPlan

if "multiclass" not in config:  # a config without the block: defaults, disabled
    config["multiclass"] = {"enabled": False}
    _check_against(SCHEMAS / "multiclass.schema.yaml", config["multiclass"], "multiclass")
MULTICLASS = config["multiclass"]
MULTICLASS_USER = (
    user_datasets("multiclass", MULTICLASS["datasets"]) if enabled("multiclass") else []
)
MULTICLASS_PLAN = MulticlassPlan(MULTICLASS, user={d: USER_DATASETS[d] for d in MULTICLASS_USER})

# download rules are defined while the workflow is parsed, so only when isolet is used
ISOLET_FILES = {}
if MULTICLASS_PLAN.uses_isolet:
    ISOLET_FILES = {
        part: download_file(f"isolet/{name}", _isolet.URL + name, MULTICLASS["isolet_sha256"][part])
        for part, name in _isolet.FILES.items()
    }


def multiclass_sources(wildcards):
    name = wildcards.dataset
    return checked(
        MULTICLASS_PLAN.sources,
        name,
        user_files=user_files(name) if name in MULTICLASS_USER else [],
        isolet_mat=mirror_file("isolet/isolet.mat"),
        isolet_files=ISOLET_FILES,
        mirror=config.get("mirror"),
    )
