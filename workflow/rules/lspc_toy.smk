# LSPC toy experiment (LSPC-new paper, Sec. 3.1 and Figure 1).
LSPC_TOY_METHODS = ["lspc_new", "lspc", "lspc_prime"]


rule lspc_toy_data:
    output:
        "results/data/lspc_toy/samples.npz",
    log:
        "results/logs/lspc_toy_data/all.log",
    params:
        seed=config["seed"],
        cfg=config["lspc_toy"],
    threads: 1
    conda:
        "../../envs/core.yaml"
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/lspc_toy_data.py"


rule lspc_toy_fit:
    input:
        "results/data/lspc_toy/samples.npz",
    output:
        records="results/records/lspc_toy/{method}.csv",
        curves="results/records/lspc_toy/{method}_curves.npz",
    log:
        "results/logs/lspc_toy_fit/{method}.log",
    benchmark:
        "results/benchmarks/lspc_toy_fit/{method}.tsv"
    params:
        seed=config["seed"],
        cfg=config["lspc_toy"],
        n_bins=config["calibration_bins"],
    wildcard_constraints:
        method="|".join(LSPC_TOY_METHODS),
    threads: 1
    conda:
        "../../envs/core.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/lspc_toy_fit.py"


rule lspc_toy_report:
    input:
        records=expand("results/records/lspc_toy/{method}.csv", method=LSPC_TOY_METHODS),
        curves=expand("results/records/lspc_toy/{method}_curves.npz", method=LSPC_TOY_METHODS),
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
    threads: 1
    conda:
        "../../envs/core.yaml"
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/lspc_toy_report.py"


if enabled("lspc_toy"):
    FINAL_OUTPUTS += rules.lspc_toy_report.output
