"""One colour and marker per method (kclf_workflow.reports.palette), the same in every
figure: every registered method has its style, a method named otherwise in another
family has the same one, and the critical-difference diagrams draw each method in it in
every panel."""

import itertools

import numpy as np
import pandas as pd
from matplotlib.colors import to_rgba

from kclf_workflow.methods import REGISTRY
from kclf_workflow.reports import benchmark as rep
from kclf_workflow.reports import palette
from kclf_workflow.reports.palette import ALIASES, STYLES, canonical, style


def test_every_registered_method_has_a_style_of_its_own_table():
    for family, table in REGISTRY.items():
        for key, spec in table.items():
            assert canonical(spec.name) in STYLES, (family, spec.name)
            assert style(key) == style(spec.name), (family, key)
        # within a family no two methods look alike
        looks = [style(s.name) for s in table.values()]
        assert len(set(looks)) == len(looks), family


def test_the_styles_are_distinct_and_the_aliases_name_styled_methods():
    colours = [s.color for s in STYLES.values()]
    assert len(set(colours)) == len(colours)
    assert set(ALIASES.values()) <= set(STYLES) and not set(ALIASES) & set(STYLES)
    # the same method across families: one style
    assert style("SVM") == style("SVC (one-vs-one)") == style("svc") == style("SVC")
    assert style("kLOGREG pairwise") == style("klr") == style("KLR")
    assert style("MEP") == style("MGPC-EP") and style("sklearn GPC") == style("GPC")


def test_a_config_key_means_the_same_method_in_every_family():
    keys = {}
    for table in REGISTRY.values():
        for key, spec in table.items():
            keys.setdefault(key, set()).add(canonical(spec.name))
    assert all(len(names) == 1 for names in keys.values()), keys


def test_an_unknown_name_gets_a_fixed_spare_style():
    assert style("A new peer") == style("A new peer") in palette.SPARE
    assert style("A new peer") not in STYLES.values()


def _records(rows):
    return pd.DataFrame(
        [
            {
                "dataset": d,
                "task": task,
                "method": m,
                "trial": k,
                "metric": metric,
                "value": v,
                "fit_seconds": 1.0,
                "params": "{}",
            }
            for d, task, m, k, metric, v in rows
        ]
    )


def test_a_method_keeps_its_colour_in_every_panel_of_the_diagrams(tmp_path, monkeypatch):
    """The figure's panels (error, AUC, log loss, Brier, ECE) rank the methods differently; each
    method's label, elbow and marker are its palette colour in all of them."""
    rng = np.random.default_rng(0)
    methods = ["LSPC-new", "KLR", "SVC", "LR"]
    rows = []
    for d in range(6):
        for m, k in itertools.product(methods, range(2)):
            for metric in rep.SCORES:
                rows.append((f"s{d}", "binary", m, k, metric, float(rng.uniform(1, 50))))
    folds = rep.fold_table(_records(rows))
    tasks = {f"s{d}": "binary" for d in range(6)}
    drawn = {}
    monkeypatch.setattr(rep, "save_figure", lambda fig, path: drawn.setdefault("fig", fig))
    rep.cd_figure(folds, tasks, methods, "binary", tmp_path / "cd.png")
    panels = [ax for ax in drawn["fig"].axes if ax.get_title()]
    assert len(panels) == len(rep.RANKED)
    for ax in panels:
        labels = {t.get_text(): t.get_color() for t in ax.texts}
        for m in methods:
            (text,) = [t for t in labels if m in t.split(" ") or t.startswith(m + " ")]
            assert to_rgba(labels[text]) == to_rgba(style(m).color), (ax.get_title(), m)
        # one visible marker per method, in its colour (scikit-posthocs' own are size 0)
        shown = [c for c in ax.collections if len(c.get_offsets()) and c.get_sizes().max() > 0]
        colours = sorted(tuple(c.get_facecolor()[0]) for c in shown)
        assert colours == sorted(to_rgba(style(m).color) for m in methods)
