"""The scale options of the workflow on a tiny config
(tests/workflow_configs/scale.yaml: synthetic VOC and audio):

* ``audio.kernel.landmarks: m`` runs the audio chain end to end and gives a table; with
  m = n (every clip a landmark) its kernel equals the full kernel;
* ``voc.experiment.n_basis: b`` runs the VOC fits with the low-rank LSPC;
* caching: adding either option to a finished run plans only the jobs that read it
  (never the features), and changing it again likewise;
* ``workflow/configs/voc2010_full.yaml`` (VOC 2010 train -> val) dry-runs against a VOC
  2010 layout (generated lists of the devkit's sizes, empty image files).
"""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import workflow_run as wf
import yaml

from kclf_workflow.datasets.synthetic_voc import make_synthetic_voc, write_image_sets
from kclf_workflow.datasets.voc import VOC_CLASSES

pytestmark = pytest.mark.slow

KERNEL = "results/data/audio-synthetic/kernel.npz"
SUMMARY = "results/data/audio-synthetic/kernel_summary.json"
PROV = ("provenance", "")
FULL = "full_kernel"


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run of the scale config with both options at null (the exact models)."""
    work = wf.make_workdir(tmp_path_factory.mktemp("scale"), "scale")
    wf.run(work, cores=2, timeout=1200)
    for name in (KERNEL, SUMMARY):  # the full kernel, kept for the landmark comparison
        (work / FULL / Path(name).name).parent.mkdir(exist_ok=True)
        shutil.copy(work / name, work / FULL / Path(name).name)
    return work, yaml.safe_load((work / "config.yaml").read_text())


def _with(cfg, landmarks=None, n_basis=None):
    out = copy.deepcopy(cfg)
    out["audio"]["kernel"]["landmarks"] = landmarks
    out["voc"]["experiment"]["n_basis"] = n_basis
    return out


def _audio_kernel_jobs(cfg):
    """The jobs that read audio.kernel.landmarks: the row blocks, the kernel, what follows."""
    e = cfg["audio"]["experiment"]
    chunks = [f"0-{e['trials'] - 1}"]
    fits = [
        ("audio_fit", f"method={m}, trials={c}")
        for m in ("lspc_new", "klr")  # the config's methods: LSPC-new, KLR
        for c in chunks
    ]
    rows = [("audio_loglik_shard", f"r={r}") for r in range(cfg["audio"]["kernel"]["n_shards"])]
    return sorted(rows + [("audio_kernel", ""), *fits, ("audio_table", ""), PROV])


def _voc_lspc_jobs(cfg):
    """The jobs that read voc.experiment.n_basis: the LSPC fits (not KLR's) and the table."""
    e = cfg["voc"]["experiment"]
    chunk = f"0-{e['trials'] - 1}"
    fits = [("voc_fit", f"method={m}, trials={chunk}") for m in ("lspc_new", "lspc")]
    return sorted([*fits, ("voc_table", ""), PROV])


def test_adding_the_options_to_a_finished_run_plans_only_their_jobs(finished):
    work, cfg = finished
    assert wf.dry_run(work, cfg) == []
    assert wf.dry_run(work, _with(cfg, landmarks=6)) == _audio_kernel_jobs(cfg)
    assert wf.dry_run(work, _with(cfg, n_basis=5)) == _voc_lspc_jobs(cfg)
    both = wf.dry_run(work, _with(cfg, landmarks=6, n_basis=5))
    assert both == sorted(set(_audio_kernel_jobs(cfg)) | set(_voc_lspc_jobs(cfg)))
    # null written out is the same config as the key left out
    assert wf.dry_run(work, _with(cfg)) == []
    wf.dry_run(work, cfg)  # restore


def test_landmark_and_low_rank_runs_give_tables_and_their_edits_rerun_only_them(finished):
    work, cfg = finished
    with np.load(work / KERNEL) as z:
        K_full, ids_full = z["K"], z["ids"].copy()
    records = sorted((work / "results/records/voc").glob("*.csv"))
    before = {p.name: p.read_bytes() for p in records}

    edited = _with(cfg, landmarks=6, n_basis=5)
    (work / "config.yaml").write_text(yaml.safe_dump(edited, sort_keys=True))
    wf.run(work, cores=2, timeout=1200)

    with np.load(work / KERNEL) as z:
        Phi, J, ids = z["Phi"], z["landmarks"], z["ids"]
        assert "K" not in z.files
    n = len(ids_full)
    assert ids.tolist() == ids_full.tolist() and J.shape == (6,) and Phi.shape[0] == n
    assert 1 <= Phi.shape[1] <= 6
    summary = json.loads((work / SUMMARY).read_text())
    assert summary["landmarks"] == 6 and summary["rank"] == Phi.shape[1]
    assert summary["n_clips"] == n
    caption = (work / "results/tables/audio_auc.md").read_text()
    assert "6 landmark clips" in caption
    table = (work / "results/tables/audio_auc.csv").read_text()
    assert "LSPC-new" in table and "KLR" in table
    # the Nystroem kernel is a different kernel (rank <= 6 < n = 16 clips)
    assert np.abs(Phi @ Phi.T - K_full).max() > 1e-3

    # n_basis reached LSPCCV: the LSPC records changed (probabilities of another model),
    # KLR's (which n_basis does not touch) were not rewritten
    after = {p.name: p.read_bytes() for p in records}
    for name in before:
        if name.startswith(("lspc_new_", "lspc_")):
            assert after[name] != before[name], name
        else:
            assert after[name] == before[name], name
    assert (work / "results/tables/voc_auc.csv").is_file()

    # changing the options again: the same jobs, and back to null likewise
    assert wf.dry_run(work, _with(cfg, landmarks=8, n_basis=5)) == _audio_kernel_jobs(cfg)
    assert wf.dry_run(work, _with(cfg, landmarks=6, n_basis=7)) == _voc_lspc_jobs(cfg)
    assert wf.dry_run(work, edited) == []


def test_every_clip_a_landmark_gives_the_full_kernel(finished, tmp_path):
    """landmarks >= n: J = every clip, K[:, J] = K, and Phi Phi^T = K V+ diag(1/w+) V+^T K
    = V+ diag(w+) V+^T, the full kernel's PSD projection (negative eigenvalues clipped),
    up to the eigenvalues Nystroem drops (at most rcond * max w each) and round-off."""
    work, cfg = finished
    with np.load(work / FULL / Path(KERNEL).name) as z:
        K_psd, D, tau, ids = z["K"], z["D"], float(z["tau"]), z["ids"]
    full = json.loads((work / FULL / Path(SUMMARY).name).read_text())
    n = len(ids)
    copy_work = wf.make_workdir(tmp_path / "all", "scale")
    edited = _with(cfg, landmarks=n + 5)  # more than n: all of them
    (copy_work / "config.yaml").write_text(yaml.safe_dump(edited, sort_keys=True))
    wf.run(copy_work, KERNEL, cores=2, timeout=1200)
    with np.load(copy_work / KERNEL) as z:
        Phi, J, K_nm, D_nm, tau_l = z["Phi"], z["landmarks"], z["K_nm"], z["D_nm"], z["tau"]
    assert J.tolist() == list(range(n))
    # the same log-likelihoods up to round-off: |L| ~ 1e3-1e4 over T ~ 100 frames, so D
    # (differences of L / T) carries ~1e-13 absolute error; tau is the median of the same
    # n (n - 1) off-diagonal entries
    np.testing.assert_allclose(D_nm, D, rtol=0, atol=1e-9)
    assert float(tau_l) == pytest.approx(tau, rel=1e-10)
    K = np.exp(-D / tau)
    np.testing.assert_allclose(K_nm, K, rtol=0, atol=1e-9)
    w = np.linalg.eigvalsh(0.5 * (K + K.T))
    kept = w > 1e-12 * w.max()
    dropped = w[(w > 0) & ~kept].sum()
    # round-off of K V w^{-1/2}: eps * ||K|| * sqrt(w_max / w_min kept) per entry, times n
    tol = dropped + 100 * n * np.finfo(float).eps * w.max() * np.sqrt(w.max() / w[kept].min())
    err = np.abs(Phi @ Phi.T - K_psd).max()
    assert err <= tol + 1e-9 * np.sqrt(w.max() / w[kept].min()), (err, tol)
    got = json.loads((copy_work / SUMMARY).read_text())
    assert got["landmarks"] == n and got["rank"] == int(kept.sum())
    assert got["clipped_mass"] == pytest.approx(full["clipped_mass"], rel=1e-8, abs=1e-12)


def _voc2010_layout(root):
    """VOC 2010's ImageSets/Main lists at the devkit's sizes (train 4998, val 5105 images),
    every label -1, empty image files: enough to build the DAG, no pixels."""
    devkit = root / "VOCdevkit" / "VOC2010"
    main = devkit / "ImageSets" / "Main"
    main.mkdir(parents=True)
    (devkit / "JPEGImages").mkdir()
    sets = {
        "train": [f"{2008 + k % 3}_{k:06d}" for k in range(4998)],
        "val": [f"{2008 + k % 3}_{k:06d}" for k in range(4998, 4998 + 5105)],
    }
    for name, ids in sets.items():
        (main / f"{name}.txt").write_text("\n".join(ids) + "\n")
        labels = "\n".join(f"{i} -1" for i in ids) + "\n"
        for c in VOC_CLASSES:
            (main / f"{c}_{name}.txt").write_text(labels)
        for i in ids:
            (devkit / "JPEGImages" / f"{i}.jpg").touch()
    return devkit, sets


def _config(*layers):
    cfg = yaml.safe_load((wf.ROOT / "config.yaml").read_text())
    for layer in layers:
        cfg = wf._merge(cfg, layer)
    return cfg


def test_voc2010_full_config_dry_runs_on_a_voc2010_layout(tmp_path):
    devkit, sets = _voc2010_layout(tmp_path / "data")
    full = yaml.safe_load((wf.ROOT / "workflow/configs/voc2010_full.yaml").read_text())
    e = full["voc"]["experiment"]
    assert full["voc"]["image_set"] == "train" and full["voc"]["test_image_set"] == "val"
    assert e["n_basis"] == 1000
    work = tmp_path / "work"
    work.mkdir()
    cfg = _config(full, {"voc": {"voc_root": str(devkit)}})
    (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True))
    out = wf.run(work, "--dry-run", "results/tables/voc_auc.csv", cores=1).stdout
    jobs = wf.planned_jobs(out)
    n_images = len(sets["train"]) + len(sets["val"])
    shards = math.ceil(n_images / full["voc"]["features"]["images_per_shard"])
    fits = len(e["methods"]) * math.ceil(e["trials"] / e["trials_per_job"])
    assert jobs == {
        "voc_manifest": shards,
        "voc_surf_shard": shards,
        "voc_bow_shard": shards,
        "voc_bad_images": 1,
        "voc_vocabulary": 1,
        "voc_dataset": 1,
        "voc_fit": fits,
        "voc_table": 1,
    }, out[-2000:]
    # the same layout with test_image_set overlapping image_set is one clear line
    bad = _config(full, {"voc": {"voc_root": str(devkit), "test_image_set": "train"}})
    (work / "config.yaml").write_text(yaml.safe_dump(bad, sort_keys=True))
    proc = wf.run(work, "--dry-run", "results/tables/voc_auc.csv", cores=1, check=False)
    line = next(x for x in (proc.stdout + proc.stderr).splitlines() if "invalid config" in x)
    assert proc.returncode != 0 and "key 'voc.test_image_set': train shares" in line


def test_train_to_val_split_runs_with_n_basis(tmp_path):
    """voc.test_image_set on a generated devkit: the dataset holds the train images first
    (n_train of them), trial 0 trains on them and tests on val, LSPC low-rank."""
    root = tmp_path / "VOCdevkit" / "VOC2010"
    ids = make_synthetic_voc(root, n_images=24, seed=3, size=(96, 72), max_objects=2)
    train, val = sorted(ids[::2]), sorted(ids[1::2])
    write_image_sets(root, train, image_set="train")
    write_image_sets(root, val, image_set="val")
    work = tmp_path / "work"
    work.mkdir()
    scale = yaml.safe_load((wf.CONFIGS / "scale.yaml").read_text())
    voc = wf._merge(
        scale["voc"],
        {
            "voc_root": str(root),
            "image_set": "train",
            "test_image_set": "val",
            "experiment": {"trials": 1, "trials_per_job": 1, "n_basis": 5},
        },
    )
    cfg = _config({"seed": scale["seed"], "voc": voc})
    for block in cfg.values():
        if isinstance(block, dict) and "enabled" in block:
            block["enabled"] = block is cfg["voc"]
    (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True))
    wf.run(work, "results/tables/voc_auc.csv", cores=2, timeout=1200)
    (dataset,) = (work / "results/data").glob("voc-devkit-*/dataset.npz")
    with np.load(dataset) as z:
        assert z["ids"].tolist() == train + val and int(z["n_train"]) == len(train)
    assert "VOC2010 train -> val" in (work / "results/tables/voc_auc.md").read_text()
