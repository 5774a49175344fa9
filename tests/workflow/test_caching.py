"""Caching you can trust: on a finished tiny run of every family, a dry run of an edit plans
exactly the jobs that read what changed.

* report-only keys (the papers' reference tables) plan only table jobs (and provenance,
  which records the config);
* one more trial plans only the new chunk's fits (trial t depends on the seed and t alone;
  a partial last chunk is extended and rerun, full chunks never);
* one more method, task, representation or dataset plans only its own jobs;
* files are written with the umask's mode (0644 under 022).

Every expected plan is a list of ``(rule, wildcards)``; ``provenance`` is in every plan of
a config edit because results/provenance.json records the config.
"""

from __future__ import annotations

import copy
import stat

import pytest
import workflow_run as wf
import yaml

pytestmark = pytest.mark.slow

SHARED = wf.ROOT.parent / "shared"
PROV = ("provenance", "")
REFERENCES = {  # family -> (its report-only keys, the table job that reads them)
    "voc": (["reference"], ("voc_table", "")),
    "audio": (["reference"], ("audio_table", "")),
    "mgpc": (["reference"], ("mgpc_report", "")),
    "ida": (["reference_error", "reference_time"], ("ida_report", "")),
    "multiclass": (["reference"], ("multiclass_table", "dataset=digits")),
}
REFERENCE_FILES = {
    ("voc", "reference"): "lspc_voc2010_auc.csv",
    ("audio", "reference"): "lspc_freesound_auc.csv",
    ("mgpc", "reference"): "mgpc_defects.csv",
    ("ida", "reference_error"): "maplp_ida_error.csv",
    ("ida", "reference_time"): "maplp_ida_time.csv",
    ("multiclass", "reference"): "klogreg_multiclass.csv",
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished run of tests/workflow_configs/caching.yaml (every family), under umask 022,
    with the mirror and the papers' tables given by absolute paths."""
    work = wf.make_workdir(tmp_path_factory.mktemp("caching"), "caching")
    cfg = yaml.safe_load((work / "config.yaml").read_text())
    cfg["mirror"] = str(SHARED / "data")
    for (family, key), name in REFERENCE_FILES.items():
        cfg[family][key] = str(SHARED / "reference" / name)
    (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True))
    wf.run(work, cores=2, timeout=1200, umask=0o022)
    return work, cfg


def _edit(cfg, **changes):
    """A copy of ``cfg`` with ``a__b__c=value`` set at cfg[a][b][c]."""
    out = copy.deepcopy(cfg)
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = out
        for p in parents:
            node = node[p]
        node[last] = value
    return out


def _plan(finished, **changes):
    work, cfg = finished
    try:
        return wf.dry_run(work, _edit(cfg, **changes))
    finally:
        (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True))


def test_finished_run_plans_nothing(finished):
    assert wf.dry_run(*finished) == []


def _reversed_keys(node):
    if isinstance(node, dict):
        return {k: _reversed_keys(node[k]) for k in reversed(list(node))}
    if isinstance(node, list):
        return [_reversed_keys(v) for v in node]
    return node


def test_reordered_config_keys_plan_nothing(finished):
    """The same config with every block's keys in the reverse order: no job's params
    change (a dict param taken from a block, e.g. the HMM options, kept the YAML order)."""
    work, cfg = finished
    try:
        text = yaml.safe_dump(_reversed_keys(cfg), sort_keys=False)
        (work / "config.yaml").write_text(text)
        assert wf.dry_run(work) == []
    finally:
        (work / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=True))


def test_outputs_have_the_umask_mode(finished):
    """Tables, records, figures, data and logs: 0644 under umask 022 (atomic writes
    included: their temporary files no longer keep mkstemp's 0600)."""
    work, _ = finished
    files = [p for p in (work / "results").rglob("*") if p.is_file()]
    assert len(files) > 100
    modes = {str(p.relative_to(work)): stat.S_IMODE(p.stat().st_mode) for p in files}
    assert {k: oct(v) for k, v in modes.items() if v != 0o644} == {}
    for kind in ("tables", "records", "figures", "data"):
        assert any(k.startswith(f"results/{kind}/") for k in modes), kind


@pytest.mark.parametrize("family", sorted(REFERENCES))
def test_report_only_edit_plans_only_its_table(finished, family):
    if not SHARED.is_dir():
        pytest.skip("the papers' reference tables (../shared/reference) are not here")
    keys, table = REFERENCES[family]
    plan = _plan(finished, **{f"{family}__{k}": None for k in keys})
    assert plan == sorted([table, PROV])


def test_report_only_edits_of_every_family_plan_no_fit(finished):
    """All reference tables at once: lspc_toy, scene and multilabel (which have no
    report-only keys) plan nothing, the others only their tables."""
    changes = {f"{f}__{k}": None for f, (keys, _) in REFERENCES.items() for k in keys}
    plan = _plan(finished, **changes)
    assert plan == sorted([t for _, t in REFERENCES.values()] + [PROV])


# family -> (the edit, the jobs it must plan: the new chunk's data and fits, the table)
ONE_MORE_TRIAL = {
    "lspc_toy": (
        {"lspc_toy__trials": 3},
        [("lspc_toy_data", "trials=2-2"), ("lspc_toy_report", "")]
        + [("lspc_toy_fit", f"method={m}, trials=2-2") for m in ("lspc_new", "lspc")],
    ),
    "voc": (
        {"voc__experiment__trials": 3},
        [("voc_fit", "method=lspc_new, trials=2-2"), ("voc_table", "")],
    ),
    "scene": (
        {"scene__experiment__trials": 2},
        [("scene_fit", "method=lspc_new, trials=1-1"), ("scene_table", "")],
    ),
    "audio": (
        {"audio__experiment__trials": 3},
        [("audio_fit", "method=lspc_new, trials=2-2"), ("audio_table", "")],
    ),
    "multilabel": (
        {"multilabel__toy__trials": 3},
        [
            ("multilabel_toy_data", "trials=2-2"),
            ("multilabel_fit", "dataset=toy, method=ilr, trials=2-2"),
            ("multilabel_table", "dataset=toy"),
        ],
    ),
    "mgpc": (  # the partial last chunk 2-2 becomes 2-3; chunk 0-1 stays
        {"mgpc__trials": 4},
        [
            (
                "mgpc_fit",
                "mgpc_dataset=digits, mgpc_task=3v8, mgpc_repr=binarization, "
                "mgpc_method=ridge_newton, trials=2-3",
            ),
            ("mgpc_report", ""),
        ],
    ),
    "ida": (
        {"ida__realisations": 3},
        [
            ("ida_data", "dataset=twonorm, trials=2-2"),
            ("ida_fit", "dataset=twonorm, method=klr, trials=2-2"),
            ("ida_report", ""),
        ],
    ),
    "multiclass": (  # trial 2 = fold 0 of the second seeded 2-fold partition
        {"multiclass__trials": 3},
        [
            ("multiclass_fit", "dataset=digits, method=klr_ovr, trials=2-2"),
            ("multiclass_table", "dataset=digits"),
        ],
    ),
}


@pytest.mark.parametrize("family", sorted(ONE_MORE_TRIAL))
def test_one_more_trial_plans_only_the_new_chunk(finished, family):
    changes, expected = ONE_MORE_TRIAL[family]
    assert _plan(finished, **changes) == sorted(expected + [PROV])


ONE_MORE_METHOD = {
    "lspc_toy": (
        {"lspc_toy__methods": ["lspc_new", "lspc", "lspc_prime"]},
        [("lspc_toy_fit", "method=lspc_prime, trials=0-1"), ("lspc_toy_report", "")],
    ),
    "voc": (
        {"voc__experiment__methods": ["LSPC-new", "KLR"]},
        [("voc_fit", "method=klr, trials=0-1"), ("voc_table", "")],
    ),
    "scene": (
        {"scene__experiment__methods": ["LSPC-new", "SVC"]},
        [("scene_fit", "method=svc, trials=0-0"), ("scene_table", "")],
    ),
    "audio": (
        {"audio__experiment__methods": ["LSPC-new", "KLR"]},
        [("audio_fit", "method=klr, trials=0-1"), ("audio_table", "")],
    ),
    "multilabel": (
        {"multilabel__methods": ["ilr", "cc"]},
        [
            ("multilabel_fit", "dataset=toy, method=cc, trials=0-1"),
            ("multilabel_table", "dataset=toy"),
        ],
    ),
    "mgpc": (
        {"mgpc__methods": ["ridge_newton", "sklearn_gpc"]},
        [
            (
                "mgpc_fit",
                "mgpc_dataset=digits, mgpc_task=3v8, mgpc_repr=binarization, "
                f"mgpc_method=sklearn_gpc, trials={c}",
            )
            for c in ("0-1", "2-2")
        ]
        + [("mgpc_report", "")],
    ),
    "ida": (
        {"ida__methods": ["klr", "svm"]},
        [
            ("ida_select", "dataset=twonorm, method=svm"),
            ("ida_fit", "dataset=twonorm, method=svm, trials=0-1"),
            ("ida_report", ""),
        ],
    ),
    "multiclass": (
        {"multiclass__methods": ["klr_ovr", "klr_pairwise"]},
        [
            ("multiclass_fit", "dataset=digits, method=klr_pairwise, trials=0-1"),
            ("multiclass_table", "dataset=digits"),
        ],
    ),
}


@pytest.mark.parametrize("family", sorted(ONE_MORE_METHOD))
def test_one_more_method_plans_only_its_fits(finished, family):
    changes, expected = ONE_MORE_METHOD[family]
    assert _plan(finished, **changes) == sorted(expected + [PROV])


def test_one_more_task_representation_or_dataset_plans_only_its_jobs(finished):
    fit = "mgpc_dataset=digits, mgpc_task={t}, mgpc_repr={r}, mgpc_method=ridge_newton, trials={c}"
    digits = {"tasks": ["3v8", "1v7"], "representations": ["binarization"]}
    assert _plan(finished, mgpc__datasets={"digits": digits}) == sorted(
        [
            ("mgpc_prepare", "mgpc_dataset=digits, mgpc_task=1v7"),
            ("mgpc_represent", "mgpc_dataset=digits, mgpc_task=1v7, mgpc_repr=binarization"),
            ("mgpc_report", ""),
            PROV,
        ]
        + [("mgpc_fit", fit.format(t="1v7", r="binarization", c=c)) for c in ("0-1", "2-2")]
    )
    digits = {"tasks": ["3v8"], "representations": ["binarization", "gradient"]}
    assert _plan(finished, mgpc__datasets={"digits": digits}) == sorted(
        [
            ("mgpc_represent", "mgpc_dataset=digits, mgpc_task=3v8, mgpc_repr=gradient"),
            ("mgpc_report", ""),
            PROV,
        ]
        + [("mgpc_fit", fit.format(t="3v8", r="gradient", c=c)) for c in ("0-1", "2-2")]
    )
    plan = _plan(finished, ida__datasets=["twonorm", "waveform"])
    assert plan == sorted(
        [
            ("ida_data", "dataset=waveform, trials=0-0"),  # the n_select = 1 CV realisation
            ("ida_data", "dataset=waveform, trials=0-1"),
            ("ida_select", "dataset=waveform, method=klr"),
            ("ida_fit", "dataset=waveform, method=klr, trials=0-1"),
            ("ida_report", ""),
            PROV,
        ]
    )


def test_other_keys_of_a_block_rerun_only_their_readers(finished):
    """The multiclass cost experiment's lam reruns the cost curve, not the fits; another
    method's grid reruns no fit of this one."""
    assert _plan(finished, multiclass__cost__lam=0.1) == sorted(
        [("multiclass_cost", ""), ("multiclass_cost_figure", ""), PROV]
    )
    assert _plan(finished, ida__svm_C=[1.0, 10.0]) == [PROV]
    assert _plan(finished, multiclass__svc_Cs=[3.0]) == [PROV]


def test_lspc_new_variant_reruns_only_lspc_new(finished):
    """Every family's LSPC-new variant block is read by LSPC-new's jobs only: where the
    run has no LSPC-new it plans nothing (IDA, multi-class: klr only); where it has, it
    reruns LSPC-new's selection and fits and the table, no other method's."""
    classwise = {"basis": "classwise", "class_weight": "balanced"}
    for key in ("ida__lspc_new", "multiclass__lspc_new"):
        assert _plan(finished, **{key: classwise}) == [PROV]
    assert _plan(finished, voc__experiment__lspc_new=classwise) == sorted(
        [("voc_fit", "method=lspc_new, trials=0-1"), ("voc_table", ""), PROV]
    )
    assert _plan(finished, lspc_toy__lspc_new=classwise) == sorted(
        [("lspc_toy_fit", "method=lspc_new, trials=0-1"), ("lspc_toy_report", ""), PROV]
    )
    ida = {"ida__methods": ["klr", "lspc_new"], "ida__lspc_new": classwise}
    assert _plan(finished, **ida) == sorted(
        [
            ("ida_select", "dataset=twonorm, method=lspc_new"),
            ("ida_fit", "dataset=twonorm, method=lspc_new, trials=0-1"),
            ("ida_report", ""),
            PROV,
        ]
    )
    mc = {"multiclass__methods": ["klr_ovr", "lspc_new"], "multiclass__lspc_new": classwise}
    assert _plan(finished, **mc) == sorted(
        [
            ("multiclass_fit", "dataset=digits, method=lspc_new, trials=0-1"),
            ("multiclass_table", "dataset=digits"),
            PROV,
        ]
    )


def test_captions_say_what_the_average_covers_and_what_was_skipped(finished):
    work, _ = finished
    voc = (work / "results/tables/voc_auc.md").read_text().split("\n\n")[0]
    assert "'Average' covers" in voc and "of the 20 classes" in voc
    assert "0 image(s) skipped as unreadable." in voc
    audio = (work / "results/tables/audio_auc.md").read_text().split("\n\n")[0]
    assert "'Average' covers 4 of the 4 tags (" in audio
