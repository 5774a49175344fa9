"""MULAN ARFF loader: a tiny hand-written file, and real scene when the mirror is present."""

from pathlib import Path

import numpy as np
import pytest

from kclf_workflow.datasets.mulan import (
    SCENE_LABELS,
    fetch_scene,
    load_arff_multilabel,
    load_scene,
    verify_scene,
)

MULAN = Path(__file__).resolve().parents[3] / "shared" / "data" / "mulan"

TINY = """% two features, three labels
@relation tiny
@attribute f1 numeric
@attribute f2 numeric
@attribute L1 {0,1}
@attribute L2 {0,1}
@attribute L3 {0,1}
@data
0.5,-1.25,1,0,1
2,3e-1,0,0,1
"""


def test_tiny_arff(tmp_path):
    p = tmp_path / "tiny.arff"
    p.write_text(TINY)
    X, Y, feat, lab = load_arff_multilabel(p, 3)
    np.testing.assert_array_equal(X, [[0.5, -1.25], [2.0, 0.3]])
    np.testing.assert_array_equal(Y, [[1, 0, 1], [0, 0, 1]])
    assert Y.dtype.kind == "i"
    assert feat == ["f1", "f2"] and lab == ["L1", "L2", "L3"]


SPARSE = """@relation 'sparse: -C 2'
@attribute 'word one' {0,1}
@attribute w2 numeric
@attribute w3 {0,1}
@attribute L1 {0,1}
@attribute L2 {0,1}
@data
{0 1,3 1}
{}
{1 2.5,2 1,4 1}
"""


def test_sparse_arff(tmp_path):
    p = tmp_path / "sparse.arff"
    p.write_text(SPARSE)
    X, Y, feat, lab = load_arff_multilabel(p, 2)
    np.testing.assert_array_equal(X, [[1, 0, 0], [0, 0, 0], [0, 2.5, 1]])
    np.testing.assert_array_equal(Y, [[1, 0], [0, 0], [0, 1]])
    assert feat == ["word one", "w2", "w3"] and lab == ["L1", "L2"]
    with pytest.raises(ValueError, match="not nominal"):
        load_arff_multilabel(p, 4)  # w2 is numeric
    p.write_text(SPARSE.replace("{1 2.5,2 1,4 1}", "{1 2.5,7 1}"))
    with pytest.raises(ValueError, match="out of range"):
        load_arff_multilabel(p, 2)


@pytest.mark.shared
def test_real_medical_sparse_with_labels_last():
    if not (MULAN / "medical-train.arff").is_file():
        pytest.skip("../shared/data not present: mulan/medical-*.arff missing")
    X, Y, feat, lab = load_arff_multilabel(MULAN / "medical-train.arff", 45)
    assert X.shape == (880, 1449) and Y.shape == (880, 45)
    assert lab[0] == "Class-0-593_70" and set(np.unique(X)) == {0.0, 1.0}
    # every clinical document has at least one code; 1.245 codes per document
    assert Y.sum(axis=1).min() == 1 and abs(Y.sum(axis=1).mean() - 1.245) < 1e-3


def test_wrong_n_labels_is_a_clear_error(tmp_path):
    p = tmp_path / "tiny.arff"
    p.write_text(TINY)
    with pytest.raises(ValueError, match="not nominal"):
        load_arff_multilabel(p, 4)
    with pytest.raises(ValueError, match="n_labels"):
        load_arff_multilabel(p, 5)
    with pytest.raises(FileNotFoundError, match="path"):
        load_arff_multilabel(tmp_path / "missing.arff", 3)


def test_verify_rejects_changed_file(tmp_path):
    for name in ("scene-train.arff", "scene-test.arff"):
        (tmp_path / name).write_text(TINY)
    with pytest.raises(ValueError, match="SHA-256"):
        verify_scene(tmp_path)


@pytest.fixture
def mulan_dir():
    if not (MULAN / "scene-train.arff").is_file():
        pytest.skip("../shared/data not present: MULAN scene mirror (mulan/scene-*.arff) missing")
    return MULAN


@pytest.mark.shared
def test_scene_from_mirror(mulan_dir):
    d = load_scene(fetch_scene(cache_dir="unused", mirror=mulan_dir))
    assert d["X_train"].shape == (1211, 294) and d["Y_train"].shape == (1211, 6)
    assert d["X_test"].shape == (1196, 294) and d["Y_test"].shape == (1196, 6)
    assert d["label_names"] == list(SCENE_LABELS)
    assert set(np.unique(d["Y_train"])) == {0, 1}
    # every photograph has at least one of the six scene labels (Boutell et al.)
    assert d["Y_train"].sum(axis=1).min() >= 1 and d["Y_test"].sum(axis=1).min() >= 1
    # scene's features are scaled to [0, 1]
    assert 0.0 <= d["X_train"].min() and d["X_train"].max() <= 1.0


def _can_extract_rar():
    import shutil

    try:
        import libarchive  # noqa: F401

        return True
    except ImportError:
        return any(shutil.which(x) for x in ("bsdtar", "unar", "unrar", "7z"))


def test_extract_rar_and_find_nested_scene(tmp_path):
    from kclf_workflow.datasets.mulan import extract_rar, find_scene_root

    if not _can_extract_rar():
        pytest.skip("no RAR extractor: pip install libarchive-c (or bsdtar/unar/unrar/7z)")
    archive = Path(__file__).parents[1] / "data" / "rar3-subdirs.rar"
    out = extract_rar(archive, tmp_path / "x")
    assert (out / "sub" / "dir1" / "file1.txt").read_bytes().startswith(b"file1")
    assert (out / "sub" / "dir2" / "file2.txt").is_file()
    # the scene folder is found wherever the archive put it
    nested = tmp_path / "x" / "sub" / "scene"
    nested.mkdir()
    for name in ("scene-train.arff", "scene-test.arff"):
        (nested / name).write_text(TINY)
    assert find_scene_root(tmp_path / "x") == nested
