# Multi-class experiments of the klogreg paper (Roth 2001): Table 1 and the Section 3
# cost argument.  Datasets: digits (offline), isolet1 (mirror), isolet (UCI download).
include: "multiclass_common.smk"


rule multiclass_data:
    input:
        unpack(multiclass_sources),
    output:
        "results/data/{dataset}/multiclass.npz",
    log:
        "results/logs/multiclass_data/{dataset}.log",
    wildcard_constraints:
        dataset=MULTICLASS_PLAN.dataset_pattern,
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        seed=config["seed"],
        per_class=MULTICLASS["per_class"],
        user=lambda wildcards: user_entry(wildcards.dataset),
    script:
        "../scripts/multiclass_data.py"


rule multiclass_fit:
    input:
        "results/data/{dataset}/multiclass.npz",
    output:
        "results/records/multiclass/{dataset}/{method}_{trials}.csv",
    log:
        "results/logs/multiclass_fit/{dataset}/{method}_{trials}.log",
    benchmark:
        "results/benchmarks/multiclass_fit/{dataset}/{method}_{trials}.tsv"
    wildcard_constraints:
        dataset=MULTICLASS_PLAN.dataset_pattern,
        method=METHOD_REGISTRY.wildcard("multiclass"),
        trials=CHUNK,
    conda:
        CORE_ENV
    resources:
        mem_mb=4000,
        runtime=240,
    params:
        seed=config["seed"],
        folds=MULTICLASS["folds"],
        cfg=lambda wildcards: MULTICLASS_PLAN.fit_params(wildcards.method),
        n_bins=config["calibration_bins"],
    script:
        "../scripts/multiclass_fit.py"


rule multiclass_table:
    input:
        records=lambda wc: expand(
            "results/records/multiclass/{dataset}/{method}_{trials}.csv",
            dataset=wc.dataset,
            method=MULTICLASS["methods"],
            trials=MULTICLASS_PLAN.chunks(wc.dataset),
        ),
        reference=lambda wc: (
            [] if wc.dataset in MULTICLASS_USER else existing_file(MULTICLASS["reference"])
        ),
    output:
        csv=report(
            "results/tables/{dataset}.csv",
            caption="../report/multiclass_table.rst",
            category="Multi-class (klogreg Table 1)",
        ),
        md="results/tables/{dataset}.md",
        tex="results/tables/{dataset}.tex",
        time_csv=report(
            "results/tables/{dataset}_time.csv",
            caption="../report/multiclass_time.rst",
            category="Multi-class (klogreg Table 1)",
        ),
        time_md="results/tables/{dataset}_time.md",
        time_tex="results/tables/{dataset}_time.tex",
        calibration_csv=report(
            "results/tables/{dataset}_calibration.csv",
            caption="../report/multiclass_calibration.rst",
            category="Multi-class (klogreg Table 1)",
        ),
        calibration_md="results/tables/{dataset}_calibration.md",
        reliability=report(
            "results/figures/{dataset}_reliability.png",
            caption="../report/multiclass_reliability.rst",
            category="Multi-class (klogreg Table 1)",
        ),
    log:
        "results/logs/multiclass_table/{dataset}.log",
    wildcard_constraints:
        dataset=MULTICLASS_PLAN.dataset_pattern,
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=5,
    params:
        folds=MULTICLASS["folds"],
        per_class=MULTICLASS["per_class"],
        trials=lambda wildcards: MULTICLASS_PLAN.trials(wildcards.dataset),
        source=lambda wildcards: MULTICLASS_PLAN.source(
            wildcards.dataset, user_caption(wildcards.dataset)
        ),
    script:
        "../scripts/multiclass_table.py"


rule multiclass_cost:
    input:
        f"results/data/{MULTICLASS['cost']['dataset']}/multiclass.npz",
    output:
        "results/records/multiclass/cost.csv",
    log:
        "results/logs/multiclass_cost/all.log",
    benchmark:
        "results/benchmarks/multiclass_cost/all.tsv"
    conda:
        CORE_ENV
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        seed=config["seed"],
        cfg={k: v for k, v in MULTICLASS["cost"].items() if k != "dataset"},  # dataset: the input
    script:
        "../scripts/multiclass_cost.py"


rule multiclass_cost_figure:
    input:
        "results/records/multiclass/cost.csv",
    output:
        report(
            "results/figures/coupling_cost.png",
            caption="../report/multiclass_cost.rst",
            category="Multi-class (klogreg Table 1)",
        ),
    log:
        "results/logs/multiclass_cost_figure/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/multiclass_cost_figure.py"


if enabled("multiclass"):
    FINAL_OUTPUTS += expand(
        [
            "results/tables/{dataset}.{ext}",
            "results/tables/{dataset}_time.{ext}",
        ],
        dataset=MULTICLASS["datasets"],
        ext=["csv", "md", "tex"],
    )
    FINAL_OUTPUTS += expand(
        [
            "results/tables/{dataset}_calibration.{ext}",
            "results/figures/{dataset}_reliability.png",
        ],
        dataset=MULTICLASS["datasets"],
        ext=["csv", "md"],
    )
    FINAL_OUTPUTS += ["results/figures/coupling_cost.png"]
