"""The VOC workflow on tiny generated image sets: one added image recomputes only its shard
(then the vocabulary and what follows), corrupt images fail or are listed, and the VOC2010
paper config builds its DAG quickly with coarse jobs."""

import math
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import workflow_run as wf
import yaml

from kclf_workflow.datasets.synthetic_voc import image_ids, make_synthetic_voc
from kclf_workflow.datasets.voc import VOC_CLASSES, image_paths
from kclf_workflow.shards import n_shards_for, shard_of

ROOT = Path(__file__).resolve().parents[2]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
DATASET = "results/data/voc-synthetic/dataset.npz"
DOWNLOADED = "results/data/voc-download-VOCtrainval_03-May-2010/dataset.npz"

pytestmark = pytest.mark.slow


def _config(overrides, paper=False):
    cfg = yaml.safe_load((ROOT / "config.yaml").read_text())
    if paper:
        cfg = wf._merge(
            cfg, yaml.safe_load((ROOT / "workflow/configs/voc2010_paper.yaml").read_text())
        )
    for family, block in cfg.items():  # only the image family runs here
        if isinstance(block, dict) and "enabled" in block and family != "voc":
            block["enabled"] = False
    return wf._merge(cfg, overrides)


def _snakemake(workdir, cfg, *args, check=True):
    (workdir / "config.yaml").write_text(yaml.safe_dump(cfg))
    cmd = [SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "-d", str(workdir), "--cores", "2", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=workdir)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


TINY = {
    "features": {"images_per_shard": 7},
    "vocabulary": {"n_words": 8, "sample_size": 3000},
    "experiment": {
        "n_train": 4,
        "trials": 1,
        "trials_per_job": 1,
        "methods": ["LSPC-new"],
        "sigma_factors": [1.0],
        "lams": [0.1],
    },
}


def test_adding_one_image_recomputes_only_its_shard(tmp_path):
    synth = {"n_images": 12, "size": [96, 72], "max_objects": 2}
    cfg = _config({"voc": {"source": "synthetic", "synthetic": synth, **TINY}})
    _snakemake(tmp_path, cfg, DATASET)
    shards = sorted((tmp_path / "results/data/voc-synthetic/descriptors").glob("shard_*.npz"))
    n_shards = n_shards_for(13, 7)
    assert len(shards) == n_shards == n_shards_for(12, 7) == 2
    before = {p.name: p.stat().st_mtime_ns for p in shards}

    cfg["voc"]["synthetic"]["n_images"] = 13
    new_id = image_ids(13)[-1]
    k = shard_of(new_id, n_shards)
    plan = wf.planned_job_list(_snakemake(tmp_path, cfg, "-n", DATASET).stdout)
    expected = sorted(
        [
            ("voc_synthetic_shard", f"k={k}"),
            ("voc_surf_shard", f"k={k}"),
            ("voc_synthetic_labels", ""),
            ("voc_bad_images", ""),
            ("voc_vocabulary", ""),
            ("voc_dataset", ""),
        ]
        + [("voc_bow_shard", f"k={j}") for j in range(n_shards)]
    )
    assert plan == expected

    time.sleep(1.0)
    _snakemake(tmp_path, cfg, DATASET)
    after = {p.name: p.stat().st_mtime_ns for p in shards}
    assert [n for n in before if after[n] != before[n]] == [f"shard_{k}.npz"]
    with np.load(tmp_path / DATASET) as z:
        assert z["X"].shape == (13, 8) and str(z["ids"][-1]) == new_id
        assert z["Y"].shape == (13, len(VOC_CLASSES))


def test_paper_config_dag_is_quick_and_coarse(tmp_path):
    """A fake VOC2010 listing (11,321 generated ids, empty image files, no pixels)."""
    devkit = tmp_path / "VOCdevkit" / "VOC2010"
    main = devkit / "ImageSets" / "Main"
    main.mkdir(parents=True)
    (devkit / "JPEGImages").mkdir()
    ids = [f"{2008 + k % 3}_{k:06d}" for k in range(11321)]
    (main / "trainval.txt").write_text("\n".join(ids) + "\n")
    labels = "\n".join(f"{i} -1" for i in ids) + "\n"
    for c in VOC_CLASSES:
        (main / f"{c}_trainval.txt").write_text(labels)
    for i in ids:
        (devkit / "JPEGImages" / f"{i}.jpg").touch()
    work = tmp_path / "work"
    work.mkdir()
    cfg = _config({"voc": {"voc_root": str(devkit)}}, paper=True)
    t0 = time.perf_counter()
    out = _snakemake(work, cfg, "-n", "results/tables/voc_auc.csv").stdout
    seconds = time.perf_counter() - t0
    total = int(re.search(r"^total\s+(\d+)", out, re.M).group(1))
    e, f = cfg["voc"]["experiment"], cfg["voc"]["features"]
    shards = math.ceil(11321 / f["images_per_shard"])
    fits = 4 * math.ceil(e["trials"] / e["trials_per_job"])
    # manifest, SURF and word counts per shard; bad-image list, vocabulary, dataset, table
    assert total == 3 * shards + fits + 4, out[-1500:]
    # a guard against planning that grows with the shards' product (minutes), not a
    # benchmark: ~10 s alone, 33 s once beside the rest of make test on 2 cores
    assert seconds < 90, f"DAG of the paper config took {seconds:.1f} s"
    print(f"paper DAG: {total} jobs ({shards} shards, {fits} fit jobs) in {seconds:.1f} s")


def test_download_route_and_corrupt_images(tmp_path):
    """source: download, served by a local mirror: verify, extract (checkpoint), shard; a
    corrupt JPEG in the archive fails naming its path, or with skip_bad_images is listed in
    results/logs/bad_images.txt and left out; a wrong checksum fails."""
    import hashlib
    import tarfile

    src = tmp_path / "src" / "VOCdevkit" / "VOC2010"
    ids = make_synthetic_voc(src, n_images=8, seed=2, size=(96, 72), png_fraction=0.0)
    broken = image_paths(src, ids)[3]
    broken.write_bytes(broken.read_bytes()[:600])  # a truncated JPEG
    mirror = tmp_path / "mirror"
    tar_path = mirror / "voc" / "VOCtrainval_03-May-2010.tar"
    tar_path.parent.mkdir(parents=True)
    with tarfile.open(tar_path, "w") as tar:
        tar.add(src.parent, arcname="VOCdevkit")
    data = tar_path.read_bytes()
    work = tmp_path / "work"
    work.mkdir()
    download = {
        "url": "https://example.invalid/VOCtrainval_03-May-2010.tar",  # never contacted
        "sha256": hashlib.sha256(data).hexdigest(),
        "md5": hashlib.md5(data).hexdigest(),
    }
    cfg = _config(
        {"mirror": str(mirror), "voc": {"source": "download", "download": download, **TINY}}
    )
    extracted = Path("resources/voc/VOCtrainval_03-May-2010/VOCdevkit/VOC2010/JPEGImages")
    extracted = extracted / broken.name

    proc = _snakemake(work, cfg, DOWNLOADED, check=False)
    assert proc.returncode != 0
    assert f"cannot read image {extracted}" in proc.stdout + proc.stderr
    assert not (work / DOWNLOADED).exists()
    assert (work / "resources/voc/VOCtrainval_03-May-2010.tar").read_bytes() == data

    cfg["voc"]["features"]["skip_bad_images"] = True
    _snakemake(work, cfg, DOWNLOADED)
    listed = (work / "results/logs/bad_images.txt").read_text().splitlines()
    assert [line.split("\t")[0] for line in listed if not line.startswith("#")] == [str(extracted)]
    with np.load(work / DOWNLOADED) as z:
        assert [str(i) for i in z["ids"]] == [i for i in ids if i != ids[3]]
    _snakemake(work, cfg, "results/tables/voc_auc.csv")
    caption = (work / "results/tables/voc_auc.md").read_text().split("\n\n")[0]
    assert "1 image(s) skipped as unreadable (listed in bad_images.txt)." in caption
    assert "'Average' covers" in caption

    cfg["voc"]["download"]["md5"] = "0" * 32  # a wrong checksum is an error, not a warning
    (work / "resources/voc/VOCtrainval_03-May-2010.tar").unlink()
    proc = _snakemake(
        work, cfg, "--forcerun", "download_voc_VOCtrainval_03_May_2010_tar", DOWNLOADED, check=False
    )
    assert proc.returncode != 0
    assert f"expected md5 {'0' * 32}" in proc.stdout + proc.stderr
