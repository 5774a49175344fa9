# PASCAL VOC image classification (LSPC-new paper, Sec. 4.1, Table 1): images -> SURF per
# shard -> visual-word vocabulary -> bag of words -> LSPC-new / LSPC / KLR / SVC AUC table.
#
# Where the images come from (config voc):
#   voc_root: an existing VOCdevkit        -> listed when the workflow is parsed
#   source: synthetic (the offline default) -> ids known from the config; images generated
#                                              per shard into results/data/voc-synthetic
#   source: download                        -> VOCtrainval tar fetched and extracted by a
#                                              checkpoint; listed after extraction
#   image_folder: one subfolder per class   -> listed when the workflow is parsed; each
#                                              class one-vs-rest, labels from the folders
# Images go to shards by a CRC-32 hash of their id (kclf_workflow.shards.shard_of). Each
# shard has a manifest (kclf_workflow.manifests: id, path, size, mtime, sha256) written by a rule
# whose inputs are the shard's files and whose params are their sizes and times, so adding
# or changing an image recomputes only its shard, then the vocabulary and what follows.
include: "voc_common.smk"


# the VOCtrainval tar through the one download path (a local rule: cache, mirror, URL;
# the PASCAL site publishes only an MD5, checked beside the SHA-256 when one is set)
VOC_TAR = download_file(
    f"voc/{Path(VOC['download']['url']).name}",
    VOC["download"]["url"],
    VOC["download"]["sha256"],
    mirror_relpath=VOC["download"]["mirror_relpath"],
    md5=VOC["download"]["md5"],
)


checkpoint voc_extract:
    input:
        VOC_TAR,
    output:
        directory(VOC_PLAN.extract_dir),
    log:
        "results/logs/voc_extract/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=60,
    script:
        "../scripts/voc_extract.py"


if VOC_PLAN.source == "synthetic":

    rule voc_synthetic_shard:
        output:
            f"{VOC_DIR}/manifests/shard_{{k}}.tsv",
        log:
            "results/logs/voc_synthetic_shard/{k}.log",
        wildcard_constraints:
            k=r"\d+",
        conda:
            IMAGE_ENV
        resources:
            mem_mb=500,
            runtime=10,
        params:
            root=VOC_SYNTH_ROOT,
            ids=lambda wildcards: voc_shard_ids(wildcards.k),
            seed=config["seed"],
            synthetic={k: v for k, v in VOC["synthetic"].items() if k != "n_images"},
            classes=VOC_CLASS_NAMES,
        script:
            "../scripts/voc_synthetic_shard.py"

else:
    manifest_rule("voc", VOC_DIR, voc_shard_files, voc_shard_ids)


rule voc_synthetic_labels:
    input:
        voc_all(f"{VOC_DIR}/manifests/shard_{{k}}.tsv"),
    output:
        f"{VOC_SYNTH_ROOT}/ImageSets/Main/{VOC['image_set']}.txt",
        [f"{VOC_SYNTH_ROOT}/ImageSets/Main/{c}_{VOC['image_set']}.txt" for c in VOC_CLASS_NAMES],
    log:
        "results/logs/voc_synthetic_labels/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=5,
    params:
        root=lambda wildcards, output: str(Path(output[0]).parents[2]),
        ids=lambda wildcards: voc_listing(VOC_SYNTH_ROOT).ids,
        classes=VOC_CLASS_NAMES,
        image_set=VOC["image_set"],
    script:
        "../scripts/voc_synthetic_labels.py"


rule voc_surf_shard:
    input:
        f"{VOC_DIR}/manifests/shard_{{k}}.tsv",
    output:
        f"{VOC_DIR}/descriptors/shard_{{k}}.npz",
    log:
        "results/logs/voc_surf_shard/{k}.log",
    benchmark:
        "results/benchmarks/voc_surf_shard/{k}.tsv"
    wildcard_constraints:
        k=r"\d+",
    conda:
        IMAGE_ENV
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        detector=VOC["features"]["detector"],
        detector_params=VOC["features"]["params"],
        skip_bad_images=VOC["features"]["skip_bad_images"],
    script:
        "../scripts/voc_surf_shard.py"


rule voc_bad_images:
    input:
        voc_all(f"{VOC_DIR}/descriptors/shard_{{k}}.npz"),
    output:
        "results/logs/bad_images.txt",
    log:
        "results/logs/voc_bad_images/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/voc_bad_images.py"


rule voc_vocabulary:
    input:
        voc_all(f"{VOC_DIR}/descriptors/shard_{{k}}.npz"),
    output:
        f"{VOC_DIR}/vocabulary.npz",
    log:
        "results/logs/voc_vocabulary/all.log",
    benchmark:
        "results/benchmarks/voc_vocabulary/all.tsv"
    conda:
        CORE_ENV
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        seed=config["seed"],
        n_words=VOC["vocabulary"]["n_words"],
        sample_size=VOC["vocabulary"]["sample_size"],
        batch_size=VOC["vocabulary"]["batch_size"],
    script:
        "../scripts/voc_vocabulary.py"


rule voc_bow_shard:
    input:
        shard=f"{VOC_DIR}/descriptors/shard_{{k}}.npz",
        vocabulary=f"{VOC_DIR}/vocabulary.npz",
    output:
        f"{VOC_DIR}/bow/shard_{{k}}.npz",
    log:
        "results/logs/voc_bow_shard/{k}.log",
    wildcard_constraints:
        k=r"\d+",
    conda:
        CORE_ENV
    resources:
        mem_mb=2000,
        runtime=15,
    params:
        normalize=VOC["vocabulary"]["normalize"],
    script:
        "../scripts/voc_bow_shard.py"


rule voc_dataset:
    input:
        bow=voc_all(f"{VOC_DIR}/bow/shard_{{k}}.npz"),
        labels=lambda wildcards: VOC_PLAN.label_files(voc_root()),
        bad="results/logs/bad_images.txt",
    output:
        f"{VOC_DIR}/dataset.npz",
    log:
        "results/logs/voc_dataset/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=2000,
        runtime=5,
    params:
        **VOC_PLAN.split_params,
        root=lambda wildcards: voc_root(),
        image_set=VOC["image_set"],
        classes=VOC_CLASS_NAMES,
        difficult=VOC["difficult"],
        folder=VOC_PLAN.source == "folder",
        title=VOC_PLAN.title,
    script:
        "../scripts/voc_dataset.py"


rule voc_fit:
    input:
        f"{VOC_DIR}/dataset.npz",
    output:
        "results/records/voc/{method}_{trials}.csv",
    log:
        "results/logs/voc_fit/{method}_{trials}.log",
    benchmark:
        "results/benchmarks/voc_fit/{method}_{trials}.tsv"
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
        dataset=VOC_PLAN.dataset,
        experiment=lambda wildcards: pick(
            VOC["experiment"],
            fit_keys(
                "auc",
                VOC["experiment"],
                wildcards.method,
                [
                    "n_train",
                    "folds",
                    "sigma_factors",
                    *METHOD_REGISTRY.spec("auc", wildcards.method).grid,
                ],
            ),
        ),
        n_bins=config["calibration_bins"],
    script:
        "../scripts/auc_fit.py"


rule voc_table:
    input:
        records=expand(
            "results/records/voc/{method}_{trials}.csv",
            method=VOC_METHODS.values(),
            trials=VOC_CHUNKS,
        ),
        reference=VOC_PLAN.reference(),
        bad="results/logs/bad_images.txt",
    output:
        csv=report(
            "results/tables/voc_auc.csv",
            caption="../report/voc_auc_table.rst",
            category="VOC images (Sec. 4.1, Table 1)",
        ),
        md="results/tables/voc_auc.md",
        calibration_csv="results/tables/voc_auc_calibration.csv",
        calibration_md="results/tables/voc_auc_calibration.md",
        time_csv=report(
            "results/tables/voc_auc_time.csv",
            caption="../report/auc_time.rst",
            category="VOC images (Sec. 4.1, Table 1)",
        ),
        time_md="results/tables/voc_auc_time.md",
        tex="results/tables/voc_auc.tex",
        figure=report(
            "results/figures/voc_auc.png",
            caption="../report/voc_auc_figure.rst",
            category="VOC images (Sec. 4.1, Table 1)",
        ),
        reliability=report(
            "results/figures/voc_auc_reliability.png",
            caption="../report/voc_auc_reliability.rst",
            category="VOC images (Sec. 4.1, Table 1)",
        ),
    log:
        "results/logs/voc_table/all.log",
    conda:
        CORE_ENV
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        methods=list(VOC_METHODS),
        tasks=VOC_CLASS_NAMES,
        title=VOC_PLAN.title,
    script:
        "../scripts/voc_table.py"


if enabled("voc"):
    if VOC_PLAN.source != "download":  # listed now: config errors before any job
        voc_listing()
    FINAL_OUTPUTS += rules.voc_table.output
