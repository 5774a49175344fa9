"""Progress lines of long workflow jobs: counts and the seconds elapsed, first and last
unit always, the others at most every ``every`` seconds."""

import logging

import pytest

from kclf_workflow.progress import Progress


def test_every_unit_with_every_zero(caplog):
    log = logging.getLogger("kclf.test.progress")
    caplog.set_level(logging.INFO, logger=log.name)
    p = Progress(log, "images", 3, every=0.0)
    for k in range(3):
        p.step(f"{10 * (k + 1)} descriptors")
    messages = [r.getMessage() for r in caplog.records]
    assert [m.split(";")[0] for m in messages] == [
        "images 1/3 (10 descriptors)",
        "images 2/3 (20 descriptors)",
        "images 3/3 (30 descriptors)",
    ]
    assert all(m.endswith(" s elapsed") for m in messages)


def test_only_first_and_last_within_the_interval(caplog):
    log = logging.getLogger("kclf.test.progress")
    caplog.set_level(logging.INFO, logger=log.name)
    p = Progress(log, "clips", 1000, every=3600.0)
    for _ in range(1000):
        p.step()
    assert [r.getMessage().split(";")[0] for r in caplog.records] == [
        "clips 1/1000",
        "clips 1000/1000",
    ]


@pytest.mark.parametrize("total", [1, 2])
def test_a_short_job_still_says_it_finished(caplog, total):
    log = logging.getLogger("kclf.test.progress")
    caplog.set_level(logging.INFO, logger=log.name)
    p = Progress(log, "trials", total, every=3600.0)
    for _ in range(total):
        p.step()
    assert caplog.records[-1].getMessage().startswith(f"trials {total}/{total}; ")
