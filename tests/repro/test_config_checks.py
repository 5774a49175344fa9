"""The config's rules between keys (kclf_workflow.config_checks), each without a dry run: a
good config passes, a bad one raises one line naming the key."""

from __future__ import annotations

import pytest

from kclf_workflow import config_checks as checks
from kclf_workflow.config_checks import ConfigError

VOC = {"source": "synthetic", "voc_root": None, "image_folder": None, "classes": None}


@pytest.mark.parametrize(
    "over,source",
    [
        ({}, "synthetic"),
        ({"source": "download", "test_image_set": "val"}, "download"),
        ({"voc_root": "/data/VOCdevkit", "test_image_set": "val"}, "devkit"),
        ({"image_folder": "photos"}, "folder"),
    ],
)
def test_voc_source_of_a_good_config(over, source):
    assert checks.voc_source({**VOC, "test_image_set": None, **over}) == source


@pytest.mark.parametrize(
    "over,message",
    [
        (
            {"image_folder": "p", "voc_root": "/d"},
            "key 'voc.voc_root': give it or voc.image_folder",
        ),
        ({"image_folder": "p", "classes": ["cat"]}, "key 'voc.classes': give it or voc.image"),
        ({"test_image_set": "val"}, "key 'voc.test_image_set' needs a VOCdevkit"),
        ({"image_folder": "p", "test_image_set": "val"}, "not source folder"),
    ],
)
def test_voc_source_conflicts_name_the_key(over, message):
    with pytest.raises(ConfigError, match=message):
        checks.voc_source({**VOC, "test_image_set": None, **over})


def test_test_image_set_must_not_share_images():
    checks.voc_test_sets_disjoint("train", [("train", ["a", "b"]), ("val", ["c"])])
    with pytest.raises(ConfigError, match=r"'voc.test_image_set': val shares 1 image\(s\) "):
        checks.voc_test_sets_disjoint("train", [("train", ["a", "b"]), ("val", ["b", "c"])])


def test_n_train_must_leave_a_test_item():
    checks.leaves_test_items("voc.experiment.n_train", 9, 10, "test image")
    with pytest.raises(ConfigError, match=r"^invalid config: key 'a.n_train': 10 leaves no x$"):
        checks.leaves_test_items("a.n_train", 10, 10, "x")


@pytest.mark.parametrize("source", ["freesound", "urbansound8k", "folder"])
def test_a_collection_on_disk_needs_its_root(source):
    checks.audio_root_required({"source": source, "root": "clips"})
    checks.audio_root_required({"source": "esc50", "root": None})  # downloaded
    with pytest.raises(ConfigError, match=f"'audio.root' is required for source {source}"):
        checks.audio_root_required({"source": source, "root": None})


def test_n_select_needs_as_many_realisations():
    checks.n_select_fits(3, {"banana": 100, "mine": 3})
    with pytest.raises(ConfigError, match="'ida.n_select': 4 exceeds the 3 realisations of mine"):
        checks.n_select_fits(4, {"banana": 100, "mine": 3})


def test_user_datasets_are_names_under_datasets_with_their_files(tmp_path):
    builtin = {"banana": ["ida.datasets"], "scene": ["multilabel.datasets"]}
    (tmp_path / "a.csv").write_text("x,label\n1,0\n")
    user = {"mine": {"path": str(tmp_path / "a.csv")}, "gone": {"path": str(tmp_path / "b")}}
    assert checks.user_datasets("ida", ["banana", "mine"], user, builtin) == ["mine"]
    with pytest.raises(ConfigError, match="'ida.datasets': 'scene' is neither a built-in"):
        checks.user_datasets("ida", ["scene"], user, builtin)
    with pytest.raises(ConfigError, match=r"'datasets.gone.path': no file .*b$"):
        checks.user_datasets("ida", ["gone"], user, builtin)


def test_folds_must_fit_every_sets_smallest_class():
    from kclf_workflow.config_checks import folds_fit_classes

    folds_fit_classes("benchmark.folds", 50, {"iris": 50, "wine": 48} | {"wine": 50})
    with pytest.raises(ConfigError) as err:
        folds_fit_classes("benchmark.folds", 49, {"iris": 50, "wine": 48})
    msg = str(err.value)
    assert msg.startswith("invalid config: key 'benchmark.folds': 49 folds exceed the 48 rows")
    assert "smallest class of wine" in msg and len(msg.splitlines()) == 1


def test_the_benchmark_plan_checks_the_folds_against_keel_and_user_sets(tmp_path):
    from kclf_workflow.datasets import keel
    from kclf_workflow.plans.benchmark import BenchmarkPlan

    csv = tmp_path / "two.csv"
    csv.write_text("a,y\n1,0\n2,0\n3,1\n4,1\n5,1\n")
    user = {"two": {"format": "csv", "path": str(csv), "label": "y"}}
    cfg = {"datasets": ["iris", "two"], "folds": 2}
    plan = BenchmarkPlan(cfg, user=user)
    assert plan.smallest_class("iris") == keel.SMALLEST_CLASS["iris"] == 50
    assert plan.smallest_class("two") == 2
    plan.check_folds()
    with pytest.raises(ConfigError, match="3 folds exceed the 2 rows of the smallest class of two"):
        BenchmarkPlan({**cfg, "folds": 3}, user=user).check_folds()
    with pytest.raises(ConfigError, match="1000 folds exceed the 50 rows .* of iris"):
        BenchmarkPlan({**cfg, "folds": 1000}, user=user).check_folds()
    # a train: + test: split is one fold of its own: nothing to check
    split = {"two": {"format": "csv", "path": None, "train": str(csv), "test": str(csv)}}
    assert BenchmarkPlan(cfg, user=split).smallest_class("two") is None
