# Config and input functions of the multilabel family (workflow/rules/multilabel.smk).

ML = config["multilabel"]
ML_TOY_CHUNKS = trial_chunks(ML["toy"]["trials"], ML["toy"]["trials_per_job"])
ML_DATASETS = []
for _ds in ML["datasets"]:
    if _ds == "scene" and not (SCENE_IN_MIRROR or ML["download_scene"]):
        print(
            "multilabel: MULAN scene left out (no mulan/scene-*.arff under the mirror "
            f"{config.get('mirror')!r} and download_scene is false)"
        )
    elif _ds == "voc" and not enabled("voc"):
        print("multilabel: VOC left out (the voc family is disabled)")
    else:
        ML_DATASETS.append(_ds)


def ml_chunks(dataset):
    return ML_TOY_CHUNKS if dataset == "toy" else ["0-0"]


def ml_data(wildcards):
    if wildcards.dataset == "toy":
        return f"results/data/multilabel_toy/data_{wildcards.trials}.npz"
    return f"results/data/multilabel_{wildcards.dataset}/data.npz"


# what a fit of each method reads from the multilabel block (make_estimator)
_ML_CORRLOG = ["folds", "inference", "scaling", "rho1_grid", "rho2_grid"]
ML_FIT_KEYS = {"corrlog": _ML_CORRLOG, "ilr": _ML_CORRLOG, "cc": ["folds"], "mo_svc": ["folds"]}
