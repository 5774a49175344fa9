# IDA benchmarks (MAPLP paper, section 5): every method on the same realisations,
# hyper-parameters by CV on the first realisations (median of the best), error/time tables.
IDA = config["ida"]
IDA_MAT_CFG = IDA["benchmarks_mat"]
IDA_MAT = (
    download_file(
        "ida/benchmarks.mat",
        IDA_MAT_CFG["url"],
        IDA_MAT_CFG["sha256"],
        IDA_MAT_CFG["mirror_relpath"],
    )
    if IDA_MAT_CFG["use"]
    else []
)
IDA_MIRROR = mirror_file("ida")


rule ida_data:
    input:
        IDA_MAT,
    output:
        "results/data/ida/{dataset}.npz",
    log:
        "results/logs/ida_data/{dataset}.log",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        seed=config["seed"],
        mirror=IDA_MIRROR,
        generate=IDA["generate"],
        realisations=IDA["realisations"],
    script:
        "../scripts/ida_data.py"


rule ida_fit:
    input:
        "results/data/ida/{dataset}.npz",
    output:
        records="results/records/ida/{dataset}/{method}.csv",
        selection="results/records/ida/{dataset}/{method}_selection.json",
    log:
        "results/logs/ida_fit/{dataset}_{method}.log",
    benchmark:
        "results/benchmarks/ida_fit/{dataset}_{method}.tsv"
    wildcard_constraints:
        method="maplp_bias|maplp|svm|klr|lspc_new|lspc",
    conda:
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=240,
    params:
        # only what a fit depends on: adding a dataset or a method reruns nothing else
        seed=config["seed"],
        n_bins=config["calibration_bins"],
        cfg={
            k: IDA[k]
            for k in (
                "n_select",
                "folds",
                "sigma_factors",
                "svm_C",
                "lams",
                "maplp_solver_options",
            )
        },
    script:
        "../scripts/ida_fit.py"


rule ida_report:
    input:
        records=expand(
            "results/records/ida/{dataset}/{method}.csv",
            dataset=IDA["datasets"],
            method=IDA["methods"],
        ),
        data=expand("results/data/ida/{dataset}.npz", dataset=IDA["datasets"]),
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
        "../../envs/core.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        methods=IDA["methods"],
        folds=IDA["folds"],
        n_select=IDA["n_select"],
        reference_error=IDA["reference_error"],
        reference_time=IDA["reference_time"],
    script:
        "../scripts/ida_report.py"


if enabled("ida"):
    FINAL_OUTPUTS += rules.ida_report.output
