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


ML_USER = user_datasets("multilabel", ML["datasets"]) if ML["enabled"] else []
ML_DATASET_PATTERN = "|".join(["toy", "scene", "voc", *ML_USER])


def ml_chunks(dataset):
    if dataset == "toy":
        return ML_TOY_CHUNKS
    if dataset in ML_USER and USER_DATASETS[dataset]["path"] is not None:
        return trial_chunks(ML["trials"], ML["trials_per_job"])
    return ["0-0"]


def ml_data(wildcards):
    if wildcards.dataset == "toy":
        return f"results/data/multilabel_toy/data_{wildcards.trials}.npz"
    if wildcards.dataset in ML_USER:
        return f"results/data/multilabel_user/{wildcards.dataset}/data_{wildcards.trials}.npz"
    return f"results/data/multilabel_{wildcards.dataset}/data.npz"


# what a fit of each method reads from the multilabel block (make_estimator)
_ML_CORRLOG = ["folds", "inference", "scaling", "penalty", "rho1_grid", "rho2_grid"]
ML_FIT_KEYS = {"corrlog": _ML_CORRLOG, "ilr": _ML_CORRLOG, "cc": ["folds"], "mo_svc": ["folds"]}
