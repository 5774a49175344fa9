# MULAN scene (Boutell et al. 2004; 294 colour/texture features of real photographs, 6
# labels) through the image experiment's AUC machinery: 6 binary tasks, MULAN's own
# train/test split as trial 0 and seeded random re-splits of the same sizes after it.
# The ARFF files come from the local mirror; else (download: true) from the MULAN archive
# via the rule multilabel_scene_download (workflow/rules/multilabel.smk).
from kclf_workflow.datasets.mulan import SCENE_LABELS

SCENE = config["scene"]
SCENE_METHODS = {m: AUC_METHODS[m] for m in SCENE["experiment"]["methods"]}
SCENE_CHUNKS = trial_chunks(SCENE["experiment"]["trials"], SCENE["experiment"]["trials_per_job"])


rule scene_data:
    input:
        SCENE_INPUT,
    output:
        "results/data/scene/scene.npz",
    log:
        "results/logs/scene_data/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/scene_data.py"


rule scene_fit:
    input:
        "results/data/scene/scene.npz",
    output:
        "results/records/scene/{method}_{trials}.csv",
    log:
        "results/logs/scene_fit/{method}_{trials}.log",
    benchmark:
        "results/benchmarks/scene_fit/{method}_{trials}.tsv"
    wildcard_constraints:
        method=METHOD_REGISTRY.wildcard("auc"),
        trials=CHUNK,
    conda:
        CORE_ENV
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        seed=config["seed"],
        experiment=lambda wildcards: pick(
            SCENE["experiment"],
            fit_keys(
                "auc",
                SCENE["experiment"],
                wildcards.method,
                ["folds", "sigma_factors", *METHOD_REGISTRY.spec("auc", wildcards.method).grid],
            ),
        ),
        n_bins=config["calibration_bins"],
    script:
        "../scripts/auc_fit.py"


rule scene_table:
    input:
        records=expand(
            "results/records/scene/{method}_{trials}.csv",
            method=SCENE_METHODS.values(),
            trials=SCENE_CHUNKS,
        ),
        reference=[],
    output:
        csv=report(
            "results/tables/scene_auc.csv",
            caption="../report/scene_auc_table.rst",
            category="MULAN scene (real photographs)",
        ),
        md="results/tables/scene_auc.md",
        calibration_csv="results/tables/scene_auc_calibration.csv",
        calibration_md="results/tables/scene_auc_calibration.md",
        time_csv=report(
            "results/tables/scene_auc_time.csv",
            caption="../report/auc_time.rst",
            category="MULAN scene (real photographs)",
        ),
        time_md="results/tables/scene_auc_time.md",
        tex="results/tables/scene_auc.tex",
        figure=report(
            "results/figures/scene_auc.png",
            caption="../report/scene_auc_figure.rst",
            category="MULAN scene (real photographs)",
        ),
        reliability=report(
            "results/figures/scene_auc_reliability.png",
            caption="../report/scene_auc_reliability.rst",
            category="MULAN scene (real photographs)",
        ),
    log:
        "results/logs/scene_table/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        methods=list(SCENE_METHODS),
        tasks=list(SCENE_LABELS),
        title="MULAN scene",
    script:
        "../scripts/voc_table.py"


if enabled("scene"):
    if SCENE_IN_MIRROR or SCENE["download"]:
        FINAL_OUTPUTS += rules.scene_table.output
    else:
        print(
            "scene: left out (no mulan/scene-*.arff under the mirror "
            f"{config.get('mirror')!r} and scene.download is false)"
        )
