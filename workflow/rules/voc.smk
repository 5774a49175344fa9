# PASCAL VOC image classification (LSPC-new paper, Sec. 4.1, Table 1): images -> SURF per
# shard -> visual-word vocabulary -> bag of words -> LSPC-new / LSPC / KLR / SVC AUC table.
#
# Where the images come from (config voc):
#   voc_root: an existing VOCdevkit        -> listed when the workflow is parsed
#   source: synthetic (the offline default) -> ids known from the config; images generated
#                                              per shard into results/data/voc/synthetic
#   source: download                        -> VOCtrainval tar fetched and extracted by a
#                                              checkpoint; listed after extraction
# Images go to shards by a CRC-32 hash of their id (kclf.features.surf_bow.shard_of), so
# adding an image recomputes only its shard, then the vocabulary and what follows.
import functools

from kclf.datasets import synthetic_voc
from kclf.datasets.voc import VOC_CLASSES, image_paths, list_image_ids, resolve_voc_root
from kclf.features.surf_bow import n_shards_for, shard_members

VOC = config["voc"]
VOC_DIR = "results/data/voc"
VOC_SYNTH_ROOT = f"{VOC_DIR}/synthetic/VOCdevkit/VOC{VOC['year']}"
VOC_DOWNLOAD_DIR = f"{config['cache_dir']}/voc"
VOC_CLASS_NAMES = list(VOC["classes"] or VOC_CLASSES)
VOC_SLUGS = {"LSPC-new": "lspc_new", "LSPC": "lspc", "KLR": "klr", "SVC": "svc"}
VOC_METHODS = {m: VOC_SLUGS[m] for m in VOC["experiment"]["methods"]}  # name -> file slug
VOC_DATASET = "voc-synthetic" if VOC["voc_root"] is None and VOC["source"] == "synthetic" else (
    f"voc{VOC['year']}"
)


def voc_source():
    return "devkit" if VOC["voc_root"] else VOC["source"]


def voc_root():
    """The VOC<year> folder (for a download: after the extraction checkpoint ran)."""
    src = voc_source()
    if src == "devkit":
        return str(resolve_voc_root(VOC["voc_root"], VOC["year"]))
    if src == "synthetic":
        return VOC_SYNTH_ROOT
    return str(Path(checkpoints.voc_extract.get().output[0]) / "VOCdevkit" / f"VOC{VOC['year']}")


@functools.cache
def _voc_listing(root):
    if voc_source() == "synthetic":
        s = VOC["synthetic"]
        ids = synthetic_voc.image_ids(s["n_images"], VOC["year"])
        names = [
            synthetic_voc.image_filename(
                config["seed"], i, s["grey_fraction"], s["cmyk_fraction"], s["png_fraction"]
            )
            for i in ids
        ]
        paths = [f"{root}/JPEGImages/{n}" for n in names]
    else:
        ids = list_image_ids(root, VOC["image_set"], VOC_CLASS_NAMES)
        paths = [str(p) for p in image_paths(root, ids)]
    n = VOC["features"]["n_shards"] or n_shards_for(len(ids), VOC["features"]["images_per_shard"])
    members = shard_members(ids, n)
    by_id = dict(zip(ids, paths))
    return ids, {k: [(i, by_id[i]) for i in v] for k, v in members.items()}


def voc_shards():
    return _voc_listing(voc_root())[1]


def voc_shard_ids(k):
    return [i for i, _ in voc_shards()[int(k)]]


def voc_shard_inputs(wildcards):
    """Images of shard k (for generated images: the shard's manifest)."""
    if voc_source() == "synthetic":
        return [f"{VOC_DIR}/synthetic/shards/{wildcards.k}.tsv"]
    return [p for _, p in voc_shards()[int(wildcards.k)]]


def voc_all(pattern):
    return lambda wildcards: expand(pattern, k=sorted(voc_shards()))


def voc_label_files(wildcards):
    root = voc_root()
    main = f"{root}/ImageSets/Main"
    return [f"{main}/{c}_{VOC['image_set']}.txt" for c in VOC_CLASS_NAMES]


def voc_trial_chunks():
    e = VOC["experiment"]
    per = e["trials_per_job"]
    return [f"{a}-{min(a + per, e['trials']) - 1}" for a in range(0, e["trials"], per)]


def voc_reference():
    """The paper's Table 1 CSV when configured and present (else nothing)."""
    ref = VOC["reference"]
    return [ref] if ref and Path(ref).is_file() else []


VOC_IMAGE_ENV = "../../envs/images.yaml"
VOC_CORE_ENV = "../../envs/core.yaml"


rule voc_download:
    output:
        f"{VOC_DOWNLOAD_DIR}/{Path(VOC['download']['url']).name}",
    log:
        "results/logs/voc_download/all.log",
    params:
        url=VOC["download"]["url"],
        sha256=VOC["download"]["sha256"],
        md5=VOC["download"]["md5"],
        mirror=config["mirror"],
        mirror_relpath=VOC["download"]["mirror_relpath"],
    threads: 1
    resources:
        mem_mb=500,
        runtime=120,
    conda:
        VOC_CORE_ENV
    script:
        "../scripts/voc_download.py"


checkpoint voc_extract:
    input:
        rules.voc_download.output,
    output:
        directory(f"{VOC_DOWNLOAD_DIR}/extracted"),
    log:
        "results/logs/voc_extract/all.log",
    threads: 1
    resources:
        mem_mb=500,
        runtime=60,
    conda:
        VOC_CORE_ENV
    script:
        "../scripts/voc_extract.py"


rule voc_synthetic_shard:
    output:
        f"{VOC_DIR}/synthetic/shards/{{k}}.tsv",
    log:
        "results/logs/voc_synthetic_shard/{k}.log",
    params:
        root=VOC_SYNTH_ROOT,
        ids=lambda wildcards: voc_shard_ids(wildcards.k),
        seed=config["seed"],
        synthetic=VOC["synthetic"],
        classes=VOC_CLASS_NAMES,
    wildcard_constraints:
        k=r"\d+",
    threads: 1
    resources:
        mem_mb=500,
        runtime=10,
    conda:
        VOC_IMAGE_ENV
    script:
        "../scripts/voc_synthetic_shard.py"


rule voc_synthetic_labels:
    input:
        voc_all(f"{VOC_DIR}/synthetic/shards/{{k}}.tsv"),
    output:
        f"{VOC_SYNTH_ROOT}/ImageSets/Main/{VOC['image_set']}.txt",
        [f"{VOC_SYNTH_ROOT}/ImageSets/Main/{c}_{VOC['image_set']}.txt" for c in VOC_CLASS_NAMES],
    log:
        "results/logs/voc_synthetic_labels/all.log",
    params:
        root=VOC_SYNTH_ROOT,
        ids=lambda wildcards: _voc_listing(VOC_SYNTH_ROOT)[0],
        classes=VOC_CLASS_NAMES,
        image_set=VOC["image_set"],
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        VOC_CORE_ENV
    script:
        "../scripts/voc_synthetic_labels.py"


rule voc_surf_shard:
    input:
        voc_shard_inputs,
    output:
        f"{VOC_DIR}/descriptors/shard_{{k}}.npz",
    log:
        "results/logs/voc_surf_shard/{k}.log",
    benchmark:
        "results/benchmarks/voc_surf_shard/{k}.tsv"
    params:
        ids=lambda wildcards: voc_shard_ids(wildcards.k),
        synthetic=voc_source() == "synthetic",
        features=VOC["features"],
    wildcard_constraints:
        k=r"\d+",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        VOC_IMAGE_ENV
    script:
        "../scripts/voc_surf_shard.py"


rule voc_bad_images:
    input:
        voc_all(f"{VOC_DIR}/descriptors/shard_{{k}}.npz"),
    output:
        "results/logs/bad_images.txt",
    log:
        "results/logs/voc_bad_images/all.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        VOC_CORE_ENV
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
    params:
        seed=config["seed"],
        vocabulary=VOC["vocabulary"],
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    conda:
        VOC_CORE_ENV
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
    params:
        normalize=VOC["vocabulary"]["normalize"],
    wildcard_constraints:
        k=r"\d+",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=15,
    conda:
        VOC_CORE_ENV
    script:
        "../scripts/voc_bow_shard.py"


rule voc_dataset:
    input:
        bow=voc_all(f"{VOC_DIR}/bow/shard_{{k}}.npz"),
        labels=voc_label_files,
        bad="results/logs/bad_images.txt",
    output:
        f"{VOC_DIR}/dataset.npz",
    log:
        "results/logs/voc_dataset/all.log",
    params:
        root=lambda wildcards: voc_root(),
        image_set=VOC["image_set"],
        classes=VOC_CLASS_NAMES,
        difficult=VOC["difficult"],
    threads: 1
    resources:
        mem_mb=2000,
        runtime=5,
    conda:
        VOC_CORE_ENV
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
    params:
        seed=config["seed"],
        dataset=VOC_DATASET,
        experiment=VOC["experiment"],
        n_bins=config["calibration_bins"],
    wildcard_constraints:
        method="|".join(VOC_METHODS.values()),
        trials=r"\d+-\d+",
    threads: 1
    resources:
        mem_mb=4000,
        runtime=120,
    conda:
        VOC_CORE_ENV
    script:
        "../scripts/voc_fit.py"


rule voc_table:
    input:
        records=expand(
            "results/records/voc/{method}_{trials}.csv",
            method=VOC_METHODS.values(),
            trials=voc_trial_chunks(),
        ),
        reference=voc_reference(),
    output:
        csv=report(
            "results/tables/voc_auc.csv",
            caption="../report/voc_auc_table.rst",
            category="VOC images (Sec. 4.1, Table 1)",
        ),
        md="results/tables/voc_auc.md",
        tex="results/tables/voc_auc.tex",
        figure=report(
            "results/figures/voc_auc.png",
            caption="../report/voc_auc_figure.rst",
            category="VOC images (Sec. 4.1, Table 1)",
        ),
    log:
        "results/logs/voc_table/all.log",
    params:
        dataset=VOC_DATASET,
        methods=list(VOC_METHODS),
        caption=(
            f"{VOC_DATASET}: test AUC (%) mean (std) per class, sigma and lambda by "
            "cross-validation on the training part (LSPC-new paper, Sec. 4.1, Table 1);"
        ),
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    conda:
        VOC_CORE_ENV
    script:
        "../scripts/voc_table.py"


if enabled("voc"):
    FINAL_OUTPUTS += rules.voc_table.output
