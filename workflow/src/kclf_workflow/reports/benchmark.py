"""The benchmark's tables and figures, from records only: the per-fold table, the average
ranks with the Friedman test and the Nemenyi critical-difference diagrams (Demšar 2006,
JMLR 7), beside them the pairwise Wilcoxon signed-rank tests with Holm's correction (whose
p-value of a pair does not depend on the other methods in the pool, Benavoli et al. 2016,
JMLR 17), the same ranks over the sets where every method fitted every training row, and
each paper method against its closest peer: win / tie / loss counts, the Wilcoxon test with
Holm's correction over the comparisons, and the Bayesian signed-rank test with a region of
practical equivalence (Benavoli et al. 2017, JMLR 18).

The rank statistics compare methods over data sets: a method's score on a set is its mean
over the set's folds, ranks are taken per set (1 = best, ties share the mean rank) and
averaged over the sets.  The sets are compared in groups: ``all`` (the methods run on every
set), ``binary`` and ``multiclass`` (the two-class and the other sets, with the methods
run on every set of the group).  The Friedman statistic and its p-value are
:func:`scipy.stats.friedmanchisquare`'s (with its correction for tied ranks); the Nemenyi
test and the diagrams are scikit-posthocs' (:func:`scikit_posthocs.posthoc_nemenyi_friedman`,
:func:`scikit_posthocs.critical_difference_diagram`); the pairwise Wilcoxon tests are
scikit-posthocs' :func:`scikit_posthocs.posthoc_wilcoxon` (``p_adjust="holm"``) and the
paper-vs-peer ones :func:`scipy.stats.wilcoxon` with statsmodels' Holm correction; the
Bayesian tests are baycomp's :class:`baycomp.SignedRankTest` on the set means, its Monte
Carlo draws seeded from the config, and, for the paper-vs-peer comparisons, baycomp's
:class:`baycomp.HierarchicalTest` on the fold scores (Corani et al. 2017, Machine Learning
106), its Stan sampler seeded from the config (:func:`hierarchical`).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import itertools
import json
import logging
import os
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from ..experiments.benchmark import LOG_LOSS_EPS
from ..files import atomic_write
from ..methods import specs
from ..records import read_records
from ..seeding import seed_for
from .figures import save_figure, subplots
from .palette import style
from .tables import md_escape, plain_label, tex_escape

_log = logging.getLogger(__name__)

#: the per-fold scores of the table ``benchmark.csv``, in its column order
#: (:func:`kclf_workflow.experiments.benchmark.scores`; ``n_clipped``: test rows whose
#: true class's probability the log loss clipped)
SCORES = ("error", "auc", "log_loss", "brier", "ece", "n_clipped", "seconds")
#: the scores ranked (the clipped rows and the seconds are reported, not ranked)
RANKED = ("error", "auc", "log_loss", "brier", "ece")
HIGHER_IS_BETTER = {
    "error": False,
    "auc": True,
    "log_loss": False,
    "brier": False,
    "ece": False,
    "n_clipped": False,
    "seconds": False,
}
LABELS = {
    "error": "error (%)",
    "auc": "AUC (%)",
    "log_loss": "log loss",
    "brier": "Brier",
    "ece": "ECE",
    "n_clipped": "clipped rows",
    "seconds": "seconds",
}
GROUPS = ("all", "binary", "multiclass")
#: the sets a rank table is over: as run, or only those where no method fitted a subsample
ROWS = ("as run", "every row")
ALPHA = 0.05
#: Monte Carlo draws of the Bayesian signed-rank test
NSAMPLES = 50000
#: the hierarchical test's Stan sampler: chains, and posterior draws per chain after the
#: warm-up (4 x 2,500 = 10,000 draws)
HIER_CHAINS = 4
HIER_NSAMPLES = 2500


def fold_table(records):
    """One row per (dataset, method, fold) with the columns ``dataset, method, fold`` and
    :data:`SCORES` (error and AUC in percent), sorted."""
    lacking = [s for s in SCORES if s not in set(records["metric"])]
    if lacking:
        raise ValueError(
            f"benchmark records lack the scores {', '.join(lacking)}: they were written "
            "before these were recorded; rerun the benchmark_fit jobs"
        )
    df = records[records["metric"].isin(SCORES)]
    wide = df.pivot_table(
        index=["dataset", "method", "trial"], columns="metric", values="value", aggfunc="first"
    )
    wide = wide.reindex(columns=list(SCORES)).reset_index().rename(columns={"trial": "fold"})
    wide.columns.name = None
    return wide.sort_values(["dataset", "method", "fold"], kind="stable").reset_index(drop=True)


def set_means(folds, metric):
    """(datasets x methods) mean of ``metric`` over each set's folds (NaN where a method
    did not run)."""
    return folds.pivot_table(index="dataset", columns="method", values=metric, aggfunc="mean")


def oriented(values, metric):
    """``values`` turned so that lower is better (AUC negated)."""
    return -values if HIGHER_IS_BETTER[metric] else values


def average_ranks(matrix, metric):
    """Per method, its rank averaged over the rows (sets) of ``matrix`` (sets x methods,
    complete): rank 1 the best, tied values sharing their mean rank."""
    ranks = stats.rankdata(oriented(np.asarray(matrix, dtype=float), metric), axis=1)
    return pd.Series(ranks.mean(axis=0), index=matrix.columns)


def friedman(matrix, metric):
    """``(average ranks, chi2, p, Iman-Davenport F, its p)`` of the Friedman test over the
    sets (rows) of ``matrix``: :func:`scipy.stats.friedmanchisquare` (Demšar's
    ``chi2_F = 12 N / (k (k + 1)) [sum_j R_j^2 - k (k + 1)^2 / 4]``, corrected for ties),
    and Iman and Davenport's ``F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F)`` on ``k - 1``
    and ``(k - 1)(N - 1)`` degrees of freedom (Demšar's recommended form).  With two
    methods (scipy's test takes three or more) the statistics are NaN: the pair's
    comparison is the signed-rank test of :func:`compare`."""
    values = oriented(np.asarray(matrix, dtype=float), metric)
    n, k = values.shape
    if k < 3:
        return average_ranks(matrix, metric), np.nan, np.nan, np.nan, np.nan
    chi2, p = stats.friedmanchisquare(*values.T)
    chi2, p = float(chi2), float(p)
    denom = n * (k - 1) - chi2
    f = (n - 1) * chi2 / denom if denom > 0 else np.inf
    p_f = float(stats.f.sf(f, k - 1, (k - 1) * (n - 1))) if np.isfinite(f) else 0.0
    return average_ranks(matrix, metric), chi2, p, float(f), p_f


def critical_difference(k, n, alpha=ALPHA):
    """Nemenyi's critical difference ``q_alpha sqrt(k (k + 1) / (6 N))`` of average ranks,
    ``q_alpha`` the studentized range quantile over ``sqrt 2`` (Demšar 2006, Sec. 3.2.2)."""
    q = stats.studentized_range.ppf(1.0 - alpha, k, np.inf) / np.sqrt(2.0)
    return float(q * np.sqrt(k * (k + 1) / (6.0 * n)))


def nemenyi(matrix, metric):
    """The Nemenyi p-values (methods x methods) of scikit-posthocs over the sets (rows)."""
    import scikit_posthocs as sp

    p = sp.posthoc_nemenyi_friedman(oriented(np.asarray(matrix, dtype=float), metric))
    p.index = p.columns = list(matrix.columns)
    return p


def wilcoxon_holm(matrix, metric):
    """(methods x methods) p-values of the pairwise Wilcoxon signed-rank tests over the sets
    (rows) of ``matrix``, Holm-adjusted over the ``k (k - 1) / 2`` pairs: scikit-posthocs'
    :func:`scikit_posthocs.posthoc_wilcoxon` with :func:`scipy.stats.wilcoxon`'s defaults
    (``zero_method="wilcox"``, ``method="auto"``; 1 on the diagonal)."""
    import scikit_posthocs as sp

    values = oriented(np.asarray(matrix, dtype=float), metric)
    long = pd.DataFrame(
        {
            "value": values.T.ravel(),
            "method": np.repeat(np.arange(values.shape[1]), values.shape[0]),
        }
    )
    with np.errstate(invalid="ignore", divide="ignore"):  # a pair with no difference: p = 1
        p = sp.posthoc_wilcoxon(long, val_col="value", group_col="method", p_adjust="holm")
    p = p.loc[range(values.shape[1]), range(values.shape[1])]
    p.index = p.columns = list(matrix.columns)
    return p


def wilcoxon_table(folds, tasks, methods):
    """Long table: per group and ranked metric, each pair of methods run on every set of the
    group (:func:`group_matrix`), its Holm-adjusted Wilcoxon p-value (:func:`wilcoxon_holm`)
    and the mean ranks of the two (groups with fewer than two sets or methods left out)."""
    rows = []
    for group, metric in itertools.product(GROUPS, RANKED):
        matrix = group_matrix(folds, metric, group, tasks, methods)
        n, k = matrix.shape
        if n < 2 or k < 2:
            continue
        p = wilcoxon_holm(matrix, metric)
        ranks = average_ranks(matrix, metric)
        for a, b in itertools.combinations(matrix.columns, 2):
            rows.append(
                {
                    "group": group,
                    "metric": metric,
                    "method": a,
                    "other": b,
                    "n_datasets": n,
                    "mean_rank_method": float(ranks[a]),
                    "mean_rank_other": float(ranks[b]),
                    "p_holm": float(p.loc[a, b]),
                }
            )
    columns = ["group", "metric", "method", "other", "n_datasets", "mean_rank_method",
               "mean_rank_other", "p_holm"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def group_matrix(folds, metric, group, tasks, methods):
    """The complete (sets x methods) matrix of one group: its sets (``tasks``: dataset ->
    ``"binary"`` / ``"multiclass"``), the methods of ``methods`` that ran on each of them."""
    means = set_means(folds, metric)
    sets = [d for d in means.index if group == "all" or tasks[d] == group]
    means = means.loc[sets]
    keep = [m for m in methods if m in means.columns and means[m].notna().all()]
    return means[keep]


def subsampled_fits(records):
    """The (set, method) pairs fitted on a subsample of the training rows on some fold (the
    means table's †; a scalable path on all rows, ‡, counts as every row), from the
    records' ``params.path``."""
    return {
        (dataset, method)
        for params, dataset, method in records[["params", "dataset", "method"]]
        .drop_duplicates()
        .itertuples(index=False)
        if json.loads(params).get("path", "exact") == "subsample"
    }


def every_row_sets(records):
    """The sets on which every method that ran fitted every training row of every fold
    (:func:`subsampled_fits` names none of them)."""
    subsampled = {dataset for dataset, _ in subsampled_fits(records)}
    return sorted(set(records["dataset"]) - subsampled)


def rank_table(folds, tasks, methods, alpha=ALPHA, full_sets=None):
    """Long table: per group, ranked metric and method its average rank and mean score,
    with the group's Friedman test, Iman-Davenport's F and Nemenyi's critical difference
    (groups with fewer than two sets or two methods are left out).  ``rows`` is "as run"
    (every set) and, when ``full_sets`` is given, "every row" (those sets only:
    :func:`every_row_sets`)."""
    rows = []
    parts = [("as run", folds)]
    if full_sets is not None:
        parts.append(("every row", folds[folds["dataset"].isin(full_sets)]))
    for (which, part), group, metric in itertools.product(parts, GROUPS, RANKED):
        matrix = group_matrix(part, metric, group, tasks, methods)
        n, k = matrix.shape
        if n < 2 or k < 2:
            continue
        ranks, chi2, p, f, p_f = friedman(matrix, metric)
        cd = critical_difference(k, n, alpha)
        for method in matrix.columns:
            rows.append(
                {
                    "rows": which,
                    "group": group,
                    "metric": metric,
                    "method": method,
                    "mean_rank": float(ranks[method]),
                    "mean": float(matrix[method].mean()),
                    "n_datasets": n,
                    "n_methods": k,
                    "friedman_chi2": chi2,
                    "friedman_p": p,
                    "iman_davenport_f": f,
                    "iman_davenport_p": p_f,
                    "nemenyi_cd": cd,
                }
            )
    return pd.DataFrame(rows)


def signed_rank(x, y, rope, random_state):
    """baycomp's Bayesian signed-rank test on per-set scores ``x`` and ``y`` (higher is
    better): ``(P(x better by more than rope), P(within rope), P(y better))``."""
    import baycomp

    p = baycomp.SignedRankTest.probs(
        np.asarray(x, dtype=float),
        np.asarray(y, dtype=float),
        rope=rope,
        nsamples=NSAMPLES,
        random_state=random_state,
    )
    return tuple(float(v) for v in p)


@contextlib.contextmanager
def _stan_seeded_in_a_scratch_folder(seed):
    """The conditions under which :func:`hierarchical` calls baycomp 1.0.3, whose
    ``HierarchicalTest.sample`` builds the Stan model without a seed (httpstan then seeds
    the sampler from the clock) and pickles its last posterior to ``last-sample.pickle`` in
    the working directory, reused on a later call whose data match whatever the seed and
    the draws: here ``stan.build`` takes ``random_seed=seed`` and the working directory is
    a temporary folder, deleted after.  An exclusive lock on a file in httpstan's cache
    (:func:`httpstan.cache.cache_directory`) keeps two processes from compiling the model
    into the same cache folder at once."""
    import httpstan.cache
    import stan

    cache = httpstan.cache.cache_directory()
    cache.mkdir(parents=True, exist_ok=True)
    build = stan.build
    with open(cache / "kclf-build.lock", "w") as lock, tempfile.TemporaryDirectory() as scratch:
        fcntl.lockf(lock, fcntl.LOCK_EX)  # a POSIX lock: Stan's forked workers do not hold it
        here = os.getcwd()
        stan.build = functools.partial(build, random_seed=seed)
        try:
            os.chdir(scratch)
            yield
        finally:
            os.chdir(here)
            stan.build = build


def hierarchical(x, y, rope, random_state):
    """baycomp's Bayesian hierarchical test (Corani et al. 2017) on fold scores ``x`` and
    ``y`` (sets x folds of one k-fold CV, higher is better): ``(P(x better by more than
    rope), P(within rope), P(y better))``, the shares of the posterior draws of the
    difference's mean on a new set (:data:`HIER_CHAINS` x :data:`HIER_NSAMPLES`) whose
    most probable region is each.  ``random_state`` seeds Stan's sampler and baycomp's own
    draws; NaNs without a set of two folds or more, or when the fold differences have no
    spread at all (baycomp scales by it).

    The Stan model compiles on a process's first call where httpstan's cache
    (``~/.cache/httpstan/<version>/models``, or under ``$XDG_CACHE_HOME``) does not hold it
    yet: locally, with the C++ compiler, no network."""
    import baycomp

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size == 0 or x.shape[1] < 2 or np.mean(np.std(y - x, axis=1)) == 0:
        return (np.nan, np.nan, np.nan)
    y = _spread_flat_sets(x, y, rope, random_state)
    with _stan_seeded_in_a_scratch_folder(random_state):
        p = baycomp.HierarchicalTest.probs(
            x, y, rope, runs=1, chains=HIER_CHAINS, nsamples=HIER_NSAMPLES,
            random_state=random_state,
        )  # fmt: skip
    return tuple(float(v) for v in p)


def _spread_flat_sets(x, y, rope, random_state):
    """``y`` with the fold differences ``y - x`` of every set where they have no spread
    (equal on every fold) spread by draws within the ROPE, mirrored so that the set's mean
    difference stays what it was.  baycomp 1.0.3 does the like itself before sampling
    (Stan's model needs a spread on every set), but its replacement fails on an odd number
    of folds (it mirrors ``n // 2`` draws into ``n - n // 2`` places) and sets the mean
    difference to 0; here the middle fold of an odd count keeps the mean."""
    diff = y - x
    flat = np.flatnonzero(np.var(diff, axis=1) == 0)
    if flat.size == 0:
        return y
    rng = np.random.RandomState(random_state)
    n = x.shape[1]
    y = y.copy()
    for i in flat:
        half = rng.uniform(-rope, rope, n // 2)
        y[i] = x[i] + diff[i].mean() + np.concatenate([half, np.zeros(n % 2), -half[::-1]])
    return y


def fold_scores(folds, method, peer, metric, sets):
    """(sets x folds) scores of ``method`` and of ``peer`` on ``sets`` (turned so that higher
    is better), over the sets where both hold the same folds, every one of them."""
    part = folds[folds["dataset"].isin(sets)]
    x, y = (
        part[part["method"] == m].pivot(index="dataset", columns="fold", values=metric)
        for m in (method, peer)
    )
    x, y = x.align(y, join="outer")
    keep = x.notna().all(axis=1) & y.notna().all(axis=1)
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    return sign * x[keep].to_numpy(), sign * y[keep].to_numpy()


def compare(folds, tasks, comparison, rope, seed, hierarchical_test=True, subsampled=()):
    """One paper-method-vs-peer statement: over the sets of the comparison's group where
    both ran, win / tie / loss counts of the method's mean score (a tie: within ``rope``),
    the Bayesian signed-rank probabilities and, on the fold scores, those of the
    hierarchical test (:func:`hierarchical`; NaN with ``hierarchical_test=False``);
    ``None`` when fewer than two sets have both.  With the comparison's ``rows`` at
    ``every_row``, only the sets where neither of the two is in ``subsampled`` (the
    (set, method) pairs of :func:`subsampled_fits`): both on every training row."""
    method, peer, metric, group = (comparison[k] for k in ("method", "peer", "metric", "sets"))
    rows = comparison.get("rows", "as_run")
    means = set_means(folds, metric)
    if method not in means or peer not in means:
        return None
    sets = [d for d in means.index if group == "all" or tasks[d] == group]
    if rows == "every_row":
        subsampled = set(subsampled)
        sets = [d for d in sets if (d, method) not in subsampled and (d, peer) not in subsampled]
    stream = (method, peer, metric, group) + (() if rows == "as_run" else (rows,))
    pair = means.loc[sets, [method, peer]].dropna()
    if len(pair) < 2:
        return None
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    x, y = sign * pair[method].to_numpy(), sign * pair[peer].to_numpy()
    d = x - y
    p_method, p_rope, p_peer = signed_rank(
        x, y, rope, seed_for(seed, "benchmark", "signed_rank", *stream)
    )
    with np.errstate(invalid="ignore", divide="ignore"):  # no difference at all: p = 1
        p_wilcoxon = float(stats.wilcoxon(x, y).pvalue)
    hier, seconds = (np.nan, np.nan, np.nan), 0.0
    if hierarchical_test:
        start = time.perf_counter()
        hier = hierarchical(
            *fold_scores(folds, method, peer, metric, list(pair.index)),
            rope,
            seed_for(seed, "benchmark", "hierarchical", *stream),
        )
        seconds = time.perf_counter() - start
        _log.info(
            "hierarchical test %s vs %s, %s, %s sets (%s): %.1f s",
            *(method, peer, metric, group, rows, seconds),
        )
    return {
        "method": method,
        "peer": peer,
        "metric": metric,
        "sets": group,
        "rows": rows,
        "n_datasets": len(pair),
        "wins": int(np.sum(d > rope)),
        "ties": int(np.sum(np.abs(d) <= rope)),
        "losses": int(np.sum(d < -rope)),
        "rope": float(rope),
        "mean_method": float(pair[method].mean()),
        "mean_peer": float(pair[peer].mean()),
        "p_method_better": p_method,
        "p_rope": p_rope,
        "p_peer_better": p_peer,
        "p_wilcoxon": p_wilcoxon,
        "p_hier_method_better": hier[0],
        "p_hier_rope": hier[1],
        "p_hier_peer_better": hier[2],
    }


def pair_table(folds, tasks, comparisons, ropes, seed, hierarchical_test=True, subsampled=()):
    """The rows of :func:`compare` (comparisons with fewer than two sets left out), with
    ``p_holm``: the Wilcoxon p-values Holm-adjusted over the comparisons in the table
    (:func:`statsmodels.stats.multitest.multipletests`)."""
    from statsmodels.stats.multitest import multipletests

    rows = [
        compare(folds, tasks, c, ropes[c["metric"]], seed, hierarchical_test, subsampled)
        for c in comparisons
    ]
    columns = [
        "method", "peer", "metric", "sets", "rows", "n_datasets", "wins", "ties", "losses", "rope",
        "mean_method", "mean_peer", "p_method_better", "p_rope", "p_peer_better",
        "p_wilcoxon", "p_holm", "p_hier_method_better", "p_hier_rope", "p_hier_peer_better",
    ]  # fmt: skip
    table = pd.DataFrame([r for r in rows if r is not None], columns=columns)
    if len(table):
        table["p_holm"] = multipletests(table["p_wilcoxon"].to_numpy(), method="holm")[1]
    return table


def statement(row):
    """One sentence of a comparison row, e.g. "LSPC-new vs KLR, AUC (%), all 43 sets:
    12 wins, 25 ties, 6 losses (ROPE 1); P(LSPC-new better) 0.02, P(equivalent) 0.90,
    P(KLR better) 0.08; Wilcoxon p 0.31 (Holm over the comparisons 0.93); hierarchical
    test on the folds: P(LSPC-new better) 0.01, P(equivalent) 0.95, P(KLR better) 0.04"."""
    return (
        f"{row.method} vs {row.peer}, {LABELS[row.metric]}, {row.sets} ({row.n_datasets} "
        f"sets{_rows_text(row)}): {_counted(row.wins, 'win')}, {_counted(row.ties, 'tie')}, "
        f"{_counted(row.losses, 'loss')} "
        f"(ROPE {row.rope:g}); "
        f"mean {row.mean_method:.4g} vs {row.mean_peer:.4g}; P({row.method} better) "
        f"{row.p_method_better:.3f}, P(equivalent) {row.p_rope:.3f}, P({row.peer} better) "
        f"{row.p_peer_better:.3f}; Wilcoxon p {row.p_wilcoxon:.3g} (Holm over the "
        f"comparisons {row.p_holm:.3g}); {_hier_text(row)}"
    )


def _counted(n, noun):
    return f"{n} {noun}" if n == 1 else f"{n} {noun}{'es' if noun.endswith('s') else 's'}"


def _rows_text(row):
    return ", both on every training row" if getattr(row, "rows", "as_run") == "every_row" else ""


def _hier_text(row):
    if np.isnan(row.p_hier_rope):
        return "hierarchical test on the folds not run"
    return (
        f"hierarchical test on the folds: P({row.method} better) "
        f"{row.p_hier_method_better:.3f}, P(equivalent) {row.p_hier_rope:.3f}, "
        f"P({row.peer} better) {row.p_hier_peer_better:.3f}"
    )


def _sizes_note(records):
    """Caption text: which (set, method) fitted on a subsample or a scalable path."""
    paths = {}
    for params, dataset, method in (
        records[["params", "dataset", "method"]].drop_duplicates().itertuples(index=False)
    ):
        p = json.loads(params)
        if p.get("path", "exact") != "exact":
            key = (p["path"], int(p.get("n_train", 0)) if p["path"] == "subsample" else None)
            paths.setdefault(key, set()).add((dataset, method))
    parts = []
    for (path, n), pairs in sorted(paths.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        methods = sorted({m for _, m in pairs})
        sets = sorted({d for d, _ in pairs})
        what = (
            f"a seeded stratified subsample of {n} training rows"
            if path == "subsample"
            else f"all training rows, {path}"
        )
        parts.append(f"{', '.join(methods)} on {', '.join(sets)}: {what}")
    return "; ".join(parts)


def means_table(folds, records, tasks, methods):
    """Long table: per set and method the mean (std) of every score over the folds, the
    test rows the log loss clipped (``n_clipped``, over all folds), the training rows used
    and the path (exact, scalable, subsample)."""
    info = {}
    for params, dataset, method in (
        records[["params", "dataset", "method"]].drop_duplicates().itertuples(index=False)
    ):
        p = json.loads(params)
        n_train, path = info.get((dataset, method), (set(), set()))
        n_train.add(int(p.get("n_train", 0)))
        path.add(str(p.get("path", "exact")))
        info[(dataset, method)] = (n_train, path)
    g = folds.groupby(["dataset", "method"], sort=False)
    long = []
    for (dataset, method), part in g:
        n_train, path = info.get((dataset, method), ({0}, {"exact"}))
        row = {
            "dataset": dataset,
            "task": tasks[dataset],
            "method": method,
            "n_folds": len(part),
            "n_train_max": max(n_train),
            "path": "+".join(sorted(path)),
            "n_clipped": int(part["n_clipped"].sum()),
        }
        for s in SCORES:
            row[f"{s}_mean"] = float(part[s].mean())
            row[f"{s}_std"] = float(part[s].std(ddof=1)) if len(part) > 1 else 0.0
        long.append(row)
    long = pd.DataFrame(long)
    order = {m: i for i, m in enumerate(methods)}
    long = long.sort_values(
        ["dataset", "method"], key=lambda c: c.map(order) if c.name == "method" else c
    ).reset_index(drop=True)
    return long


def _marked(long, metric, markup):
    """(sets x methods) strings of ``metric``'s mean; the set's best in bold; a † on means
    of fits on a subsample, ‡ on the scalable paths; the log loss with the number of test
    rows it clipped in brackets where there are any."""
    cells = {}
    best = {}
    for dataset, part in long.groupby("dataset", sort=False):
        values = part.set_index("method")[f"{metric}_mean"]
        best[dataset] = values.max() if HIGHER_IS_BETTER[metric] else values.min()
    digits = 1 if metric in ("error", "auc") else 3
    for rec in long.itertuples(index=False):
        value = getattr(rec, f"{metric}_mean")
        text = f"{value:.{digits}f}"
        if np.isclose(value, best[rec.dataset], rtol=0, atol=0.5 * 10.0**-digits):
            text = f"**{text}**" if markup == "md" else rf"\textbf{{{text}}}"
        mark = "†" if "subsample" in rec.path else ("‡" if rec.path != "exact" else "")
        if mark and markup == "tex":
            mark = r"$^\dagger$" if mark == "†" else r"$^\ddagger$"
        if metric == "log_loss" and rec.n_clipped:
            mark += f" [{rec.n_clipped}]"
        cells.setdefault(rec.dataset, {})[rec.method] = text + mark
    methods = list(dict.fromkeys(long["method"]))
    table = pd.DataFrame.from_dict(cells, orient="index").reindex(columns=methods)
    table.index.name = "dataset"
    return table.fillna("–")


def _ranks_wide(ranks, group):
    part = ranks[ranks["group"] == group]
    table = part.pivot_table(index="method", columns="metric", values="mean_rank", sort=False)
    order = part.drop_duplicates("method")["method"].tolist()
    table = table.reindex(index=order, columns=[m for m in RANKED if m in table.columns])
    return table


def _friedman_line(ranks, group):
    part = ranks[ranks["group"] == group].drop_duplicates("metric")
    if part["friedman_chi2"].isna().all():
        return "not run (it takes three methods or more)"
    return "; ".join(
        f"{LABELS[r.metric]}: chi2 = {r.friedman_chi2:.2f}, p = {r.friedman_p:.2g} "
        f"(Iman-Davenport F = {r.iman_davenport_f:.2f}, p = {r.iman_davenport_p:.2g})"
        for r in part.itertuples(index=False)
    )


def no_diagram_note(group, n_sets, n_methods):
    """Why a group has no critical-difference diagram: a rank test needs two sets and two
    methods run on all of them."""
    return (
        f"No critical-difference diagram for the {group} sets: {n_sets} set(s) with "
        f"{n_methods} method(s) run on all of them; the rank test needs at least two of each."
    )


def _cd_bar(ax, start, cd):
    """The critical difference as a bar from the best rank, above the axis's tick labels
    (scikit-posthocs draws it across them)."""
    top = ax.get_ylim()[1]
    ax.set_ylim(top=top + 1.2)
    ax.plot([start, start + cd], [top + 0.8, top + 0.8], color="k", lw=2)
    ax.text(start + cd, top + 0.8, f"  CD = {cd:.2f}", ha="left", va="center", fontsize=9)


def cd_figure(folds, tasks, methods, group, path, alpha=ALPHA, source=""):
    """The critical-difference diagrams of one group, a panel per ranked metric
    (scikit-posthocs: crossbars join methods the Nemenyi test does not separate at
    ``alpha``; the bar above the axis is the critical difference); every method in its
    colour and marker in every panel (:mod:`kclf_workflow.reports.palette`)."""
    import scikit_posthocs as sp

    panels = []
    shape = (0, 0)
    for metric in RANKED:
        matrix = group_matrix(folds, metric, group, tasks, methods)
        shape = max(shape, matrix.shape)
        if matrix.shape[0] >= 2 and matrix.shape[1] >= 2:
            panels.append((metric, matrix))
    rows = max(len(panels), 1)
    fig, axes = subplots(rows, 1, figsize=(8, 2.6 * rows), squeeze=False)
    for ax, (metric, matrix) in zip(axes[:, 0], panels):
        ranks = average_ranks(matrix, metric)
        ranks.index = [plain_label(m) for m in ranks.index]
        p = nemenyi(matrix, metric)
        p.index = p.columns = list(ranks.index)
        n, k = matrix.shape
        looks = {m: style(m) for m in ranks.index}
        sp.critical_difference_diagram(
            ranks,
            p,
            ax=ax,
            alpha=alpha,
            color_palette={m: look.color for m, look in looks.items()},
            marker_props={"s": 0},  # each method's own marker, drawn below
        )
        for m, rank in ranks.items():
            ax.scatter(rank, 0, marker=looks[m].marker, color=looks[m].color, zorder=4, s=36)
        _cd_bar(ax, ranks.min(), critical_difference(k, n, alpha))
        ax.set_title(f"{LABELS[metric]}: average rank over {n} sets (1 = best)", fontsize=10)
    if not panels:
        note = no_diagram_note(group, *shape)
        axes[0, 0].text(0.5, 0.5, note, ha="center", va="center", wrap=True)
        axes[0, 0].set_axis_off()
    title = plain_label(f"Critical-difference diagrams, {group} sets. {source}")
    fig.suptitle(textwrap.fill(title, 120), fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)


def _wilcoxon_md(wilcoxon, protocol, origin):
    """The Markdown of :func:`wilcoxon_table`: per group and metric a square table of the
    Holm-adjusted p-values, the methods in the order of their mean rank, those under
    :data:`ALPHA` in bold."""
    md = [
        "Pairwise Wilcoxon signed-rank tests of the set means (scikit-posthocs, scipy's "
        "defaults), p-values Holm-adjusted over the pairs of each "
        f"table; bold: below {ALPHA:g}. Methods in the order of their average rank; the "
        f"methods run on every set of the group ({protocol}). Data: {origin}.",
    ]
    for (group, metric), part in wilcoxon.groupby(["group", "metric"], sort=False):
        ranks = dict(zip(part["method"], part["mean_rank_method"]))
        ranks.update(zip(part["other"], part["mean_rank_other"]))
        order = sorted(ranks, key=lambda m: (ranks[m], m))
        cell = {}
        for r in part.itertuples(index=False):
            text = f"{r.p_holm:.3g}"
            text = f"**{text}**" if r.p_holm < ALPHA else text
            cell[(r.method, r.other)] = cell[(r.other, r.method)] = text
        table = pd.DataFrame(
            [[cell.get((a, b), "–") for b in order] for a in order], index=order, columns=order
        )
        table.index.name = "method"
        md.append(
            f"\n### {group} sets ({int(part['n_datasets'].iloc[0])}), {LABELS[metric]}\n\n"
            + table.rename(index=md_escape, columns=md_escape).to_markdown()
        )
    return "\n".join(md) + "\n"


def _write_text(path, text):
    atomic_write(Path(path), lambda p: Path(p).write_text(text, encoding="utf-8"))


def _tex(table, caption, label):
    table = table.rename(index=tex_escape, columns=tex_escape)
    if table.index.name is not None:
        table.index.name = tex_escape(table.index.name)
    return table.to_latex(escape=False, caption=tex_escape(caption), label=label)


def _hier_caption(run, folds_k):
    """The caption line of the hierarchical test's columns."""
    what = (
        "Columns p_hier_method_better / p_hier_rope / p_hier_peer_better: baycomp's Bayesian "
        f"hierarchical test (Corani et al. 2017) on the {folds_k} fold scores of every set "
        "where both ran, with the same ROPE, its Stan sampler seeded from the config "
        f"({HIER_CHAINS} chains x {HIER_NSAMPLES} draws): the posterior probabilities that "
        "the difference on a new set favours the method by more than the ROPE, lies within "
        "it, or favours the peer (they sum to 1); NaN where no set has two folds of both "
        "methods, or the fold differences of every set are all zero"
    )
    return what + ("." if run else "; not run for this report (hierarchical_test=False).")


def missing_note(methods, present):
    """Caption text naming the configured methods without records, and why (what a
    method's spec says it needs and this environment lacks, else "no records")."""
    notes = []
    for m in methods:
        if m not in present:
            method_spec = specs("benchmark").get(m)
            needs = method_spec.requires if method_spec is not None else None
            why = (needs() if needs is not None else None) or "no records"
            notes.append(f"{m} did not run ({why}).")
    return " ".join(notes)


def write_report(
    record_files,
    out,
    *,
    methods,
    sources,
    comparisons,
    ropes,
    seed,
    folds_k,
    inner_folds,
    hierarchical_test=True,
):
    """Every table and figure of the family (``out``: the rule's named outputs).

    ``sources``: dataset -> where it comes from (the captions name it); ``comparisons``:
    the paper-vs-peer statements (``method``, ``peer``, ``metric``, ``sets``); ``ropes``:
    metric -> ROPE (error and AUC in percentage points); ``hierarchical_test``: whether the
    paper-vs-peer table runs baycomp's hierarchical test (:func:`hierarchical`; the
    caption says when it did not)."""
    records = read_records(record_files)
    if records.empty:
        raise ValueError("benchmark: no records (every configured method was skipped)")
    folds = fold_table(records)
    tasks = records.groupby("dataset")["task"].first().to_dict()
    atomic_write(
        Path(out["table"]),
        lambda p: folds.to_csv(p, index=False, float_format="%.10g"),
    )
    present = [m for m in methods if m in set(folds["method"])]
    origin = "; ".join(dict.fromkeys(sources[d] for d in sorted(set(folds["dataset"]))))
    protocol = (
        f"seeded stratified {folds_k}-fold CV per set; every method's hyper-parameters by its "
        f"own search on the training fold ({inner_folds}-fold inner CV, or the marginal "
        "likelihood of the GP classifiers); categorical columns one-hot encoded and numeric "
        "ones standardised on the training fold"
    )
    sizes = _sizes_note(records)
    extra = missing_note(methods, present)
    # means per set
    long = means_table(folds, records, tasks, present)
    atomic_write(Path(out["means"]), lambda p: long.to_csv(p, index=False, float_format="%.6g"))
    md = [
        f"Mean over the folds per set ({protocol}). Best of a row in bold; † fitted on a "
        f"seeded stratified subsample of the training rows, ‡ a scalable path on all rows "
        f"({sizes or 'none'}). Log loss: the true class's probability clipped at "
        f"{LOG_LOSS_EPS:g}, in brackets the test rows clipped over the folds. {extra} "
        f"Data: {origin}.",
    ]
    tex = []
    for metric in (s for s in SCORES if s != "n_clipped"):
        table = _marked(long, metric, "md")
        md.append(
            f"\n### {LABELS[metric]}\n\n"
            + table.rename(index=md_escape, columns=md_escape).to_markdown()
        )
        tex.append(
            _tex(
                _marked(long, metric, "tex"),
                f"{LABELS[metric]}, mean over folds. Data: {origin}.",
                f"tab:benchmark_{metric}",
            )
        )
    _write_text(out["means_md"], "\n".join(md) + "\n")
    _write_text(out["means_tex"], "\n".join(tex))
    # ranks and Friedman
    full = every_row_sets(records)
    every = len(full) == folds["dataset"].nunique()
    ranks = rank_table(folds, tasks, present, full_sets=None if every else full)
    atomic_write(Path(out["ranks"]), lambda p: ranks.to_csv(p, index=False, float_format="%.6g"))
    again = (
        "every method fitted every training row of every set (no †), so the ranks over those "
        "sets are these"
        if every
        else "first over every set as run, then over the sets where every method fitted "
        f"every training row (no † in the means table; {len(full)} sets: "
        f"{', '.join(full) or 'none'})"
    )
    md = [
        "Average ranks over the sets (1 = best; a set's score is its mean over the folds; "
        f"ties share their mean rank), Friedman test per metric ({protocol}); {again}. "
        f"Data: {origin}.",
    ]
    tex = []
    for which, group in itertools.product(ROWS, GROUPS):
        part = ranks[(ranks["rows"] == which) & (ranks["group"] == group)] if len(ranks) else ranks
        if part.empty:
            continue
        n = int(part["n_datasets"].iloc[0])
        cd = float(part["nemenyi_cd"].iloc[0])
        sets = f"{group} sets" + (
            ", every method on every training row" if which != "as run" else ""
        )
        head = (
            f"{sets} ({n}); Nemenyi critical difference at {ALPHA:g}: {cd:.2f}. "
            f"Friedman: {_friedman_line(part, group)}"
        )
        shown = _ranks_wide(part, group).map(lambda v: f"{v:.2f}").rename(columns=LABELS)
        md.append(f"\n### {head}\n\n" + shown.rename(index=md_escape).to_markdown())
        label = group if which == "as run" else f"{group}_every_row"
        tex.append(_tex(shown, head, f"tab:benchmark_ranks_{label}"))
    _write_text(out["ranks_md"], "\n".join(md) + "\n")
    _write_text(out["ranks_tex"], "\n".join(tex))
    # pairwise Wilcoxon signed-rank tests, Holm-adjusted, beside the Nemenyi diagrams
    wilcoxon = wilcoxon_table(folds, tasks, present)
    atomic_write(
        Path(out["wilcoxon"]), lambda p: wilcoxon.to_csv(p, index=False, float_format="%.6g")
    )
    _write_text(out["wilcoxon_md"], _wilcoxon_md(wilcoxon, protocol, origin))
    # paper methods against their peers
    pairs = pair_table(
        folds, tasks, comparisons, ropes, seed, hierarchical_test, subsampled_fits(records)
    )
    atomic_write(Path(out["pairs"]), lambda p: pairs.to_csv(p, index=False, float_format="%.6g"))
    lines = [
        "Each paper method against its closest peer, over the sets where both ran: wins / "
        "ties / losses of the set means (a tie: a difference within the ROPE, the region of "
        "practical equivalence), the Bayesian signed-rank test (baycomp, "
        f"{NSAMPLES} seeded draws, prior 0.5): P(method better by more than the ROPE), "
        "P(within it), P(peer better), and the Wilcoxon signed-rank test of the set means "
        "(scipy) with its p-value Holm-adjusted over the comparisons listed. ROPE per metric: "
        + ", ".join(f"{LABELS[m]} {ropes[m]:g}" for m in RANKED)
        + f". Data: {origin}.",
        "",
        _hier_caption(hierarchical_test, folds_k),
        "",
    ]
    lines += [f"- {statement(r)}" for r in pairs.itertuples(index=False)]
    _write_text(out["pairs_md"], "\n".join(lines) + "\n")
    _write_text(out["pairs_tex"], _tex(pairs.set_index("method"), lines[0], "tab:benchmark_pairs"))
    for group in GROUPS:
        cd_figure(folds, tasks, present, group, out[f"cd_{group}"], source=f"Data: {origin}.")
    return folds, ranks, pairs
