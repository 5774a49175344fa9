# IDA benchmarks (MAPLP paper, section 5): every method on the same realisations,
# hyper-parameters by CV on the first n_select realisations (median of the best), then
# every realisation in chunks of trials_per_job (realisation r from the seed and r alone),
# error/time tables.
include: "ida_common.smk"


rule ida_data:
    input:
        ida_sources,
    output:
        "results/data/ida/{dataset}/{trials}.npz",
    log:
        "results/logs/ida_data/{dataset}_{trials}.log",
    wildcard_constraints:
        trials=CHUNK,
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        seed=config["seed"],
        mirror=IDA_MIRROR,
        generate=lambda wildcards: wildcards.dataset in IDA["generate"],
        user=lambda wildcards: user_entry(wildcards.dataset),
        test_size=lambda wildcards: IDA["test_size"] if wildcards.dataset in IDA_USER else None,
    script:
        "../scripts/ida_data.py"


rule ida_select:
    input:
        lambda wildcards: f"results/data/ida/{wildcards.dataset}/{IDA_PLAN.select_chunk(wildcards.dataset)}.npz",
    output:
        "results/records/ida/{dataset}/{method}_selection.json",
    log:
        "results/logs/ida_select/{dataset}_{method}.log",
    benchmark:
        "results/benchmarks/ida_select/{dataset}_{method}.tsv"
    wildcard_constraints:
        method=METHOD_REGISTRY.wildcard("ida"),
    conda:
        CORE_ENV
    resources:
        mem_mb=3000,
        runtime=240,
    params:
        seed=config["seed"],
        grids=lambda wildcards: IDA_PLAN.grids(wildcards.method),
    script:
        "../scripts/ida_select.py"


rule ida_fit:
    input:
        data="results/data/ida/{dataset}/{trials}.npz",
        selection="results/records/ida/{dataset}/{method}_selection.json",
    output:
        "results/records/ida/{dataset}/{method}_{trials}.csv",
    log:
        "results/logs/ida_fit/{dataset}_{method}_{trials}.log",
    benchmark:
        "results/benchmarks/ida_fit/{dataset}_{method}_{trials}.tsv"
    wildcard_constraints:
        method=METHOD_REGISTRY.wildcard("ida"),
        trials=CHUNK,
    conda:
        CORE_ENV
    resources:
        mem_mb=3000,
        runtime=240,
    params:
        seed=config["seed"],
        n_bins=config["calibration_bins"],
        grids=lambda wildcards: IDA_PLAN.grids(wildcards.method),
    script:
        "../scripts/ida_fit.py"


rule ida_report:
    input:
        records=[
            f"results/records/ida/{d}/{m}_{c}.csv"
            for d in IDA["datasets"]
            for m in IDA["methods"]
            for c in IDA_PLAN.chunks[d]
        ],
        data=[f"results/data/ida/{d}/{c}.npz" for d in IDA["datasets"] for c in IDA_PLAN.chunks[d]],
        reference_error=existing_file(IDA["reference_error"]),
        reference_time=existing_file(IDA["reference_time"]),
    output:
        error_csv=report(
            "results/tables/ida_error.csv",
            caption="../report/ida_error.rst",
            category="IDA benchmarks (MAPLP)",
        ),
        error_md="results/tables/ida_error.md",
        error_tex="results/tables/ida_error.tex",
        agreement="results/tables/ida_error_agreement.csv",
        time_csv=report(
            "results/tables/ida_time.csv",
            caption="../report/ida_time.rst",
            category="IDA benchmarks (MAPLP)",
        ),
        time_md="results/tables/ida_time.md",
        time_tex="results/tables/ida_time.tex",
        figure=report(
            "results/figures/ida_error.png",
            caption="../report/ida_figure.rst",
            category="IDA benchmarks (MAPLP)",
        ),
        calibration_csv=report(
            "results/tables/ida_calibration.csv",
            caption="../report/ida_calibration.rst",
            category="IDA benchmarks (MAPLP)",
        ),
        calibration_md="results/tables/ida_calibration.md",
        reliability=report(
            "results/figures/ida_reliability.png",
            caption="../report/ida_reliability.rst",
            category="IDA benchmarks (MAPLP)",
        ),
    log:
        "results/logs/ida_report/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        methods=IDA["methods"],
        folds=IDA["folds"],
        n_select=IDA["n_select"],
        user=IDA_USER,
    script:
        "../scripts/ida_report.py"


if enabled("ida"):
    FINAL_OUTPUTS += rules.ida_report.output
