# MGPC experiment (Fradi et al., Sec. 4): digits images (three representations) and MULAN scene;
# MLA, MEP, weighted ridge logistic (Newton, gradient), scikit-learn's GPC and GPy's EP (when
# GPy is installed; otherwise its fits are skipped with a note in the table's caption).
# Per (task, representation, method) one fit job per chunk of trials (trials_per_job); the
# split of trial t is drawn from the seed and t alone.

MGPC = config.get("mgpc", {})
MGPC_CHUNKS = trial_chunks(MGPC["trials"], MGPC["trials_per_job"]) if MGPC.get("enabled") else []

# (dataset, task, representation) of every configured task
MGPC_COMBOS = [
    (d, t, r)
    for d, spec in MGPC.get("datasets", {}).items()
    for t in spec["tasks"]
    for r in spec["representations"]
]
MGPC_FITS = [
    f"results/records/mgpc/{d}/{t}/{r}/{m}_{c}"
    for d, t, r in MGPC_COMBOS
    for m in MGPC.get("methods", [])
    for c in MGPC_CHUNKS
]
# your own data sets among mgpc.datasets (config datasets:)
MGPC_USER = user_datasets("mgpc", MGPC.get("datasets", {})) if enabled("mgpc") else []
# the paper's table, when configured and present (not beside your data sets alone)
MGPC_ONLY_USER = bool(MGPC_USER) and set(MGPC_USER) == set(MGPC.get("datasets", {}))
MGPC_REFERENCE = [] if MGPC_ONLY_USER else existing_file(MGPC.get("reference"))

# what a fit of each method reads from the mgpc block (kclf_workflow.experiments.mgpc._fit)
_MGPC_GP = ["n_centers", "sigma_factors", "length_scale_factors", "amplitudes", "tol"]
MGPC_FIT_KEYS = {
    "mla": _MGPC_GP,
    "mep": _MGPC_GP,
    "ridge_newton": ["lams", "folds", "ridge_tol"],
    "ridge_gradient": ["lams", "folds", "ridge_tol", "gradient_max_iter"],
    "sklearn_gpc": [],
    "gpy_ep": [],
}


wildcard_constraints:
    mgpc_dataset="|".join(["digits", "scene", *MGPC_USER]),
    mgpc_task="[A-Za-z0-9]+",
    mgpc_repr="gradient|gabor|binarization|raw|features",
    mgpc_method=METHOD_REGISTRY.wildcard("mgpc"),


rule mgpc_prepare:
    input:
        lambda wildcards: (
            user_files(wildcards.mgpc_dataset)
            if wildcards.mgpc_dataset in MGPC_USER
            else SCENE_INPUT if wildcards.mgpc_dataset == "scene" else []
        ),
    output:
        "results/data/{mgpc_dataset}/mgpc_{mgpc_task}.npz",
    log:
        "results/logs/mgpc_prepare/{mgpc_dataset}_{mgpc_task}.log",
    conda:
        IMAGE_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        user=lambda wildcards: user_entry(wildcards.mgpc_dataset),
    script:
        "../scripts/mgpc_prepare.py"


rule mgpc_represent:
    input:
        "results/data/{mgpc_dataset}/mgpc_{mgpc_task}.npz",
    output:
        "results/data/{mgpc_dataset}/mgpc_{mgpc_task}_{mgpc_repr}.npz",
    log:
        "results/logs/mgpc_represent/{mgpc_dataset}_{mgpc_task}_{mgpc_repr}.log",
    conda:
        IMAGE_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        gabor=lambda wildcards: MGPC["gabor"] if wildcards.mgpc_repr == "gabor" else None,
    script:
        "../scripts/mgpc_represent.py"


rule mgpc_fit:
    input:
        data="results/data/{mgpc_dataset}/mgpc_{mgpc_task}.npz",
        features="results/data/{mgpc_dataset}/mgpc_{mgpc_task}_{mgpc_repr}.npz",
    output:
        records="results/records/mgpc/{mgpc_dataset}/{mgpc_task}/{mgpc_repr}/{mgpc_method}_{trials}.csv",
        curves="results/records/mgpc/{mgpc_dataset}/{mgpc_task}/{mgpc_repr}/{mgpc_method}_{trials}.npz",
    log:
        "results/logs/mgpc_fit/{mgpc_dataset}_{mgpc_task}_{mgpc_repr}_{mgpc_method}_{trials}.log",
    benchmark:
        "results/benchmarks/mgpc_fit/{mgpc_dataset}_{mgpc_task}_{mgpc_repr}_{mgpc_method}_{trials}.tsv"
    wildcard_constraints:
        trials=CHUNK,
    conda:
        IMAGE_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        seed=config["seed"],
        train_fraction=MGPC.get("train_fraction"),
        max_train=lambda wildcards: MGPC["datasets"][wildcards.mgpc_dataset].get("max_train"),
        cfg=lambda wildcards: pick(MGPC, ["standardize", *MGPC_FIT_KEYS[wildcards.mgpc_method]]),
        n_bins=config["calibration_bins"],
    script:
        "../scripts/mgpc_fit.py"


rule mgpc_report:
    input:
        records=[f"{f}.csv" for f in MGPC_FITS],
        curves=[f"{f}.npz" for f in MGPC_FITS],
        reference=MGPC_REFERENCE,
    output:
        csv=report(
            "results/tables/mgpc_errors.csv",
            caption="../report/mgpc_table.rst",
            category="MGPC (Fradi et al.)",
        ),
        md=report(
            "results/tables/mgpc_errors.md",
            caption="../report/mgpc_table.rst",
            category="MGPC (Fradi et al.)",
        ),
        tex="results/tables/mgpc_errors.tex",
        roc=report(
            "results/figures/mgpc_roc.png",
            caption="../report/mgpc_roc.rst",
            category="MGPC (Fradi et al.)",
        ),
        lam=report(
            "results/figures/mgpc_ridge_lambda.png",
            caption="../report/mgpc_ridge_lambda.rst",
            category="MGPC (Fradi et al.)",
        ),
        calibration_csv=report(
            "results/tables/mgpc_calibration.csv",
            caption="../report/mgpc_calibration.rst",
            category="MGPC (Fradi et al.)",
        ),
        calibration_md="results/tables/mgpc_calibration.md",
        reliability=report(
            "results/figures/mgpc_reliability.png",
            caption="../report/mgpc_reliability.rst",
            category="MGPC (Fradi et al.)",
        ),
    log:
        "results/logs/mgpc_report/all.log",
    conda:
        IMAGE_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        user={d: user_caption(d) for d in MGPC_USER},
    script:
        "../scripts/mgpc_report.py"


if enabled("mgpc"):
    FINAL_OUTPUTS += rules.mgpc_report.output
