# The multilabel family's plan (kclf_workflow.plans.multilabel): data sets, trial chunks,
# data files, fit params.
from kclf_workflow.plans.multilabel import FIT_KEYS as MULTILABEL_FIT_KEYS
from kclf_workflow.plans.multilabel import MultilabelPlan

MULTILABEL = config["multilabel"]
MULTILABEL_USER = (
    user_datasets("multilabel", MULTILABEL["datasets"]) if MULTILABEL["enabled"] else []
)
MULTILABEL_PLAN = MultilabelPlan(
    MULTILABEL,
    user={d: USER_DATASETS[d] for d in MULTILABEL_USER},
    scene_available=SCENE_IN_MIRROR,
    voc_enabled=enabled("voc"),
    mirror=config.get("mirror"),
)
for _note in MULTILABEL_PLAN.left_out:
    print(_note)
