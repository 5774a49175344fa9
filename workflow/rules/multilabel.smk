# CorrLog multilabel experiments (Li et al. 2016): the two-label toy example of Sec. V with
# its figure, MULAN scene, and (paper config) the VOC bag-of-words of the image pipeline.
# The toy trials run in chunks (toy.trials_per_job); scene and VOC have one split (0-0).
include: "multilabel_common.smk"


from kclf_workflow.datasets.mulan import SCENE_ARCHIVE, SCENE_URL

# MULAN's scene.rar through the one download path (a local rule; the archive has no
# published checksum: its SHA-256 is printed to the download's log, and the extracted
# ARFF files are verified against their known hashes)
SCENE_RAR = download_file(
    f"mulan/{SCENE_ARCHIVE}", SCENE_URL, None, mirror_relpath=f"mulan/{SCENE_ARCHIVE}"
)


rule multilabel_scene_extract:
    input:
        SCENE_RAR,
    output:
        train=f"{SCENE_DOWNLOAD_DIR}/scene-train.arff",
        test=f"{SCENE_DOWNLOAD_DIR}/scene-test.arff",
    log:
        "results/logs/multilabel_scene_extract/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=15,
    script:
        "../scripts/multilabel_scene_extract.py"


rule multilabel_toy_data:
    output:
        "results/data/multilabel_toy/data_{trials}.npz",
    log:
        "results/logs/multilabel_toy_data/{trials}.log",
    wildcard_constraints:
        trials=CHUNK,
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=5,
    params:
        seed=config["seed"],
        n_train=MULTILABEL["toy"]["n_train"],
        n_test=MULTILABEL["toy"]["n_test"],
        shift=MULTILABEL["toy"]["shift"],
    script:
        "../scripts/multilabel_toy_data.py"


rule multilabel_scene_data:
    input:
        SCENE_INPUT,
    output:
        "results/data/multilabel_scene/data.npz",
    log:
        "results/logs/multilabel_scene_data/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/multilabel_scene_data.py"


rule multilabel_user_data:
    input:
        lambda wildcards: user_files(wildcards.dataset),
    output:
        "results/data/multilabel_user/{dataset}/data_{trials}.npz",
    log:
        "results/logs/multilabel_user_data/{dataset}_{trials}.log",
    wildcard_constraints:
        trials=CHUNK,
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        seed=config["seed"],
        user=lambda wildcards: user_entry(wildcards.dataset),
        test_size=MULTILABEL["test_size"],
    script:
        "../scripts/multilabel_user_data.py"


rule multilabel_voc_data:
    input:
        lambda wildcards: rules.voc_dataset.output[0],
    output:
        "results/data/multilabel_voc/data.npz",
    log:
        "results/logs/multilabel_voc_data/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        seed=config["seed"],
    script:
        "../scripts/multilabel_voc_data.py"


rule multilabel_fit:
    input:
        lambda wildcards: MULTILABEL_PLAN.data_file(wildcards.dataset, wildcards.trials),
    output:
        records="results/records/multilabel/{dataset}/{method}_{trials}.csv",
        predictions="results/records/multilabel/{dataset}/{method}_{trials}_predictions.npz",
    log:
        "results/logs/multilabel_fit/{dataset}_{method}_{trials}.log",
    benchmark:
        "results/benchmarks/multilabel_fit/{dataset}_{method}_{trials}.tsv"
    wildcard_constraints:
        dataset=MULTILABEL_PLAN.dataset_pattern,
        method=METHOD_REGISTRY.wildcard("multilabel"),
        trials=CHUNK,
    conda:
        CORE_ENV
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        seed=config["seed"],
        cfg=lambda wildcards: pick(MULTILABEL, MULTILABEL_FIT_KEYS[wildcards.method]),
        n_bins=config["calibration_bins"],
    script:
        "../scripts/multilabel_fit.py"


rule multilabel_table:
    input:
        lambda wildcards: expand(
            "results/records/multilabel/{dataset}/{method}_{trials}.csv",
            dataset=wildcards.dataset,
            method=MULTILABEL["methods"],
            trials=MULTILABEL_PLAN.chunks(wildcards.dataset),
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
        dataset=MULTILABEL_PLAN.dataset_pattern,
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=5,
    params:
        dataset=lambda wildcards: user_caption(wildcards.dataset),
    script:
        "../scripts/multilabel_table.py"


rule multilabel_toy_figure:
    input:
        data=f"results/data/multilabel_toy/data_{MULTILABEL_PLAN.toy_chunks[0]}.npz",
        ilr=f"results/records/multilabel/toy/ilr_{MULTILABEL_PLAN.toy_chunks[0]}_predictions.npz",
        corrlog=f"results/records/multilabel/toy/corrlog_{MULTILABEL_PLAN.toy_chunks[0]}_predictions.npz",
    output:
        report(
            "results/figures/corrlog_toy.png",
            caption="../report/multilabel_toy_figure.rst",
            category="CorrLog multilabel",
        ),
    log:
        "results/logs/multilabel_toy_figure/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=5,
    params:
        shift=MULTILABEL["toy"]["shift"],
    script:
        "../scripts/multilabel_toy_figure.py"


if MULTILABEL["enabled"]:
    FINAL_OUTPUTS += expand(
        "results/tables/multilabel_{dataset}{suffix}",
        dataset=MULTILABEL_PLAN.datasets,
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
        "results/figures/multilabel_{dataset}_reliability.png", dataset=MULTILABEL_PLAN.datasets
    )
    if "toy" in MULTILABEL["datasets"] and {"corrlog", "ilr"} <= set(MULTILABEL["methods"]):
        FINAL_OUTPUTS += rules.multilabel_toy_figure.output
