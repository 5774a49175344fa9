# Audio tagging with the HMM kernel (LSPC-new paper, Sec. 4.2, Table 2): clips -> frame
# features and one HMM per clip (per shard) -> cross log-likelihood row blocks -> kernel
# (symmetry check, PSD projection) -> LSPC-new / LSPC / KLR / SVC per trial chunk -> table.
#
# Where the clips come from (config audio.source):
#   synthetic    generated clips in the Freesound-style layout (the offline default)
#   freesound    a folder with metadata.csv (id, file, tags, duration): audio.root
#   esc50        the ESC-50 layout: audio.root, or (root null) the GitHub archive, verified
#   urbansound8k the UrbanSound8K layout: audio.root
# Shard counts come from the config, so the DAG is known before any clip is listed.
AUDIO = config["audio"]
AUDIO_DATASET = {
    "synthetic": "audio-synthetic",
    "freesound": "freesound",
    "esc50": "esc50",
    "urbansound8k": "urbansound8k",
}[AUDIO["source"]]
AUDIO_DIR = f"results/data/{AUDIO_DATASET}"
AUDIO_SYNTH_ROOT = f"{AUDIO_DIR}/collection"
AUDIO_METHODS = {"LSPC-new": "lspc_new", "LSPC": "lspc", "KLR": "klr", "SVC": "svc"}
AUDIO_SLUGS = [AUDIO_METHODS[m] for m in AUDIO["experiment"]["methods"]]
AUDIO_FEATURE_SHARDS = list(range(AUDIO["features"]["n_shards"]))
AUDIO_KERNEL_SHARDS = list(range(AUDIO["kernel"]["n_shards"]))
AUDIO_ENV = "../../envs/audio.yaml"
AUDIO_CORE_ENV = "../../envs/core.yaml"

if AUDIO["source"] in ("freesound", "urbansound8k") and not AUDIO["root"]:
    raise WorkflowError(
        f"invalid config: key 'audio.root' is required for source {AUDIO['source']}"
    )

if AUDIO["source"] == "esc50" and not AUDIO["root"]:
    AUDIO_ARCHIVE = download_file(
        "audio/ESC-50-master.zip",
        url=AUDIO["download"]["url"],
        sha256=AUDIO["download"]["sha256"],
        mirror_relpath=AUDIO["download"]["mirror_relpath"],
    )
else:
    AUDIO_ARCHIVE = None


if AUDIO["source"] == "synthetic":
    AUDIO_COLLECTION = [f"{AUDIO_SYNTH_ROOT}/metadata.csv"]
else:
    AUDIO_COLLECTION = [AUDIO_ARCHIVE] if AUDIO_ARCHIVE else []
_per, _n = AUDIO["experiment"]["trials_per_job"], AUDIO["experiment"]["trials"]
AUDIO_TRIAL_CHUNKS = [f"{a}-{min(a + _per, _n) - 1}" for a in range(0, _n, _per)]
AUDIO_REFERENCE = existing_file(AUDIO["reference"])


rule audio_synthetic:
    output:
        f"{AUDIO_SYNTH_ROOT}/metadata.csv",
    log:
        "results/logs/audio_synthetic/all.log",
    conda:
        AUDIO_ENV
    threads: 1
    resources:
        mem_mb=500,
        runtime=10,
    params:
        root=lambda wildcards, output: str(Path(output[0]).parent),
        seed=config["seed"],
        synthetic=AUDIO["synthetic"],
    script:
        "../scripts/audio_synthetic.py"


rule audio_clips:
    input:
        AUDIO_COLLECTION,
    output:
        clips=f"{AUDIO_DIR}/clips.csv",
        tags=f"{AUDIO_DIR}/tags.txt",
    log:
        "results/logs/audio_clips/all.log",
    conda:
        AUDIO_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        source=AUDIO["source"],
        root=lambda wildcards, input: (
            str(Path(input[0]).parent)
            if AUDIO["source"] == "synthetic"
            else AUDIO["root"]
        ),
        extract_dir=f"{config['cache_dir']}/audio/ESC-50",
        missing=AUDIO["missing_files"],
        selection=AUDIO["selection"],
    script:
        "../scripts/audio_clips.py"


rule audio_hmm_shard:
    input:
        f"{AUDIO_DIR}/clips.csv",
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
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        n_shards=len(AUDIO_FEATURE_SHARDS),
        seed=config["seed"],
        features=AUDIO["features"],
        hmm=AUDIO["hmm"],
        cache_dir=f"{AUDIO_DIR}/clip_cache",
    script:
        "../scripts/audio_hmm_shard.py"


rule audio_bad_clips:
    input:
        expand(f"{AUDIO_DIR}/hmm/shard_{{k}}.npz", k=AUDIO_FEATURE_SHARDS),
    output:
        "results/logs/bad_audio.txt",
    log:
        "results/logs/audio_bad_clips/all.log",
    conda:
        AUDIO_CORE_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/audio_bad_clips.py"


rule audio_loglik_shard:
    input:
        expand(f"{AUDIO_DIR}/hmm/shard_{{k}}.npz", k=AUDIO_FEATURE_SHARDS),
    output:
        f"{AUDIO_DIR}/loglik/rows_{{r}}.npz",
    log:
        "results/logs/audio_loglik_shard/{r}.log",
    benchmark:
        "results/benchmarks/audio_loglik_shard/{r}.tsv"
    wildcard_constraints:
        r=r"\d+",
    conda:
        AUDIO_CORE_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        n_shards=len(AUDIO_KERNEL_SHARDS),
    script:
        "../scripts/audio_loglik_shard.py"


rule audio_kernel:
    input:
        clips=f"{AUDIO_DIR}/clips.csv",
        tags=f"{AUDIO_DIR}/tags.txt",
        shards=expand(f"{AUDIO_DIR}/hmm/shard_{{k}}.npz", k=AUDIO_FEATURE_SHARDS),
        rows=expand(f"{AUDIO_DIR}/loglik/rows_{{r}}.npz", r=AUDIO_KERNEL_SHARDS),
    output:
        kernel=f"{AUDIO_DIR}/kernel.npz",
        summary=f"{AUDIO_DIR}/kernel_summary.json",
    log:
        "results/logs/audio_kernel/all.log",
    benchmark:
        "results/benchmarks/audio_kernel/all.tsv"
    conda:
        AUDIO_CORE_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        tau=AUDIO["kernel"]["tau"],
    script:
        "../scripts/audio_kernel.py"


rule audio_fit:
    input:
        f"{AUDIO_DIR}/kernel.npz",
    output:
        f"results/records/audio/{AUDIO_DATASET}/{{method}}_{{trials}}.csv",
    log:
        f"results/logs/audio_fit/{AUDIO_DATASET}/{{method}}_{{trials}}.log",
    benchmark:
        f"results/benchmarks/audio_fit/{AUDIO_DATASET}/{{method}}_{{trials}}.tsv"
    wildcard_constraints:
        method="|".join(AUDIO_METHODS.values()),
        trials=r"\d+-\d+",
    conda:
        AUDIO_CORE_ENV
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        seed=config["seed"],
        dataset=AUDIO_DATASET,
        experiment=AUDIO["experiment"],
        n_bins=config["calibration_bins"],
    script:
        "../scripts/audio_fit.py"


rule audio_table:
    input:
        records=expand(
            f"results/records/audio/{AUDIO_DATASET}/{{method}}_{{trials}}.csv",
            method=AUDIO_SLUGS,
            trials=AUDIO_TRIAL_CHUNKS,
        ),
        kernel_summary=f"{AUDIO_DIR}/kernel_summary.json",
        bad="results/logs/bad_audio.txt",
        reference=AUDIO_REFERENCE,
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
        AUDIO_CORE_ENV
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        dataset=AUDIO_DATASET,
        methods=AUDIO["experiment"]["methods"],
    script:
        "../scripts/audio_table.py"


if enabled("audio"):
    FINAL_OUTPUTS += rules.audio_table.output
