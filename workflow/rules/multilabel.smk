# CorrLog multilabel experiments (Li et al. 2016): the two-label toy example of Sec. V with
# its figure, MULAN scene, and (paper config) the VOC bag-of-words of the image pipeline.
ML = config["multilabel"]
ML_SCENE_FILES = ["mulan/scene-train.arff", "mulan/scene-test.arff"]
ML_SCENE_DOWNLOAD = f"{config['cache_dir']}/mulan/scene"


ML_SCENE_IN_MIRROR = all(mirror_file(f) for f in ML_SCENE_FILES)
ML_SCENE_INPUT = (
    [mirror_file(f) for f in ML_SCENE_FILES]
    if ML_SCENE_IN_MIRROR
    else [f"{ML_SCENE_DOWNLOAD}/{Path(f).name}" for f in ML_SCENE_FILES]
)
ML_DATASETS = []
for _ds in ML["datasets"]:
    if _ds == "scene" and not (ML_SCENE_IN_MIRROR or ML["download_scene"]):
        print(
            "multilabel: MULAN scene left out (no mulan/scene-*.arff under the mirror "
            f"{config.get('mirror')!r} and download_scene is false)"
        )
    elif _ds == "voc" and not enabled("voc"):
        print("multilabel: VOC left out (the voc family is disabled)")
    else:
        ML_DATASETS.append(_ds)


rule multilabel_scene_download:
    output:
        train=f"{ML_SCENE_DOWNLOAD}/scene-train.arff",
        test=f"{ML_SCENE_DOWNLOAD}/scene-test.arff",
    log:
        "results/logs/multilabel_scene_download/all.log",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=15,
    params:
        cache=lambda wildcards, output: str(Path(output.train).parent.parent),
    script:
        "../scripts/multilabel_scene_download.py"


rule multilabel_toy_data:
    output:
        "results/data/multilabel_toy/data.npz",
    log:
        "results/logs/multilabel_toy_data/all.log",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        seed=config["seed"],
        toy=ML["toy"],
    script:
        "../scripts/multilabel_toy_data.py"


rule multilabel_scene_data:
    input:
        ML_SCENE_INPUT,
    output:
        "results/data/multilabel_scene/data.npz",
    log:
        "results/logs/multilabel_scene_data/all.log",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/multilabel_scene_data.py"


rule multilabel_voc_data:
    input:
        lambda wildcards: rules.voc_dataset.output[0],
    output:
        "results/data/multilabel_voc/data.npz",
    log:
        "results/logs/multilabel_voc_data/all.log",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        seed=config["seed"],
    script:
        "../scripts/multilabel_voc_data.py"


rule multilabel_fit:
    input:
        "results/data/multilabel_{dataset}/data.npz",
    output:
        records="results/records/multilabel/{dataset}/{method}.csv",
        predictions="results/records/multilabel/{dataset}/{method}_predictions.npz",
    log:
        "results/logs/multilabel_fit/{dataset}_{method}.log",
    benchmark:
        "results/benchmarks/multilabel_fit/{dataset}_{method}.tsv"
    wildcard_constraints:
        dataset="toy|scene|voc",
        method="corrlog|ilr|cc|mo_svc",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        seed=config["seed"],
        cfg=ML,
        n_bins=config["calibration_bins"],
    script:
        "../scripts/multilabel_fit.py"


rule multilabel_table:
    input:
        expand(
            "results/records/multilabel/{{dataset}}/{method}.csv", method=ML["methods"]
        ),
    output:
        csv=report(
            "results/tables/multilabel_{dataset}.csv",
            caption="../report/multilabel_table.rst",
            category="CorrLog multilabel",
        ),
        md="results/tables/multilabel_{dataset}.md",
        tex="results/tables/multilabel_{dataset}.tex",
        calibration_csv=report(
            "results/tables/multilabel_{dataset}_calibration.csv",
            caption="../report/multilabel_calibration.rst",
            category="CorrLog multilabel",
        ),
        calibration_md="results/tables/multilabel_{dataset}_calibration.md",
        time_csv=report(
            "results/tables/multilabel_{dataset}_time.csv",
            caption="../report/multilabel_time.rst",
            category="CorrLog multilabel",
        ),
        time_md="results/tables/multilabel_{dataset}_time.md",
        reliability=report(
            "results/figures/multilabel_{dataset}_reliability.png",
            caption="../report/multilabel_reliability.rst",
            category="CorrLog multilabel",
        ),
    log:
        "results/logs/multilabel_table/{dataset}.log",
    wildcard_constraints:
        dataset="toy|scene|voc",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        dataset="{dataset}",
    script:
        "../scripts/multilabel_table.py"


rule multilabel_toy_figure:
    input:
        data="results/data/multilabel_toy/data.npz",
        ilr="results/records/multilabel/toy/ilr_predictions.npz",
        corrlog="results/records/multilabel/toy/corrlog_predictions.npz",
    output:
        report(
            "results/figures/corrlog_toy.png",
            caption="../report/multilabel_toy_figure.rst",
            category="CorrLog multilabel",
        ),
    log:
        "results/logs/multilabel_toy_figure/all.log",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    params:
        shift=ML["toy"]["shift"],
    script:
        "../scripts/multilabel_toy_figure.py"


if ML["enabled"]:
    FINAL_OUTPUTS += expand(
        "results/tables/multilabel_{dataset}{suffix}",
        dataset=ML_DATASETS,
        suffix=[
            ".csv",
            ".md",
            ".tex",
            "_calibration.csv",
            "_calibration.md",
            "_time.csv",
            "_time.md",
        ],
    )
    FINAL_OUTPUTS += expand(
        "results/figures/multilabel_{dataset}_reliability.png", dataset=ML_DATASETS
    )
    if "toy" in ML["datasets"] and {"corrlog", "ilr"} <= set(ML["methods"]):
        FINAL_OUTPUTS += rules.multilabel_toy_figure.output
