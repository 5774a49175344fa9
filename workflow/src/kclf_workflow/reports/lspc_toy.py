"""Table and Figure 1 (a), (b) of the LSPC toy experiment, and its calibration companions
(table of log loss / Brier / ECE on the test sets and a reliability diagram)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..datasets import lspc_toy
from ..methods import family_methods
from ..readers import load_npz
from ..records import atomic_write, read_records
from .calibration import reliability_figure, write_calibration_table
from .figures import save_figure, subplots
from .palette import style
from .tables import (
    summarize,
    variant_note,
    wide_table,
    write_table,
)

METRICS = {
    "accuracy": ("accuracy (%)", True, 100.0, 1),
    "l1_posterior": ("L1 to true posterior", False, 1.0, 3),
    "kl_posterior": ("KL to true posterior", False, 1.0, 3),
}
NAMES = family_methods("lspc_toy")
ORDER = list(NAMES.values())


def _table(records):
    summaries, md, tex = [], {}, {}
    order = [m for m in ORDER if m in set(records["method"])]
    for metric, (label, higher, scale, digits) in METRICS.items():
        s = summarize(records, metric, row="task", higher_is_better=higher, average=False)
        s.insert(0, "metric", metric)
        summaries.append(s)
        md[label] = wide_table(s, "task", order, scale, digits, "md").iloc[0]
        tex[label] = wide_table(s, "task", order, scale, digits, "tex").iloc[0]
    import pandas as pd

    summary = pd.concat(summaries, ignore_index=True)
    md_t = pd.DataFrame(md)
    tex_t = pd.DataFrame(tex)
    md_t.index.name = tex_t.index.name = "method"
    return summary, md_t, tex_t


def calibration_caption(records):
    """Caption of the calibration table, with the share of LSPC''s repaired test rows."""
    n = records["trial"].nunique()
    text = (
        f"LSPC toy problem: quality of the test-set probabilities, mean ± std over {n} "
        "trials (log loss in nats after clipping exact 0/1 to 1e-15; Brier; ECE over "
        "equal-width and equal-mass bins of p(y=2|x))."
    )
    prime, new = NAMES["lspc_prime"], NAMES["lspc_new"]
    rep = records[(records["metric"] == "n_repaired") & (records["method"] == prime)]
    if not rep.empty:
        scored = records[(records["metric"] == "n_scored") & (records["method"] == prime)]
        k, total = int(rep["value"].sum()), int(scored["value"].sum())
        text += (
            f" The outputs of {prime} (Eq. 5) can be negative or exceed one, so its metrics "
            "are of its clipped-normalised outputs (LSPC-new's rounding, Eq. 6, of its raw "
            f"outputs): {k} of {total} test predictions were repaired."
        )
        acc = records[records["metric"] == "accuracy"]
        chosen = {m: acc[acc["method"] == m].set_index("trial")["params"] for m in (prime, new)}
        if not chosen[new].empty:
            same = int((chosen[prime] == chosen[new].reindex(chosen[prime].index)).sum())
            text += (
                f" CV chose the same sigma and lambda for {prime} and {new} in {same} of "
                f"{len(chosen[prime])} trials; there the repaired {prime} is {new}."
            )
    return text


def write_calibration(records, stem, reliability):
    """``<stem>_calibration.{csv,md}`` (the md with a caption) and the reliability diagram.

    Returns ``(csv_path, md_path)``.
    """
    csv_path, md_path = write_calibration_table(records, stem)
    text = f"{calibration_caption(records)}\n\n{Path(md_path).read_text(encoding='utf-8')}"
    atomic_write(md_path, lambda p: Path(p).write_text(text, encoding="utf-8"))
    reliability_figure(records, reliability, title="LSPC toy: reliability on the test sets")
    return csv_path, md_path


def write_report(record_files, curve_files, out):
    """Write ``out.csv/md/tex`` (table), ``<out.csv stem>_calibration.{csv,md}`` and the
    figures ``out.posterior``, ``out.alpha`` and ``out.reliability``."""
    records = read_records(record_files)
    summary, md_t, tex_t = _table(records)
    n = records["trial"].nunique()
    caption = (
        f"LSPC toy problem (LSPC-new paper, Sec. 3.1): mean (std) over {n} trials; "
        "sigma and lambda by cross-validation for each method; distances on a grid over [-5, 5]."
    ) + variant_note(records)
    write_table(str(out.csv)[:-4], summary, md_t, tex_t, caption)
    write_calibration(records, str(out.csv)[: -len(".csv")], out.reliability)

    curves = {}
    for f in curve_files:
        # <method>_<first>-<last>_curves.npz (one chunk of trials) or <method>_curves.npz
        key = re.sub(r"(_\d+-\d+)?_curves\.npz$", "", str(f).rsplit("/", 1)[-1])
        curves[key] = load_npz(f, "curves archive")
    grid = next(iter(curves.values()))["grid"]
    fig, ax = subplots(figsize=(6, 4))
    ax.plot(grid, lspc_toy.true_posterior(grid)[:, 0], "k-", lw=2, label="true")
    lines = {"lspc_new": "-", "lspc": "--", "lspc_prime": ":"}
    for key, name in NAMES.items():
        if key in curves:
            ax.plot(grid, curves[key]["p1"], lines[key], color=style(name).color, label=name)
    ax.axhline(0, color="0.7", lw=0.5)
    ax.set(xlabel="x", ylabel="p(y=1 | x)", title="Class-posterior estimates (trial 0)")
    ax.legend()
    save_figure(fig, out.posterior)

    fig, ax = subplots(figsize=(6, 4))
    for key, line in (("lspc", "-"), ("lspc_new", ":")):
        if key not in curves:
            continue
        c = curves[key]
        ax.plot(
            np.arange(1, c["alpha1"].size + 1),
            c["alpha1"],
            line,
            color=style(NAMES[key]).color,
            label=f"{NAMES[key]}'s CV choice",
        )
    ax.axhline(0, color="k", lw=0.5)
    ax.set(
        xlabel="training samples sorted by x",
        ylabel=r"$\tilde\alpha_1$",
        title="Unrounded parameters (trial 0)",
    )
    ax.legend()
    save_figure(fig, out.alpha)
