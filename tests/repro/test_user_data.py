"""User data sets (config block ``datasets:``): each format read back equal to the arrays
it was written from (real MULAN scene and an IDA pattern set where the mirror is present,
generated data otherwise), seeded realisations, class folders, the schema, and one test
per bad input asserting the message names the file and the column or row."""

import re
import wave
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.datasets import dump_svmlight_file
from snakemake.utils import validate

from kclf_workflow.datasets import ida
from kclf_workflow.datasets.mulan import load_arff_multilabel, load_scene
from kclf_workflow.datasets.user_data import (
    AUDIO_EXTENSIONS,
    IMAGE_EXTENSIONS,
    UserDataWarning,
    builtin_dataset_names,
    check_dataset_name,
    list_class_folders,
    load_user_dataset,
    standardize_split,
    stratified_realisation,
    table_dialect,
)
from kclf_workflow.experiments import multiclass

ROOT = Path(__file__).resolve().parents[2]

SCHEMAS = ROOT / "workflow" / "schemas"
SCHEMA = SCHEMAS / "datasets.schema.yaml"


@pytest.fixture
def scene_dir(shared_data):
    d = shared_data / "mulan"
    if not (d / "scene-train.arff").is_file():
        pytest.skip(f"MULAN scene not in the mirror ({d}/scene-*.arff)")
    return d


@pytest.fixture
def thyroid(shared_data):
    """IDA's thyroid pattern set (215 x 5, labels +-1) from the mirror."""
    if not (shared_data / "ida" / "unique_xt" / "thyroid.mat").is_file():
        pytest.skip("IDA pattern set ida/unique_xt/thyroid.mat not in the mirror")
    return ida.load_pattern_set("thyroid", shared_data / "ida")


def _frame(X, y):
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    frame.insert(2, "class", y)  # the label column need not be last
    return frame


# --- each format, read back equal -----------------------------------------------------------


@pytest.mark.shared
def test_scene_arff_with_n_labels_equals_the_mulan_loader(scene_dir):
    entry = {
        "format": "arff",
        "train": str(scene_dir / "scene-train.arff"),
        "test": str(scene_dir / "scene-test.arff"),
        "n_labels": 6,
    }
    d = load_user_dataset("my_scene", entry)
    s = load_scene(scene_dir)
    assert d.task == "multilabel" and d.fixed_split
    np.testing.assert_array_equal(d.X, s["X_train"])
    np.testing.assert_array_equal(d.y, s["Y_train"])
    np.testing.assert_array_equal(d.X_test, s["X_test"])
    np.testing.assert_array_equal(d.y_test, s["Y_test"])
    assert d.classes == tuple(f"Class{k}" for k in range(1, 7))
    assert list(d.feature_names) == s["feature_names"] and d.standardize is None


@pytest.mark.shared
def test_scene_arff_labels_by_name_in_any_order(scene_dir):
    order = [5, 0, 2, 1, 4, 3]
    names = [f"Class{k + 1}" for k in order]
    entry = {"format": "arff", "path": str(scene_dir / "scene-test.arff"), "labels": names}
    d = load_user_dataset("my_scene", entry)
    s = load_scene(scene_dir)
    assert d.classes == tuple(names) and not d.fixed_split
    np.testing.assert_array_equal(d.y, s["Y_test"][:, order])
    np.testing.assert_array_equal(d.X, s["X_test"])
    # a label attribute left out of labels: would be a nominal feature: refused
    entry["labels"] = names[:3]
    with pytest.raises(
        ValueError, match="scene-test.arff: feature attribute 'Class2' is not numeric"
    ):
        load_user_dataset("my_scene", entry)


MEKA_DENSE = """@relation 'meka: -C 2'
@attribute A {0,1}
@attribute B {0,1}
@attribute x numeric
@attribute y numeric
@data
1,0,0.5,-2
0,1,1.5,3
1,1,-7,0.25
"""

MEKA_SPARSE = """@relation 'meka: -C 2'
@attribute A {0,1}
@attribute B {0,1}
@attribute x numeric
@attribute y numeric
@data
{0 1,2 0.5,3 -2}
{1 1,2 1.5,3 3}
{0 1,1 1,2 -7,3 0.25}
"""


@pytest.mark.parametrize("text", [MEKA_DENSE, MEKA_SPARSE], ids=["dense", "sparse"])
def test_arff_labels_first_meka_style(tmp_path, text):
    p = tmp_path / "meka.arff"
    p.write_text(text)
    d = load_user_dataset("meka", {"format": "arff", "path": str(p), "labels": ["A", "B"]})
    np.testing.assert_array_equal(d.X, [[0.5, -2], [1.5, 3], [-7, 0.25]])
    np.testing.assert_array_equal(d.y, [[1, 0], [0, 1], [1, 1]])
    assert d.feature_names == ("x", "y") and d.classes == ("A", "B")


@pytest.mark.shared
@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_ida_pattern_set_as_table_with_label_column(tmp_path, thyroid, fmt):
    X, y = thyroid
    p = tmp_path / f"thyroid.{fmt}"
    _frame(X, y).to_csv(p, sep="," if fmt == "csv" else "\t", index=False)
    d = load_user_dataset("my_thyroid", {"format": fmt, "path": str(p), "label": "class"})
    assert d.task == "binary" and d.classes == ("-1", "1")
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.y, (y == 1).astype(int))
    assert d.feature_names == tuple(f"f{j}" for j in range(5))


@pytest.mark.shared
def test_ida_pattern_set_as_csv_with_features_list_and_a_fixed_split(tmp_path, thyroid):
    X, y = thyroid
    frame = _frame(X, np.where(y == 1, "hyper", "normal"))
    frame.insert(0, "patient", [f"p{i:03d}" for i in range(len(y))])  # not a feature
    train, test = ida.stratified_splits(y, "thyroid", seed=5, n_realisations=[0])
    frame.iloc[train[0]].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[test[0]].to_csv(tmp_path / "test.csv", index=False)
    entry = {
        "format": "csv",
        "train": "train.csv",
        "test": "test.csv",
        "label": "class",
        "features": ["f4", "f0", "f1"],
        "standardize": True,
    }
    d = load_user_dataset("my_thyroid", entry, base_dir=tmp_path)
    assert d.classes == ("hyper", "normal") and d.standardize is True
    np.testing.assert_array_equal(d.X, X[train[0]][:, [4, 0, 1]])
    np.testing.assert_array_equal(d.X_test, X[test[0]][:, [4, 0, 1]])
    np.testing.assert_array_equal(d.y, (y[train[0]] == -1).astype(int))
    np.testing.assert_array_equal(d.y_test, (y[test[0]] == -1).astype(int))
    assert d.files == (str(tmp_path / "train.csv"), str(tmp_path / "test.csv"))


@pytest.mark.shared
def test_ida_pattern_set_as_libsvm(tmp_path, thyroid):
    X, y = thyroid
    dump_svmlight_file(X, y, str(tmp_path / "thyroid.svm"))
    d = load_user_dataset("t", {"format": "libsvm", "path": str(tmp_path / "thyroid.svm")})
    assert d.task == "binary" and d.classes == ("-1", "1")
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.y, (y == 1).astype(int))


@pytest.mark.shared
def test_scene_as_multilabel_libsvm_train_and_test(tmp_path, scene_dir):
    s = load_scene(scene_dir)
    for part in ("train", "test"):
        dump_svmlight_file(
            s[f"X_{part}"], s[f"Y_{part}"], str(tmp_path / f"{part}.svm"), multilabel=True
        )
    entry = {"format": "libsvm", "train": "train.svm", "test": "test.svm"}
    d = load_user_dataset("s", entry, base_dir=tmp_path)
    assert d.task == "multilabel" and d.classes == tuple("012345")
    np.testing.assert_array_equal(d.X, s["X_train"])
    np.testing.assert_array_equal(d.y, s["Y_train"])
    np.testing.assert_array_equal(d.X_test, s["X_test"])
    np.testing.assert_array_equal(d.y_test, s["Y_test"])


def test_libsvm_multilabel_rows_without_labels(tmp_path):
    p = tmp_path / "ml.svm"
    p.write_text("1,3 1:0.5 2:1\n 2:-1\n3 1:2\n1 1:1.5 2:0.25\n")
    d = load_user_dataset("ml", {"format": "libsvm", "path": str(p)})
    assert d.task == "multilabel" and d.classes == ("1", "3")
    np.testing.assert_array_equal(d.y, [[1, 1], [0, 0], [0, 1], [1, 0]])
    np.testing.assert_array_equal(d.X, [[0.5, 1], [0, -1], [2, 0], [1.5, 0.25]])


@pytest.mark.shared
def test_ida_pattern_set_and_scene_as_npz(tmp_path, thyroid, scene_dir):
    X, y = thyroid
    np.savez(tmp_path / "t.npz", X=X, y=y)
    d = load_user_dataset("t", {"format": "npz", "path": str(tmp_path / "t.npz")})
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.y, (y == 1).astype(int))
    s = load_scene(scene_dir)
    names = np.array(s["label_names"])
    np.savez(tmp_path / "s.npz", X=s["X_test"], Y=s["Y_test"], label_names=names)
    d = load_user_dataset("s", {"format": "npz", "path": str(tmp_path / "s.npz")})
    assert d.task == "multilabel" and d.classes == tuple(s["label_names"])
    np.testing.assert_array_equal(d.X, s["X_test"])
    np.testing.assert_array_equal(d.y, s["Y_test"])


def test_multiclass_and_multilabel_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["kind"] = np.array(["cat", "dog", "eel"])[np.arange(30) % 3]
    frame["L1"], frame["L2"] = np.arange(30) % 2, (np.arange(30) // 2) % 2
    frame.to_csv(tmp_path / "d.csv", index=False)
    entry = {"format": "csv", "path": "d.csv", "label": "kind", "features": ["a", "b", "c"]}
    d = load_user_dataset("d", entry, base_dir=tmp_path)
    assert d.task == "multiclass" and d.classes == ("cat", "dog", "eel")
    np.testing.assert_array_equal(d.y, np.arange(30) % 3)
    entry = {"format": "csv", "path": "d.csv", "labels": ["L2", "L1"], "features": ["c"]}
    d = load_user_dataset("d", entry, base_dir=tmp_path)
    assert d.task == "multilabel" and d.classes == ("L2", "L1")
    np.testing.assert_array_equal(d.y, frame[["L2", "L1"]].to_numpy())
    np.testing.assert_array_equal(d.X, X[:, [2]])


# --- delimited text as spreadsheets export it ----------------------------------------------


def _exports(tmp_path, frame):
    """``frame`` written as a comma-separated file and as the semicolon / tab files with
    decimal commas that European spreadsheet exports give."""
    frame.to_csv(tmp_path / "comma.csv", index=False)
    frame.to_csv(tmp_path / "semicolon.csv", index=False, sep=";", decimal=",")
    frame.to_csv(tmp_path / "tab.csv", index=False, sep="\t", decimal=",")
    frame.to_csv(tmp_path / "tab.tsv", index=False, sep="\t", decimal=",")
    frame.to_csv(tmp_path / "tab_point.tsv", index=False, sep="\t")
    return tmp_path


@pytest.fixture
def exports(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(scale=[1, 1e3, 1e-4], size=(40, 3)), columns=["a", "b", "c"])
    frame.insert(1, "kind", np.array(["cat", "dog"])[np.arange(40) % 2])
    frame["L1"], frame["L2"] = np.arange(40) % 2, (np.arange(40) // 2) % 2
    return _exports(tmp_path, frame), frame


@pytest.mark.parametrize(
    "name, fmt, dialect",
    [
        ("semicolon.csv", "csv", (";", ",")),
        ("tab.csv", "csv", ("\t", ",")),
        ("tab.tsv", "tsv", ("\t", ",")),
        ("tab_point.tsv", "tsv", ("\t", ".")),
    ],
)
def test_separator_and_decimal_comma_are_detected_to_the_comma_files_arrays(
    exports, name, fmt, dialect
):
    folder, frame = exports
    assert (
        table_dialect(folder / name, None if fmt == "csv" else "\t", skip=["kind"])[:2] == dialect
    )
    for labels in ({"label": "kind"}, {"labels": ["L2", "L1"], "features": ["c", "a"]}):
        want = load_user_dataset("d", {"format": "csv", "path": "comma.csv", **labels}, folder)
        got = load_user_dataset("d", {"format": fmt, "path": name, **labels}, folder)
        np.testing.assert_array_equal(got.X, want.X)
        np.testing.assert_array_equal(got.y, want.y)
        assert got.classes == want.classes and got.feature_names == want.feature_names
    np.testing.assert_array_equal(want.X, frame[["c", "a"]].to_numpy())


def test_quoted_decimal_commas_in_a_comma_separated_file(tmp_path):
    p = _csv(tmp_path, 'x,"y z",label\n' + '"1,5","-2,25e1",u\n"0,5","3",v\n' * 2)
    assert table_dialect(p)[:2] == (",", ",")
    d = load_user_dataset("d", {"format": "csv", "path": str(p), "label": "label"})
    np.testing.assert_array_equal(d.X, [[1.5, -22.5], [0.5, 3.0]] * 2)
    assert d.feature_names == ("x", "y z")


def test_explicit_sep_and_decimal_override_detection(tmp_path):
    rows = [f"{k};{k % 7};{'uv'[k % 2]}" for k in range(250)] + ["2,5;0,75;u", "1,25;3;v"]
    p = _csv(tmp_path, "a;b;y\n" + "\n".join(rows) + "\n")
    assert table_dialect(p)[:2] == (";", ".")  # the decimal commas come after the sample
    with pytest.raises(ValueError) as e:
        load_user_dataset("d", {"format": "csv", "path": str(p), "label": "y"})
    assert _one_line(e) == (
        f"{p}: feature column 'a' is not numeric: '2,5' at line 252 (a decimal comma: set "
        f'decimal: "," under datasets.d)'
    )
    d = load_user_dataset("d", {"format": "csv", "path": str(p), "label": "y", "decimal": ","})
    np.testing.assert_array_equal(d.X[-2:], [[2.5, 0.75], [1.25, 3.0]])
    assert d.X.shape == (252, 2) and d.X[:250, 0].tolist() == list(range(250))
    pipe = _csv(tmp_path, "a|b|y\n1.5|2|u\n3|4.25|v\n0|0|u\n0|0|v\n", name="pipe.csv")
    d = load_user_dataset("d", {"format": "csv", "path": str(pipe), "label": "y", "sep": "|"})
    np.testing.assert_array_equal(d.X, [[1.5, 2], [3, 4.25], [0, 0], [0, 0]])
    mixed = _csv(tmp_path, "a\ty\n1.5\tu\n2,5\tv\n-1\tu\n,5\tv\n", name="mixed.tsv")
    d = load_user_dataset("d", {"format": "tsv", "path": str(mixed), "label": "y", "decimal": ","})
    np.testing.assert_array_equal(d.X[:, 0], [1.5, 2.5, -1, 0.5])


def test_a_header_read_as_one_column_names_the_file_the_separator_and_the_keys(tmp_path):
    p = _csv(tmp_path, "a;b;label\n1,5;2;u\n2,5;3;v\n0;1;u\n0;1;v\n")
    with pytest.raises(ValueError) as e:
        load_user_dataset("mine", {"format": "csv", "path": str(p), "label": "label", "sep": ","})
    assert _one_line(e) == (
        f"{p}: the header 'a;b;label' reads as one column with sep ',' but holds ';'; set "
        f'sep: ";" under datasets.mine, and decimal: "," if its numbers are written 1,5'
    )
    d = load_user_dataset("mine", {"format": "csv", "path": str(p), "label": "label"})
    np.testing.assert_array_equal(d.X, [[1.5, 2], [2.5, 3], [0, 1], [0, 1]])  # detected
    with pytest.raises(ValueError) as e:
        load_user_dataset("mine", {"format": "tsv", "path": str(p), "label": "label"})
    assert _one_line(e).startswith(
        f"{p}: the header 'a;b;label' reads as one column with sep tab (\"\\t\") but holds "
        f"';'; set format: csv under datasets.mine (it detects the separator or takes sep: \";\")"
    )
    p = _csv(tmp_path, "a b label\n1 2 u\n", name="spaces.csv")
    with pytest.raises(ValueError) as e:
        load_user_dataset("mine", {"format": "csv", "path": str(p), "label": "label"})
    assert _one_line(e).startswith(
        f"{p}: the header 'a b label' reads as one column: no comma, semicolon or tab in it; "
        f"set sep: (its separator) under datasets.mine"
    )


# --- realisations and scaling ----------------------------------------------------------


def test_realisation_depends_on_seed_and_trial_only():
    y = np.repeat([0, 1, 2], [50, 30, 20])
    tr3, te3 = stratified_realisation(y, "mine", seed=7, trial=3, test_size=0.3)
    for other in (0, 1, 2, 4):  # drawing other trials first changes nothing
        stratified_realisation(y, "mine", seed=7, trial=other, test_size=0.3)
    again = stratified_realisation(y, "mine", seed=7, trial=3, test_size=0.3)
    np.testing.assert_array_equal(tr3, again[0])
    np.testing.assert_array_equal(te3, again[1])
    assert sorted(np.concatenate([tr3, te3]).tolist()) == list(range(100))
    assert np.bincount(y[te3]).tolist() == [15, 9, 6]  # stratified: 30 % of each class
    tr4, _ = stratified_realisation(y, "mine", seed=7, trial=4, test_size=0.3)
    assert set(tr4) != set(tr3)
    tr_seed, _ = stratified_realisation(y, "mine", seed=8, trial=3, test_size=0.3)
    assert set(tr_seed) != set(tr3)
    # the IDA family's stream: a binary set gets the realisation IDA draws for that name
    yb = np.where(y == 0, -1, 1)
    trb, teb = stratified_realisation(yb, "mine", seed=7, trial=3, test_size=30)
    ida_tr, ida_te = ida.stratified_splits(yb, "mine", 7, 70, 30, n_realisations=[3])
    np.testing.assert_array_equal(trb, ida_tr[0])
    np.testing.assert_array_equal(teb, ida_te[0])


def test_multilabel_realisation_stratifies_label_sets_and_merges_rare_ones():
    # label sets (1,0) x40, (0,1) x20, (1,1) x10, and three sets seen once
    Y = np.array(
        [[1, 0, 0]] * 40 + [[0, 1, 0]] * 20 + [[1, 1, 0]] * 10 + [[0, 0, 1], [1, 0, 1], [0, 1, 1]]
    )
    train, test = stratified_realisation(Y, "ml", seed=1, trial=0, test_size=0.2)
    assert len(test) == 15 and len(train) == 58
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(73))
    sets = [tuple(r) for r in Y[test]]
    assert sets.count((1, 0, 0)) == 8 and sets.count((0, 1, 0)) == 4 and sets.count((1, 1, 0)) == 2


def test_standardize_split_uses_training_statistics():
    rng = np.random.default_rng(3)
    Xtr, Xte = rng.normal(2, 3, size=(40, 2)), rng.normal(size=(5, 2))
    Xtr[:, 1] = 4.0  # a constant column is only centred
    A, B = standardize_split(Xtr, Xte)
    mean, std = Xtr.mean(axis=0), Xtr.std(axis=0)
    np.testing.assert_allclose(A[:, 0], (Xtr[:, 0] - mean[0]) / std[0], rtol=1e-12)
    np.testing.assert_allclose(B[:, 0], (Xte[:, 0] - mean[0]) / std[0], rtol=1e-12)
    np.testing.assert_array_equal(B[:, 1], Xte[:, 1] - 4.0)


# --- class folders ------------------------------------------------------------------------


def _wav(path, n=800, rate=8000):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.zeros(n, dtype=np.int16).tobytes())


def test_image_class_folders(tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    layout = {
        "zebra": ["b.png", "a.JPG", "c.jpeg"],
        "apple": ["x.png"],
        "Kite": ["k1.jpg", "k0.png"],
    }
    for cls, files in layout.items():
        (tmp_path / cls).mkdir()
        for f in files:
            img = Image.fromarray(rng.integers(0, 255, (8, 8, 3), dtype=np.uint8))
            img.save(tmp_path / cls / f, format="PNG" if f.endswith("png") else "JPEG")
    paths, y, classes = list_class_folders(tmp_path, IMAGE_EXTENSIONS)
    assert classes == ["Kite", "apple", "zebra"]
    assert [p.relative_to(tmp_path).as_posix() for p in paths] == [
        "Kite/k0.png",
        "Kite/k1.jpg",
        "apple/x.png",
        "zebra/a.JPG",
        "zebra/b.png",
        "zebra/c.jpeg",
    ]
    assert y.tolist() == [0, 0, 1, 2, 2, 2]


def test_audio_class_folders_leave_out_other_files_with_a_warning(tmp_path):
    for tag, n in (("dog_bark", 2), ("siren", 1)):
        (tmp_path / tag).mkdir()
        for k in range(n):
            _wav(tmp_path / tag / f"clip{k}.wav")
    (tmp_path / "siren" / "notes.txt").write_text("not a clip")
    with pytest.warns(UserDataWarning, match=r"siren: 1 entries .* left out"):
        paths, y, classes = list_class_folders(tmp_path, AUDIO_EXTENSIONS)
    assert classes == ["dog_bark", "siren"] and y.tolist() == [0, 0, 1]
    assert [p.name for p in paths] == ["clip0.wav", "clip1.wav", "clip0.wav"]


# --- names and schema ------------------------------------------------------------------------


def test_builtin_names_come_from_the_family_schemas():
    names = builtin_dataset_names(SCHEMAS)
    assert set(ida.PUBLISHED) | set(ida.EXTRA) <= set(names)
    assert set(multiclass.DATASETS) <= set(names)
    assert names["scene"] == ["mgpc.datasets", "multilabel.datasets"]
    assert names["digits"] == ["mgpc.datasets", "multiclass.datasets"]


def _valid(block):
    validate(block, str(SCHEMA), set_default=True)
    return block


def test_schema_accepts_each_format_and_fills_defaults():
    block = _valid(
        {
            "a": {"format": "arff", "train": "a.arff", "test": "b.arff", "n_labels": 6},
            "b": {"format": "arff", "path": "m.arff", "labels": ["x", "y"]},
            "c": {"format": "csv", "path": "c.csv", "label": "y", "features": ["f"]},
            "d": {"format": "tsv", "path": "d.tsv", "labels": ["u", "v"]},
            "e": {"format": "libsvm", "train": "e.svm", "test": "f.svm", "standardize": True},
            "f": {"format": "npz", "path": "f.npz"},
            "g": {"format": "csv", "path": "g.csv", "label": "y", "sep": "\t", "decimal": ","},
            "h": {"format": "tsv", "path": "h.tsv", "label": "y", "decimal": "."},
        }
    )
    assert block["c"]["standardize"] is None and block["c"]["train"] is None
    assert block["c"]["sep"] is None and block["c"]["decimal"] is None  # null = detected
    assert block["e"]["standardize"] is True and block["e"]["path"] is None
    assert _valid({}) == {}


@pytest.mark.parametrize(
    "entry",
    [
        {"format": "xlsx", "path": "a"},
        {"format": "csv", "label": "y"},  # no file
        {"format": "csv", "path": "a", "train": "b", "test": "c", "label": "y"},
        {"format": "csv", "train": "b", "label": "y"},  # train without test
        {"format": "csv", "path": "a"},  # neither label nor labels
        {"format": "csv", "path": "a", "label": "y", "labels": ["z"]},
        {"format": "csv", "path": "a", "label": "y", "n_labels": 2},
        {"format": "arff", "path": "a"},
        {"format": "arff", "path": "a", "n_labels": 2, "labels": ["z"]},
        {"format": "arff", "path": "a", "n_labels": 0},
        {"format": "arff", "path": "a", "n_labels": 2, "label": "y"},
        {"format": "npz", "path": "a", "labels": ["z"]},
        {"format": "libsvm", "path": "a", "features": ["z"]},
        {"format": "npz", "path": "a", "standardise": True},  # misspelt key
        {"format": "csv", "path": "a", "label": "y", "sep": ";;"},
        {"format": "csv", "path": "a", "label": "y", "decimal": "'"},
        {"format": "tsv", "path": "a", "label": "y", "sep": ";"},  # tsv is tab-separated
        {"format": "arff", "path": "a", "n_labels": 2, "decimal": ","},
        {"format": "npz", "path": "a", "sep": ","},
    ],
)
def test_schema_rejects_bad_entries(entry):
    with pytest.raises(Exception, match="validat"):
        _valid({"mine": entry})


def test_schema_rejects_bad_names():
    with pytest.raises(Exception, match="validat"):
        _valid({"2fast": {"format": "npz", "path": "a"}})
    with pytest.raises(Exception, match="validat"):
        _valid({"my-set": {"format": "npz", "path": "a"}})


def test_schema_is_closed_like_the_others():
    schema = yaml.safe_load(SCHEMA.read_text())
    assert schema["additionalProperties"]["additionalProperties"] is False


# --- bad input: one line naming the file and the column or row ---------------------------------


def _csv(tmp_path, text, name="d.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _one_line(excinfo):
    message = str(excinfo.value)
    assert "\n" not in message
    return message


def test_missing_label_column(tmp_path):
    p = _csv(tmp_path, "a,b,target\n1,2,0\n3,4,1\n")
    with pytest.raises(ValueError) as e:
        load_user_dataset("d", {"format": "csv", "path": str(p), "label": "class"})
    assert _one_line(e).startswith(f"{p}: no column 'class' (label)")
    with pytest.raises(ValueError, match=re.escape(f"{p}: no column 'L9' (labels)")):
        load_user_dataset("d", {"format": "csv", "path": str(p), "labels": ["target", "L9"]})
    with pytest.raises(ValueError, match=re.escape(f"{p}: no column 'c' (features)")):
        entry = {"format": "csv", "path": str(p), "label": "target", "features": ["a", "c"]}
        load_user_dataset("d", entry)


def test_non_numeric_feature_names_column_and_first_row(tmp_path):
    p = _csv(tmp_path, "a,b,y\n1,2,0\n3,4,1\n5,n/a?,1\n6,x,0\n")
    with pytest.raises(ValueError) as e:
        load_user_dataset("d", {"format": "csv", "path": str(p), "label": "y"})
    message = _one_line(e)
    assert message.startswith(f"{p}: feature column 'b' is not numeric: 'n/a?' at line 4")
    assert "features:" in message  # says how to leave a column out
    np.savez(tmp_path / "s.npz", X=np.array([["1", "2"], ["3", "oops"]]), y=np.array([0, 1]))
    with pytest.raises(
        ValueError, match=re.escape("feature column '1' is not numeric: 'oops' at row index 1")
    ):
        load_user_dataset("s", {"format": "npz", "path": str(tmp_path / "s.npz")})


def test_nan_or_inf_in_features_gives_the_count(tmp_path):
    p = _csv(tmp_path, "a,b,y\n1,2,0\n3,,1\n5,inf,1\nnan,1,0\n")
    with pytest.raises(ValueError) as e:
        load_user_dataset("d", {"format": "csv", "path": str(p), "label": "y"})
    assert _one_line(e) == (
        f"{p}: 3 NaN, inf or empty values in the features, the first at line 3, column 'b'"
    )
    X = np.ones((4, 2))
    X[1, 0], X[3, 1] = np.inf, np.nan
    np.savez(tmp_path / "s.npz", X=X, y=np.array([0, 1, 0, 1]))
    with pytest.raises(
        ValueError,
        match=re.escape(
            "s.npz: 2 NaN, inf or empty values in the features, the first at row index 1, "
            "column '0'"
        ),
    ):
        load_user_dataset("s", {"format": "npz", "path": str(tmp_path / "s.npz")})
    arff = tmp_path / "m.arff"
    arff.write_text(
        "@relation m\n@attribute f numeric\n@attribute g numeric\n@attribute L {0,1}\n"
        "@data\n1,2,0\n?,3,1\n4,?,1\n"
    )
    with pytest.raises(ValueError) as e:
        load_user_dataset("m", {"format": "arff", "path": str(arff), "n_labels": 1})
    assert _one_line(e) == (
        f"{arff}: features have 2 missing values ('?'), the first in data row 2, attribute 'f'"
    )


def test_single_class(tmp_path):
    p = _csv(tmp_path, "a,y\n1,yes\n2,yes\n3,yes\n")
    with pytest.raises(ValueError) as e:
        load_user_dataset("d", {"format": "csv", "path": str(p), "label": "y"})
    assert _one_line(e) == (
        f"{p}: label column 'y' has a single class 'yes'; a classifier needs two"
    )
    p = _csv(tmp_path, "a,L1,L2\n1,0,1\n2,0,1\n", name="ml.csv")
    with pytest.raises(ValueError, match=re.escape(f"{p}: every label has a single class")):
        load_user_dataset("d", {"format": "csv", "path": str(p), "labels": ["L1", "L2"]})
    p = _csv(tmp_path, "a,y\n1,u\n2,v\n3,v\n", name="lone.csv")  # no stratified split
    with pytest.raises(
        ValueError, match=re.escape(f"{p}: class 'u' of label column 'y' has a single example")
    ):
        load_user_dataset("d", {"format": "csv", "path": str(p), "label": "y"})


def test_constant_multilabel_column_is_a_warning(tmp_path):
    p = _csv(tmp_path, "a,L1,L2\n1,0,1\n2,1,1\n", name="ml.csv")
    with pytest.warns(UserDataWarning, match=re.escape(f"{p}: label 'L2' is 1 in every row")):
        d = load_user_dataset("d", {"format": "csv", "path": str(p), "labels": ["L1", "L2"]})
    np.testing.assert_array_equal(d.y, [[0, 1], [1, 1]])


def test_n_labels_larger_than_the_attribute_count(tmp_path):
    p = tmp_path / "m.arff"
    p.write_text(MEKA_DENSE)
    with pytest.raises(ValueError) as e:
        load_user_dataset("m", {"format": "arff", "path": str(p), "n_labels": 9})
    message = _one_line(e)
    assert message.startswith(f"{p}: n_labels must be an integer in [1, 3]")
    assert "(it has 4 attributes), got 9" in message
    with pytest.raises(ValueError, match=re.escape(f"{p}: labels: no attribute 'C' among its 4")):
        load_user_dataset("m", {"format": "arff", "path": str(p), "labels": ["A", "C"]})


def test_empty_class_folder(tmp_path):
    for cls in ("cats", "dogs"):
        (tmp_path / cls).mkdir()
    (tmp_path / "cats" / "a.png").write_bytes(b"")
    (tmp_path / "dogs" / "readme.txt").write_text("no images yet")
    with pytest.raises(ValueError) as e:
        list_class_folders(tmp_path, IMAGE_EXTENSIONS)
    assert _one_line(e) == (
        f"{tmp_path / 'dogs'}: class folder 'dogs' has no .jpeg/.jpg/.png files"
    )
    with pytest.raises(ValueError, match="at least two"):
        list_class_folders(tmp_path / "cats", IMAGE_EXTENSIONS)
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "none"))):
        list_class_folders(tmp_path / "none", IMAGE_EXTENSIONS)


def test_class_in_training_but_absent_from_test_is_a_warning(tmp_path):
    _csv(tmp_path, "a,y\n1,u\n2,v\n3,w\n", name="train.csv")
    test = _csv(tmp_path, "a,y\n1,u\n2,v\n", name="test.csv")
    entry = {"format": "csv", "train": "train.csv", "test": "test.csv", "label": "y"}
    with pytest.warns(UserDataWarning) as record:
        d = load_user_dataset("d", entry, base_dir=tmp_path)
    assert [str(w.message) for w in record] == [
        f"{test}: class 'w' of label column 'y' is in the training file but absent from the "
        f"test file (1 such classes)"
    ]
    assert d.classes == ("u", "v", "w") and d.y_test.tolist() == [0, 1]
    _csv(tmp_path, "a,L1,L2\n1,1,0\n2,0,1\n", name="mtrain.csv")
    mtest = _csv(tmp_path, "a,L1,L2\n1,1,0\n2,1,0\n", name="mtest.csv")
    entry = {"format": "csv", "train": "mtrain.csv", "test": "mtest.csv", "labels": ["L1", "L2"]}
    with pytest.warns(
        UserDataWarning, match=re.escape(f"{mtest}: label 'L2' is in the training file but absent")
    ):
        load_user_dataset("m", entry, base_dir=tmp_path)


def test_class_in_test_but_not_in_training_is_an_error(tmp_path):
    train = _csv(tmp_path, "a,y\n1,u\n2,v\n", name="train.csv")
    test = _csv(tmp_path, "a,y\n1,u\n2,z\n", name="test.csv")
    entry = {"format": "csv", "train": "train.csv", "test": "test.csv", "label": "y"}
    with pytest.raises(ValueError) as e:
        load_user_dataset("d", entry, base_dir=tmp_path)
    assert _one_line(e) == (
        f"{test}: class 'z' of label column 'y' is absent from the training file {train}"
    )


def test_name_clashing_with_a_builtin_data_set():
    builtin = builtin_dataset_names(SCHEMAS)
    with pytest.raises(ValueError) as e:
        check_dataset_name("banana", builtin)
    assert _one_line(e) == (
        "datasets.banana: the name clashes with the built-in data set 'banana' of "
        "benchmark.datasets, ida.datasets; choose another name"
    )
    with pytest.raises(ValueError, match="datasets.scene: .* mgpc.datasets, multilabel.datasets"):
        load_user_dataset("scene", {"format": "npz", "path": "x.npz"}, builtin=builtin)
    assert check_dataset_name("my_scene", builtin) == "my_scene"


def test_other_bad_entries_name_the_key_or_file(tmp_path):
    p = _csv(tmp_path, "a,y\n1,0\n2,1\n")
    with pytest.raises(
        FileNotFoundError, match=re.escape(f"datasets.d.path: no file {tmp_path / 'nope.csv'}")
    ):
        load_user_dataset("d", {"format": "csv", "path": "nope.csv", "label": "y"}, tmp_path)
    with pytest.raises(ValueError, match=re.escape("datasets.d.n_labels: not a key of format csv")):
        load_user_dataset("d", {"format": "csv", "path": str(p), "label": "y", "n_labels": 1})
    np.savez(tmp_path / "s.npz", X=np.ones((2, 2)), y=np.array([0, 1]), w=np.ones(2))
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / 's.npz'}: unexpected array 'w'")):
        load_user_dataset("s", {"format": "npz", "path": str(tmp_path / "s.npz")})
    p = _csv(tmp_path, "a,L1\n1,0\n2,yes\n", name="ml.csv")
    with pytest.raises(
        ValueError, match=re.escape(f"{p}: label column 'L1' must hold 0/1, got 'yes' at line 3")
    ):
        load_user_dataset("d", {"format": "csv", "path": str(p), "labels": ["L1"]})


def test_mulan_reader_names_labels_anywhere(tmp_path):
    p = tmp_path / "m.arff"
    p.write_text(MEKA_DENSE)
    X, Y, feat, lab = load_arff_multilabel(p, labels=["B", "A"])
    np.testing.assert_array_equal(Y, [[0, 1], [1, 0], [1, 1]])
    assert feat == ["x", "y"] and lab == ["B", "A"]
    with pytest.raises(ValueError, match="label attribute 'x' is not nominal"):
        load_arff_multilabel(p, labels=["A", "B", "x"])


def test_unreadable_files_name_the_file(tmp_path):
    p = _csv(tmp_path, "a,y\n1,0\n2,1,7\n")
    with pytest.raises(ValueError) as e:
        load_user_dataset("d", {"format": "csv", "path": str(p), "label": "y"})
    assert _one_line(e).startswith(f"{p}: not a comma-separated table with a header row (")
    assert "line 3" in str(e.value)  # pandas' own pointer to the ragged row
    p = _csv(tmp_path, "\n", name="empty.csv")
    with pytest.raises(ValueError, match=re.escape(f"{p}: empty file (a table needs a header")):
        load_user_dataset("d", {"format": "csv", "path": str(p), "label": "y"})
    np.savez(tmp_path / "o.npz", X=np.ones((2, 1)), y=np.array([{}, {}], dtype=object))
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / 'o.npz'}: not an npz of numeric")):
        load_user_dataset("o", {"format": "npz", "path": str(tmp_path / "o.npz")})
