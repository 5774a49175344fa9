# Audio tagging with the HMM kernel (LSPC-new paper, Sec. 4.2, Table 2): clips -> frame
# features and one HMM per clip (per shard) -> cross log-likelihood row blocks -> kernel
# (symmetry check, PSD projection) -> LSPC-new / LSPC / KLR / SVC per trial chunk -> table.
#
# Where the clips come from (config audio.source):
#   synthetic    generated clips in the Freesound-style layout (the offline default),
#                written per shard
#   freesound    a folder with metadata.csv (id, file, tags, duration): audio.root
#   esc50        the ESC-50 layout: audio.root, or (root null) the GitHub archive, verified
#                and unpacked by a checkpoint
#   urbansound8k the UrbanSound8K layout: audio.root
# The collection is listed (metadata read, the paper's selection applied) when the DAG is
# built; a selected clip goes to shard shard_of(id, features.n_shards) (a CRC-32 of its id).
# Each shard has a manifest (kclf_workflow.manifests) written by a rule whose inputs are the shard's
# clips and whose params are their sizes and times; the HMMs of a shard read only it. So a
# changed clip reruns its manifest, its shard's HMMs and what follows (cross
# log-likelihoods, kernel, fits, table); a changed tag in the metadata reruns only the clip
# list (labels), the fits and the table.
# audio.kernel.landmarks: m: the row blocks compute only the landmark columns (their clips
# under the m landmark models and back) and the kernel job stores Nystroem features
# (kclf_workflow.shards.audio); the rules read the key (and the seed) only when it is set.
include: "audio_common.smk"


if AUDIO_ARCHIVE:
    download_file(
        AUDIO_PLAN.archive_name,
        url=AUDIO["download"]["url"],
        sha256=AUDIO["download"]["sha256"],
        mirror_relpath=AUDIO["download"]["mirror_relpath"],
    )


if AUDIO_ARCHIVE:

    checkpoint audio_extract:
        input:
            AUDIO_ARCHIVE,
        output:
            directory(AUDIO_PLAN.extract_dir),
        log:
            "results/logs/audio_extract/all.log",
        conda:
            CORE_ENV
        resources:
            mem_mb=500,
            runtime=30,
        script:
            "../scripts/audio_extract.py"


if AUDIO["source"] == "synthetic":

    rule audio_synthetic_shard:
        output:
            f"{AUDIO_DIR}/manifests/shard_{{k}}.tsv",
        log:
            "results/logs/audio_synthetic_shard/{k}.log",
        wildcard_constraints:
            k=r"\d+",
        conda:
            AUDIO_ENV
        resources:
            mem_mb=500,
            runtime=10,
        params:
            root=AUDIO_SYNTH_ROOT,
            ids=lambda wildcards: checked(AUDIO_PLAN.generated_ids, wildcards.k),
            seed=config["seed"],
            duration_range=[
                AUDIO["synthetic"]["min_seconds"],
                AUDIO["synthetic"]["max_seconds"],
            ],
        script:
            "../scripts/audio_synthetic_shard.py"

    rule audio_synthetic_metadata:
        input:
            expand(f"{AUDIO_DIR}/manifests/shard_{{k}}.tsv", k=AUDIO_PLAN.feature_shards),
        output:
            f"{AUDIO_SYNTH_ROOT}/metadata.csv",
        log:
            "results/logs/audio_synthetic_metadata/all.log",
        conda:
            AUDIO_ENV
        resources:
            mem_mb=500,
            runtime=5,
        script:
            "../scripts/audio_synthetic_metadata.py"

else:
    manifest_rule("audio", AUDIO_DIR, audio_shard_files, audio_shard_ids)


rule audio_clips:
    input:
        lambda wildcards: checked(AUDIO_PLAN.metadata_files, audio_root()),
    output:
        clips=f"{AUDIO_DIR}/clips.csv",
        tags=f"{AUDIO_DIR}/tags.json",
        dropped=f"{AUDIO_DIR}/dropped.txt",
    log:
        "results/logs/audio_clips/all.log",
    conda:
        AUDIO_ENV
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        layout=AUDIO_PLAN.layout,
        root=lambda wildcards, input: (
            AUDIO["root"] if AUDIO_PLAN.layout == "folder" else AUDIO_PLAN.root_of(input[0])
        ),
        missing=AUDIO["missing_files"],
        # a listed clip deleted or restored changes the clip list, not the metadata
        dropped=lambda wildcards: audio_listing().dropped,
        selection=AUDIO["selection"],
        title=AUDIO_PLAN.title,
    script:
        "../scripts/audio_clips.py"


rule audio_hmm_shard:
    input:
        manifest=f"{AUDIO_DIR}/manifests/shard_{{k}}.tsv",
        # the shard's clip ids (params) are known once an archive is unpacked
        extracted=AUDIO_PLAN.extract_dir if AUDIO_ARCHIVE else [],
    output:
        f"{AUDIO_DIR}/hmm/shard_{{k}}.npz",
    log:
        "results/logs/audio_hmm_shard/{k}.log",
    benchmark:
        "results/benchmarks/audio_hmm_shard/{k}.tsv"
    wildcard_constraints:
        k=r"\d+",
    conda:
        AUDIO_ENV
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        ids=lambda wildcards: audio_shard_ids(wildcards.k),
        seed=config["seed"],
        features={k: v for k, v in AUDIO["features"].items() if k not in ("skip_bad", "n_shards")},
        skip_bad=AUDIO["features"]["skip_bad"],
        hmm=AUDIO["hmm"],
        cache_dir=f"{AUDIO_DIR}/clip_cache",
    script:
        "../scripts/audio_hmm_shard.py"


rule audio_bad_clips:
    input:
        expand(f"{AUDIO_DIR}/hmm/shard_{{k}}.npz", k=AUDIO_PLAN.feature_shards),
    output:
        "results/logs/bad_audio.txt",
    log:
        "results/logs/audio_bad_clips/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/audio_bad_clips.py"


rule audio_loglik_shard:
    input:
        expand(f"{AUDIO_DIR}/hmm/shard_{{k}}.npz", k=AUDIO_PLAN.feature_shards),
    output:
        f"{AUDIO_DIR}/loglik/rows_{{r}}.npz",
    log:
        "results/logs/audio_loglik_shard/{r}.log",
    benchmark:
        "results/benchmarks/audio_loglik_shard/{r}.tsv"
    wildcard_constraints:
        r=r"\d+",
    conda:
        CORE_ENV
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        **AUDIO_PLAN.landmark_params,
        n_shards=len(AUDIO_PLAN.kernel_shards),
    script:
        "../scripts/audio_loglik_shard.py"


rule audio_kernel:
    input:
        shards=expand(f"{AUDIO_DIR}/hmm/shard_{{k}}.npz", k=AUDIO_PLAN.feature_shards),
        rows=expand(f"{AUDIO_DIR}/loglik/rows_{{r}}.npz", r=AUDIO_PLAN.kernel_shards),
    output:
        kernel=f"{AUDIO_DIR}/kernel.npz",
        summary=f"{AUDIO_DIR}/kernel_summary.json",
    log:
        "results/logs/audio_kernel/all.log",
    benchmark:
        "results/benchmarks/audio_kernel/all.tsv"
    conda:
        CORE_ENV
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        **AUDIO_PLAN.landmark_params,
        **AUDIO_PLAN.tau_params,
        tau=AUDIO["kernel"]["tau"],
    script:
        "../scripts/audio_kernel.py"


rule audio_fit:
    input:
        kernel=f"{AUDIO_DIR}/kernel.npz",
        clips=f"{AUDIO_DIR}/clips.csv",
        tags=f"{AUDIO_DIR}/tags.json",
    output:
        f"results/records/audio/{AUDIO_DATASET}/{{method}}_{{trials}}.csv",
    log:
        f"results/logs/audio_fit/{AUDIO_DATASET}/{{method}}_{{trials}}.log",
    benchmark:
        f"results/benchmarks/audio_fit/{AUDIO_DATASET}/{{method}}_{{trials}}.tsv"
    wildcard_constraints:
        method=METHOD_REGISTRY.wildcard("auc"),
        trials=CHUNK,
    conda:
        CORE_ENV
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        seed=config["seed"],
        dataset=AUDIO_DATASET,
        experiment=lambda wildcards: pick(
            AUDIO["experiment"],
            fit_keys(
                "auc",
                AUDIO["experiment"],
                wildcards.method,
                ["n_train", "n_test", "folds", "min_positives", "lams"],
            ),
        ),
        n_bins=config["calibration_bins"],
    script:
        "../scripts/audio_fit.py"


rule audio_table:
    input:
        records=expand(
            f"results/records/audio/{AUDIO_DATASET}/{{method}}_{{trials}}.csv",
            method=AUDIO_METHODS.values(),
            trials=AUDIO_CHUNKS,
        ),
        kernel_summary=f"{AUDIO_DIR}/kernel_summary.json",
        bad="results/logs/bad_audio.txt",
        tags=f"{AUDIO_DIR}/tags.json",
        dropped=f"{AUDIO_DIR}/dropped.txt",
        reference=AUDIO_PLAN.reference,
    output:
        csv=report(
            "results/tables/audio_auc.csv",
            caption="../report/audio_auc_table.rst",
            category="Audio tagging (Sec. 4.2, Table 2)",
        ),
        md="results/tables/audio_auc.md",
        tex="results/tables/audio_auc.tex",
        calibration_csv=report(
            "results/tables/audio_auc_calibration.csv",
            caption="../report/calibration_table.rst",
            category="Audio tagging (Sec. 4.2, Table 2)",
        ),
        calibration_md="results/tables/audio_auc_calibration.md",
        time_csv=report(
            "results/tables/audio_auc_time.csv",
            caption="../report/auc_time.rst",
            category="Audio tagging (Sec. 4.2, Table 2)",
        ),
        time_md="results/tables/audio_auc_time.md",
        figure=report(
            "results/figures/audio_auc.png",
            caption="../report/audio_auc_figure.rst",
            category="Audio tagging (Sec. 4.2, Table 2)",
        ),
        reliability=report(
            "results/figures/audio_auc_reliability.png",
            caption="../report/calibration_reliability.rst",
            category="Audio tagging (Sec. 4.2, Table 2)",
        ),
    log:
        "results/logs/audio_table/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        dataset=AUDIO_PLAN.title,
        methods=list(AUDIO_METHODS),
    script:
        "../scripts/audio_table.py"


if enabled("audio"):
    if not AUDIO_ARCHIVE:  # listed now: collection and config errors before any job
        audio_listing()
    FINAL_OUTPUTS += rules.audio_table.output
