# LSPC toy experiment (LSPC-new paper, Sec. 3.1 and Figure 1): the samples of each chunk of
# trials, every method on every chunk, the table and Figure 1 (from chunk 0's trial 0).

LSPC_TOY = config["lspc_toy"]
LSPC_TOY_METHODS = [
    m for m in METHOD_REGISTRY.family_methods("lspc_toy") if m in LSPC_TOY["methods"]
]
LSPC_TOY_CHUNKS = trial_chunks(LSPC_TOY["trials"], LSPC_TOY["trials_per_job"])


rule lspc_toy_data:
    output:
        "results/data/lspc_toy/samples_{trials}.npz",
    log:
        "results/logs/lspc_toy_data/{trials}.log",
    wildcard_constraints:
        trials=CHUNK,
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=5,
    params:
        seed=config["seed"],
        n_train_per_class=LSPC_TOY["n_train_per_class"],
        n_test_per_class=LSPC_TOY["n_test_per_class"],
    script:
        "../scripts/lspc_toy_data.py"


rule lspc_toy_fit:
    input:
        "results/data/lspc_toy/samples_{trials}.npz",
    output:
        records="results/records/lspc_toy/{method}_{trials}.csv",
        curves="results/records/lspc_toy/{method}_{trials}_curves.npz",
    log:
        "results/logs/lspc_toy_fit/{method}_{trials}.log",
    benchmark:
        "results/benchmarks/lspc_toy_fit/{method}_{trials}.tsv"
    wildcard_constraints:
        method=METHOD_REGISTRY.wildcard("lspc_toy"),
        trials=CHUNK,
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        seed=config["seed"],
        folds=LSPC_TOY["folds"],
        sigmas=LSPC_TOY["sigmas"],
        lams=LSPC_TOY["lams"],
        variant=lambda wildcards: METHOD_REGISTRY.spec("lspc_toy", wildcards.method).variant_of(
            LSPC_TOY
        ),
        n_bins=config["calibration_bins"],
    script:
        "../scripts/lspc_toy_fit.py"


rule lspc_toy_report:
    input:
        records=expand(
            "results/records/lspc_toy/{method}_{trials}.csv",
            method=LSPC_TOY_METHODS,
            trials=LSPC_TOY_CHUNKS,
        ),
        curves=expand(
            "results/records/lspc_toy/{method}_{trials}_curves.npz",
            method=LSPC_TOY_METHODS,
            trials=LSPC_TOY_CHUNKS[0],
        ),
    output:
        csv=report(
            "results/tables/lspc_toy.csv",
            caption="../report/lspc_toy_table.rst",
            category="LSPC toy (Sec. 3.1)",
        ),
        md="results/tables/lspc_toy.md",
        tex="results/tables/lspc_toy.tex",
        calibration_csv=report(
            "results/tables/lspc_toy_calibration.csv",
            caption="../report/lspc_toy_calibration.rst",
            category="LSPC toy (Sec. 3.1)",
        ),
        calibration_md="results/tables/lspc_toy_calibration.md",
        posterior=report(
            "results/figures/lspc_toy_posterior.png",
            caption="../report/lspc_toy_posterior.rst",
            category="LSPC toy (Sec. 3.1)",
        ),
        alpha=report(
            "results/figures/lspc_toy_alpha.png",
            caption="../report/lspc_toy_alpha.rst",
            category="LSPC toy (Sec. 3.1)",
        ),
        reliability=report(
            "results/figures/lspc_toy_reliability.png",
            caption="../report/lspc_toy_reliability.rst",
            category="LSPC toy (Sec. 3.1)",
        ),
    log:
        "results/logs/lspc_toy_report/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/lspc_toy_report.py"


if enabled("lspc_toy"):
    FINAL_OUTPUTS += rules.lspc_toy_report.output
