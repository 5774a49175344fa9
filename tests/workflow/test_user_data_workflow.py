"""Your own data through the experiment families: real data the project has, written in the
user's formats, through the config block ``datasets:`` and a family's ``datasets`` list,
run on tiny grids; the tables' rows and values are checked against direct fits, and adding
a user data set to a finished run plans only that data set's jobs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import workflow_run as wf
import yaml
from sklearn.datasets import dump_svmlight_file
from sklearn.svm import SVC

from kclf.kernels import median_sigma
from kclf_workflow.datasets import ida
from kclf_workflow.datasets.audio_collections import decode_tags
from kclf_workflow.datasets.user_data import stratified_realisation
from kclf_workflow.experiments.multiclass import trial_split

pytestmark = pytest.mark.slow

SEED = 20101122


def _config(families):
    """The default config with every family off, then ``families`` (blocks) merged in."""
    cfg = wf.tiny_config("tiny")
    cfg["lspc_toy"]["enabled"] = False
    for key, block in families.items():
        cfg[key] = wf._merge(cfg[key], block) if isinstance(cfg.get(key), dict) else block
    return cfg


def _write(work, cfg):
    (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True))


# --- IDA: a pattern set written to CSV (path:) and to libsvm (train: + test:) -----------------

IDA_BLOCK = {
    "enabled": True,
    "methods": ["maplp", "svm", "klr", "lspc_new", "lspc"],
    "realisations": 2,
    "trials_per_job": 2,
    "n_select": 1,
    "folds": 2,
    "sigma_factors": [0.5, 1.0],
    "svm_C": [1.0, 10.0],
    "lams": [0.01, 0.1],
    "test_size": 0.4,
}


@pytest.fixture(scope="module")
def ida_run(tmp_path_factory):
    """thyroid (the mirror's IDA pattern set) as thy_csv (one CSV, realisations drawn by the
    family) and thy_svm (libsvm train/test files: the IDA split file's realisation 1)."""
    from conftest import SHARED_DATA

    if not (SHARED_DATA / "ida" / "unique_xt" / "thyroid.mat").is_file():
        pytest.skip(f"IDA pattern sets not in the real-data mirror {SHARED_DATA}")
    work = tmp_path_factory.mktemp("user_ida")
    X, y = ida.load_pattern_set("thyroid", SHARED_DATA / "ida")
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame["cls"] = np.where(y == 1, "sick", "normal")
    frame.to_csv(work / "thyroid.csv", index=False)
    train, test = ida.stratified_splits(y, "thyroid", SEED, n_realisations=1)
    dump_svmlight_file(X[train[0]], y[train[0]], str(work / "thy.train.svm"), zero_based=False)
    dump_svmlight_file(X[test[0]], y[test[0]], str(work / "thy.test.svm"), zero_based=False)
    cfg = _config({"ida": dict(IDA_BLOCK, datasets=["thy_csv"])})
    cfg["datasets"] = {
        "thy_csv": {"format": "csv", "path": "thyroid.csv", "label": "cls"},
        "thy_svm": {"format": "libsvm", "train": "thy.train.svm", "test": "thy.test.svm"},
    }
    _write(work, cfg)
    wf.run(work, cores=2, timeout=600)
    finished_csv_only = wf.dry_run(work)
    plan = wf.dry_run(work, _edit_datasets(cfg, ["thy_csv", "thy_svm"]))
    wf.run(work, cores=2, timeout=600)
    return work, X, y, (train[0], test[0]), finished_csv_only, plan


def _edit_datasets(cfg, names):
    out = yaml.safe_load(yaml.safe_dump(cfg))
    out["ida"]["datasets"] = names
    return out


@pytest.mark.shared
def test_ida_adding_a_user_data_set_plans_only_its_jobs(ida_run):
    *_, finished, plan = ida_run
    assert finished == []
    methods = IDA_BLOCK["methods"]
    expected = (
        [("ida_data", "dataset=thy_svm, trials=0-0")]
        + [("ida_fit", f"dataset=thy_svm, method={m}, trials=0-0") for m in methods]
        + [("ida_select", f"dataset=thy_svm, method={m}") for m in methods]
        + [("ida_report", ""), ("provenance", "")]  # provenance records the config
    )
    assert plan == sorted(expected)


def _svm_error(X, y, train, test, selection):
    p = selection["params"]
    svc = SVC(C=p["C"], gamma=p["gamma"]).fit(X[train], y[train])
    return 100.0 * np.mean(svc.predict(X[test]) != y[test])


@pytest.mark.shared
def test_ida_table_rows_are_the_user_data_sets_with_direct_fit_errors(ida_run):
    work, X, y, (tr, te), *_ = ida_run
    table = pd.read_csv(work / "results/tables/ida_error.csv")
    assert sorted(set(table["dataset"])) == ["thy_csv", "thy_svm"]
    labels = {"MAPLP", "SVM", "KLR", "LSPC-new", "LSPC"}
    assert set(table["method"]) == labels
    assert table.groupby("dataset")["n"].max().to_dict() == {"thy_csv": 2, "thy_svm": 1}
    svm = table[table["method"] == "SVM"].set_index("dataset")["mean"]
    # thy_svm: the libsvm files are one fixed split; its SVM error = a direct SVC fit
    sel = json.loads((work / "results/records/ida/thy_svm/svm_selection.json").read_text())
    assert svm["thy_svm"] == pytest.approx(_svm_error(X, y, tr, te, sel), abs=1e-4)
    # thy_csv: realisations r = 0, 1 drawn from the seed, the name and r (row order kept)
    y01 = (y == 1).astype(int)
    sel = json.loads((work / "results/records/ida/thy_csv/svm_selection.json").read_text())
    errs = []
    for r in range(2):
        a, b = stratified_realisation(y01, "thy_csv", SEED, r, 0.4)
        assert len(b) == round(0.4 * len(y))
        errs.append(_svm_error(X, y, a, b, sel))
    assert svm["thy_csv"] == pytest.approx(np.mean(errs), abs=1e-4)
    assert (table["mean"] < 20).all(), table  # thyroid: a few % for every method


@pytest.mark.shared
def test_ida_captions_say_the_data_are_the_users_without_paper_columns(ida_run):
    work = ida_run[0]
    md = (work / "results/tables/ida_error.md").read_text()
    assert "Your own data sets (config datasets:, no published numbers): thy_csv, thy_svm" in md
    assert "your data (datasets.thy_csv: thyroid.csv)" in md
    assert "your data (datasets.thy_svm: thy.train.svm, thy.test.svm)" in md
    assert "paper" not in md.split("\n\n")[1]  # the table itself: no paper columns
    time_table = pd.read_csv(work / "results/tables/ida_time.csv")
    assert not any(c.startswith("paper") for c in time_table.columns)


# --- multilabel: MULAN scene's ARFF files through datasets: --------------------------------

ML_BLOCK = {
    "enabled": True,
    "methods": ["corrlog", "ilr"],
    "folds": 2,
    "rho1_grid": [0.001],
    "rho2_grid": [0.01],
}


@pytest.fixture(scope="module")
def ml_run(tmp_path_factory):
    """A finished run of the built-in scene, then my_scene (the same ARFF files as the
    user's, n_labels: 6) added to it."""
    from conftest import SHARED_DATA

    mulan = SHARED_DATA / "mulan"
    if not (mulan / "scene-train.arff").is_file():
        pytest.skip(f"MULAN scene not in the real-data mirror {SHARED_DATA}")
    work = tmp_path_factory.mktemp("user_multilabel")
    cfg = _config({"multilabel": dict(ML_BLOCK, datasets=["scene"])})
    cfg["mirror"] = str(SHARED_DATA)
    cfg["datasets"] = {
        "my_scene": {
            "format": "arff",
            "train": str(mulan / "scene-train.arff"),
            "test": str(mulan / "scene-test.arff"),
            "n_labels": 6,
        }
    }
    _write(work, cfg)
    wf.run(work, cores=2, timeout=600)
    cfg["multilabel"]["datasets"] = ["scene", "my_scene"]
    plan = wf.dry_run(work, cfg)
    wf.run(work, cores=2, timeout=600)
    return work, plan


@pytest.mark.shared
def test_multilabel_adding_a_user_data_set_plans_only_its_jobs(ml_run):
    _, plan = ml_run
    expected = [("multilabel_user_data", "dataset=my_scene, trials=0-0")]
    expected += [
        ("multilabel_fit", f"dataset=my_scene, method={m}, trials=0-0") for m in ML_BLOCK["methods"]
    ]
    expected += [("multilabel_table", "dataset=my_scene"), ("provenance", "")]
    assert plan == sorted(expected)


@pytest.mark.shared
def test_multilabel_user_scene_table_equals_the_builtin_scene_table(ml_run):
    """Same ARFF files, read by the user-data reader instead of the scene loader: the same
    rows and values (one grid point, so the CV folds, seeded by the name, choose nothing)."""
    work, _ = ml_run
    mine = pd.read_csv(work / "results/tables/multilabel_my_scene.csv")
    builtin = pd.read_csv(work / "results/tables/multilabel_scene.csv")
    assert set(mine["dataset"]) == {"my_scene"}
    assert len(mine) == len(builtin) > 0
    cols = [c for c in builtin.columns if c != "dataset"]
    pd.testing.assert_frame_equal(mine[cols], builtin[cols])
    hamming = mine[(mine["task"] == "Hamming loss")].set_index("method")["mean"]
    assert set(hamming.index) == {"CorrLog", "ILR"}
    assert ((hamming > 0.05) & (hamming < 0.2)).all(), hamming  # scene: about 10%
    md = (work / "results/tables/multilabel_my_scene.md").read_text()
    assert "my_scene, your data (datasets.my_scene: scene-train.arff, scene-test.arff)" in md
    assert "paper" not in md.lower()
    cal = pd.read_csv(work / "results/tables/multilabel_my_scene_calibration.csv")
    assert len(cal) == len(ML_BLOCK["methods"])


# --- multiclass: scikit-learn's digits as the user's npz (path:, the family's K-fold trials) --

MC_BLOCK = {
    "enabled": True,
    "methods": ["klr_pairwise", "svc"],
    "folds": 2,
    "trials_per_job": 2,
    "cv": 2,
    "sigma_factors": [1.0],
    "lams": [0.01],
    "svc_Cs": [10.0],
    "cost": {"dataset": "digits", "classes": [2, 3], "per_class": 10, "lam": 0.01},
}


@pytest.fixture(scope="module")
def mc_run(tmp_path_factory):
    """30 digits of each of 4 classes in an npz (X, y) as my_digits."""
    from sklearn.datasets import load_digits

    work = tmp_path_factory.mktemp("user_multiclass")
    X, y = load_digits(return_X_y=True)
    keep = np.concatenate([np.flatnonzero(y == k)[:30] for k in (0, 3, 5, 8)])
    X, y = X[keep] / 16.0, y[keep]
    np.savez(work / "digits.npz", X=X, y=y)
    cfg = _config({"multiclass": dict(MC_BLOCK, datasets=["my_digits"])})
    cfg["datasets"] = {"my_digits": {"format": "npz", "path": "digits.npz"}}
    _write(work, cfg)
    wf.run(work, cores=2, timeout=600)
    more = yaml.safe_load(yaml.safe_dump(cfg))
    more["datasets"]["my_digits_b"] = {"format": "npz", "path": "digits.npz"}
    more["multiclass"]["datasets"] = ["my_digits", "my_digits_b"]
    plan = wf.dry_run(work, more)
    return work, X, y, plan


def test_multiclass_adding_a_user_data_set_plans_only_its_jobs(mc_run):
    plan = mc_run[-1]
    expected = [("multiclass_data", "dataset=my_digits_b")]
    expected += [
        ("multiclass_fit", f"dataset=my_digits_b, method={m}, trials=0-1")
        for m in MC_BLOCK["methods"]
    ]
    expected += [("multiclass_table", "dataset=my_digits_b"), ("provenance", "")]
    assert plan == sorted(expected)


def test_multiclass_table_of_the_users_npz_matches_direct_fits(mc_run):
    work, X, y, _ = mc_run
    table = pd.read_csv(work / "results/tables/my_digits.csv")
    err = table[table["metric"] == "error"].set_index("method")
    assert set(err.index) == {"klr_pairwise", "svc"}
    assert (err["n"] == 2).all()
    codes = np.searchsorted(np.unique(y), y)
    errs = []
    for t in range(2):  # sigma: the only grid value times the training part's median distance
        tr, te = trial_split(codes, "my_digits", SEED, 2, t)
        sigma = median_sigma(X[tr])
        svc = SVC(C=10.0, gamma=1.0 / (2 * sigma**2)).fit(X[tr], codes[tr])
        errs.append(np.mean(svc.predict(X[te]) != codes[te]))
    assert err.loc["svc", "mean"] == pytest.approx(np.mean(errs), abs=1e-6)
    md = (work / "results/tables/my_digits.md").read_text()
    assert "my_digits, your data (datasets.my_digits: digits.npz), seeded stratified 2-fold" in md
    assert "paper" not in md.lower() and "ISOLET" not in md


# --- bad config: one line naming the key, before any job ------------------------------------


@pytest.fixture
def small_csv(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    frame["y"] = np.repeat(["u", "v", "w", "z"], 10)
    frame.to_csv(tmp_path / "four.csv", index=False)
    return tmp_path


@pytest.mark.parametrize(
    "datasets, listed, message",
    [
        ({}, ["mine"], "key 'ida.datasets': 'mine' is neither a built-in data set of ida nor"),
        (
            {"banana": {"format": "csv", "path": "four.csv", "label": "y"}},
            ["banana"],
            "datasets.banana: the name clashes with the built-in data set 'banana' of "
            "benchmark.datasets, ida.datasets; choose another name",
        ),
        (
            {"mine": {"format": "csv", "path": "absent.csv", "label": "y"}},
            ["mine"],
            "key 'datasets.mine.path': no file absent.csv",
        ),
        (
            {"mine": {"format": "csv", "path": "four.csv"}},
            ["mine"],
            "invalid config: key 'datasets.mine'",
        ),
    ],
)
def test_bad_user_data_config_is_one_line_before_any_job(small_csv, datasets, listed, message):
    cfg = _config({"ida": dict(IDA_BLOCK, datasets=listed)})
    cfg["datasets"] = datasets
    _write(small_csv, cfg)
    proc = wf.run(small_csv, "--dry-run", cores=1, check=False)
    assert proc.returncode != 0
    assert message in proc.stdout + proc.stderr


def test_a_multiclass_set_in_ida_fails_its_data_job_naming_the_file(small_csv):
    cfg = _config({"ida": dict(IDA_BLOCK, datasets=["four"])})
    cfg["datasets"] = {"four": {"format": "csv", "path": "four.csv", "label": "y"}}
    _write(small_csv, cfg)
    proc = wf.run(small_csv, "results/data/ida/four/0-1.npz", cores=1, check=False)
    assert proc.returncode != 0
    log = (small_csv / "results/logs/ida_data/four_0-1.log").read_text()
    assert "datasets.four (four.csv): a multiclass data set, but ida.datasets takes binary" in log
    assert not (small_csv / "results/data/ida/four/0-1.npz").exists()


def test_a_semicolon_csv_with_decimal_commas_through_the_data_job(tmp_path):
    """Detected in the job; sep / decimal enter the job's params only once set."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    frame["y"] = np.repeat(["u", "v"], 15)
    frame.to_csv(tmp_path / "comma.csv", index=False)
    frame.to_csv(tmp_path / "semi.csv", index=False, sep=";", decimal=",")
    cfg = _config({"ida": dict(IDA_BLOCK, datasets=["comma", "semi"])})
    cfg["datasets"] = {
        name: {"format": "csv", "path": f"{name}.csv", "label": "y"} for name in ("comma", "semi")
    }
    _write(tmp_path, cfg)
    targets = [f"results/data/ida/{name}/0-1.npz" for name in ("comma", "semi")]
    wf.run(tmp_path, *targets, cores=2)
    with np.load(tmp_path / targets[0]) as a, np.load(tmp_path / targets[1]) as b:
        np.testing.assert_array_equal(b["X"], a["X"])
        np.testing.assert_array_equal(b["y"], a["y"])
    assert wf.dry_run(tmp_path, None, *targets) == []
    cfg["datasets"]["semi"]["sep"] = ","  # forced, and wrong
    assert wf.dry_run(tmp_path, cfg, *targets) == [("ida_data", "dataset=semi, trials=0-1")]
    proc = wf.run(tmp_path, targets[1], cores=1, check=False)
    assert proc.returncode != 0
    log = (tmp_path / "results/logs/ida_data/semi_0-1.log").read_text()
    assert (
        "semi.csv: the header 'a;b;c;y' reads as one column with sep ',' but holds ';'; set "
        'sep: ";" under datasets.semi, and decimal: "," if its numbers are written 1,5'
    ) in log


# --- mgpc: a binary set's class as a one-vs-rest task ----------------------------------------

MGPC_BLOCK = {
    "enabled": True,
    "trials": 2,
    "trials_per_job": 2,
    "methods": ["ridge_newton", "mla"],
    "lams": [0.01, 0.1],
    "folds": 2,
    "sigma_factors": [1.0],
    "length_scale_factors": [1.0],
    "amplitudes": [4.0],
}


@pytest.fixture(scope="module")
def mgpc_run(ida_run, tmp_path_factory):
    """The libsvm thyroid split of the IDA test as thy_svm, task "1" (the class +1); then
    the CSV thyroid added as thy_csv, task "sick"."""
    src, X, y, (tr, te), *_ = ida_run
    work = tmp_path_factory.mktemp("user_mgpc")
    for name in ("thy.train.svm", "thy.test.svm", "thyroid.csv"):
        (work / name).write_bytes((src / name).read_bytes())
    cfg = _config({"mgpc": MGPC_BLOCK})
    cfg["mgpc"]["datasets"] = {"thy_svm": {"tasks": ["1"]}}
    cfg["datasets"] = {
        "thy_svm": {"format": "libsvm", "train": "thy.train.svm", "test": "thy.test.svm"},
        "thy_csv": {"format": "csv", "path": "thyroid.csv", "label": "cls"},
    }
    _write(work, cfg)
    wf.run(work, cores=2, timeout=600)
    more = yaml.safe_load(yaml.safe_dump(cfg))
    more["mgpc"]["datasets"]["thy_csv"] = {"tasks": ["sick"]}
    plan = wf.dry_run(work, more)
    return work, X, y, (tr, te), plan


@pytest.mark.shared
def test_mgpc_pools_the_users_files_and_tabulates_its_task(mgpc_run):
    work, X, y, (tr, te), plan = mgpc_run
    with np.load(work / "results/data/thy_svm/mgpc_1.npz") as f:
        np.testing.assert_allclose(f["X"], np.vstack([X[tr], X[te]]))
        np.testing.assert_array_equal(f["y"], np.concatenate([y[tr], y[te]]) == 1)
    table = pd.read_csv(work / "results/tables/mgpc_errors.csv")
    ce = table[table["metric"] == "ce"].set_index("method")
    assert set(table["row"]) == {"thy_svm-features 1"}
    assert (ce["n"] == 2).all() and len(ce) == 2
    assert (ce["mean"] < 0.15).all(), ce  # thyroid: a few % for kernel methods
    md = (work / "results/tables/mgpc_errors.md").read_text()
    assert "on your data" in md and "thy_svm, your data (datasets.thy_svm:" in md
    assert "paper" not in md.lower()
    expected = [("mgpc_prepare", "mgpc_dataset=thy_csv, mgpc_task=sick")]
    expected += [("mgpc_represent", "mgpc_dataset=thy_csv, mgpc_task=sick, mgpc_repr=features")]
    expected += [
        (
            "mgpc_fit",
            f"mgpc_dataset=thy_csv, mgpc_task=sick, mgpc_repr=features, mgpc_method={m}, "
            "trials=0-1",
        )
        for m in MGPC_BLOCK["methods"]
    ]
    expected += [("mgpc_report", ""), ("provenance", "")]
    assert plan == sorted(expected)


# --- voc.image_folder: generated images, one subfolder per class ----------------------------

#: class folder names as people write them: spaces, dashes, commas, dots, non-ASCII
#: letters, leading digits and LaTeX's special characters; each must stay one class
VOC_FOLDERS = ["001 - kittens, small", "Lörries", "yachts.v2 & co_50%"]


@pytest.fixture(scope="module")
def voc_run(tmp_path_factory):
    """Three class folders (names unlike VOC's) of 12 generated scenes each, every scene
    holding objects of one VOC class's texture and shape; then one more image added."""
    from PIL import Image

    from kclf_workflow.datasets.synthetic_voc import render_image

    work = tmp_path_factory.mktemp("user_voc")
    folders = dict(zip(VOC_FOLDERS, ["cat", "bus", "boat"]))
    for folder, cls in folders.items():
        (work / "imgs" / folder).mkdir(parents=True)
        for i in range(12):
            rgb, _ = render_image(SEED, f"{folder}{i}", classes=[cls], size=(128, 96))
            Image.fromarray(rgb).save(work / "imgs" / folder / f"img{i:02d}.jpg", quality=95)
    cfg = _config(
        {
            "voc": {
                "enabled": True,
                "image_folder": "imgs",
                "features": {"n_shards": 3},  # fixed: one more image changes one shard
                "vocabulary": {"n_words": 16, "sample_size": 3000},
                "experiment": {
                    "n_train": 24,
                    "trials": 2,
                    "trials_per_job": 2,
                    "methods": ["LSPC-new", "KLR"],
                    "sigma_factors": [1.0],
                    "lams": [0.1],
                    "svc_Cs": [1.0],
                },
            }
        }
    )
    _write(work, cfg)
    wf.run(work, cores=2, timeout=600)
    return work


def test_image_folder_classes_are_the_rows_of_the_auc_table(voc_run):
    work = voc_run
    (dataset,) = (work / "results/data").glob("voc-folder-*/dataset.npz")
    with np.load(dataset) as f:
        assert list(f["classes"]) == VOC_FOLDERS
        assert f["X"].shape == (36, 16)
        ids, Y = list(f["ids"]), f["Y"]
    assert (Y.sum(axis=1) == 1).all() and list(Y.sum(axis=0)) == [12, 12, 12]
    assert all(Y[k, VOC_FOLDERS.index(i.split("/")[0])] for k, i in enumerate(ids))
    table = pd.read_csv(work / "results/tables/voc_auc.csv", keep_default_na=False)
    assert set(table["task"]) == {*VOC_FOLDERS, "Average"}  # one task per folder, whole
    rows = table[table["task"].isin(VOC_FOLDERS)]
    assert set(rows["method"]) == {"LSPC-new", "KLR"}
    assert ((rows["mean"] > 0.5) & (rows["mean"] <= 1.0)).all(), rows  # textures differ
    md = (work / "results/tables/voc_auc.md").read_text(encoding="utf-8")
    assert "Your images (imgs: one subfolder per class, each class one-vs-rest)" in md
    assert "paper" not in md.lower()
    assert f"covers 3 of the 3 classes ({'; '.join(VOC_FOLDERS)})" in md
    body = [line for line in md.splitlines() if line.startswith("|")][2:]
    assert [line.split("|")[1].strip() for line in body] == [*VOC_FOLDERS, "Average"]
    tex = (work / "results/tables/voc_auc.tex").read_text(encoding="utf-8")
    assert r"yachts.v2 \& co\_50\%" in tex and "co_50%" not in tex


# --- audio.source: folder: the mirror's UrbanSound8K clips, one subfolder per tag -------------


#: the sample's classes as tag folders named as people name them (one tag each, whole)
TAG_FOLDERS = {
    "air_conditioner": "001 - Air conditioner",
    "car_horn": "Car horn, short",
    "children_playing": "Kinder spielen (Straße)",
    "dog_bark": "dog_bark",
    "street_music": "street.music v2",
}


@pytest.fixture(scope="module")
def audio_run(tmp_path_factory):
    """The sample clips linked into <tag>/<file> folders by the class their metadata
    names (tag folders carry no metadata of their own)."""
    from conftest import SHARED_DATA

    root = SHARED_DATA / "urbansound8k_sample" / "UrbanSound8K"
    if not (root / "metadata" / "UrbanSound8K.csv").is_file():
        pytest.skip(f"UrbanSound8K sample clips not in the real-data mirror {SHARED_DATA}")
    meta = pd.read_csv(root / "metadata" / "UrbanSound8K.csv").set_index("slice_file_name")
    work = tmp_path_factory.mktemp("user_audio")
    tags = {}
    for wav in sorted((root / "audio").glob("*/*.wav")):
        tag = TAG_FOLDERS[meta.loc[wav.name, "class"]]
        (work / "clips" / tag).mkdir(parents=True, exist_ok=True)
        (work / "clips" / tag / wav.name).symlink_to(wav)
        tags[f"{tag}/{wav.name}"] = tag
    cfg = _config(
        {
            "audio": {
                "enabled": True,
                "source": "folder",
                "root": "clips",
                "selection": {"min_seconds": 0.5},  # the sample's short car horns too
                "features": {"sample_rate": 8000, "n_shards": 2},
                "hmm": {"n_states": 2, "n_iter": 3},
                "kernel": {"n_shards": 2},
                "experiment": {
                    "n_train": 10,
                    "n_test": 5,
                    "min_positives": 1,  # 3 clips per tag
                    "trials": 2,
                    "trials_per_job": 2,
                    "methods": ["LSPC-new", "KLR"],
                    "lams": [0.1],
                },
            }
        }
    )
    _write(work, cfg)
    wf.run(work, cores=2, timeout=600)
    return work, tags


@pytest.mark.shared
def test_tag_folders_are_the_tags_of_the_audio_table(audio_run):
    work, tags = audio_run
    import soundfile as sf

    (clip_list,) = (work / "results/data").glob("audio-folder-*/clips.csv")
    clips = pd.read_csv(clip_list)
    long = {c: t for c, t in tags.items() if sf.info(work / "clips" / c).duration >= 0.5}
    assert {c: decode_tags(t) for c, t in zip(clips["id"], clips["tags"])} == {
        c: (t,) for c, t in long.items()
    }  # each clip its folder's tag, whole
    assert len(long) == 14 and set(tags.values()) == set(TAG_FOLDERS.values())
    table = pd.read_csv(work / "results/tables/audio_auc.csv", keep_default_na=False)
    assert set(table["task"]) - {"Average", "AUC, all tags x trials"} <= set(TAG_FOLDERS.values())
    per_tag = table[table["task"].isin(set(tags.values()))]
    assert set(per_tag["method"]) == {"LSPC-new", "KLR"}
    assert set(per_tag["task"]) <= set(tags.values()) and len(set(per_tag["task"])) >= 3
    assert ((per_tag["mean"] >= 0) & (per_tag["mean"] <= 1)).all()
    md = (work / "results/tables/audio_auc.md").read_text()
    assert md.startswith("Your clips (clips: one subfolder per tag, each tag one-vs-rest)")
    header = md.split("\n\n")[1].splitlines()[0]
    assert "paper" not in header and "paper_mean" not in table.columns  # no paper columns


def test_image_folder_one_more_image_recomputes_one_shard(voc_run):
    from PIL import Image

    from kclf_workflow.datasets.synthetic_voc import render_image

    work = voc_run
    rgb, _ = render_image(SEED, "extra", classes=["cat"], size=(128, 96))
    extra = work / "imgs" / VOC_FOLDERS[0] / "img99.jpg"
    Image.fromarray(rgb).save(extra, quality=95)
    try:
        plan = wf.dry_run(work)
    finally:
        extra.unlink()
    rules = [r for r, _ in plan]
    assert rules.count("voc_manifest") == 1 and rules.count("voc_surf_shard") == 1, plan
    assert rules.count("voc_vocabulary") == 1 and "voc_table" in rules


@pytest.mark.parametrize("family", ["voc", "audio"])
def test_an_empty_class_folder_stops_the_dry_run_naming_it(tmp_path, family):
    for name in ("a", "b"):
        (tmp_path / "data" / name).mkdir(parents=True)
    (tmp_path / "data" / "a" / "x.wav").write_bytes(b"")
    (tmp_path / "data" / "a" / "x.jpg").write_bytes(b"")
    block = (
        {"enabled": True, "image_folder": "data"}
        if family == "voc"
        else {"enabled": True, "source": "folder", "root": "data"}
    )
    _write(tmp_path, _config({family: block}))
    proc = wf.run(tmp_path, "--dry-run", cores=1, check=False)
    assert proc.returncode != 0
    assert "class folder 'b' has no" in proc.stdout + proc.stderr
