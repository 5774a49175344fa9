"""The split of the KEEL suite on which the next default is decided.

The defaults were last chosen on :func:`kclf_workflow.experiments.benchmark.tuning_half`,
whose report half has since been looked at; the next default is chosen and decided on a
fresh split, drawn here from the benchmark block's ``decision_split_seed`` alone (not the
config's ``seed``: a change of the run's seed leaves the hold-out where it is).  The rule
is written on the benchmark page (docs/user_guide/benchmark.md, "The rule for the next
default").
"""

from __future__ import annotations

from ..datasets import keel
from ..seeding import rng_for

#: the seed of the split (the schema's default of ``benchmark.decision_split_seed``)
DECISION_SPLIT_SEED = 20261128


def decision_split(seed=DECISION_SPLIT_SEED):
    """``(choose, decide)``: the two halves of the 43 KEEL sets, each sorted.

    Per task (the 26 two-class sets, the 17 others) the sets in the order of a permutation
    drawn from ``rng_for(seed, "benchmark", "decision split", task)``; ``choose`` takes the
    first half rounded down (13 two-class, 8 multi-class sets), ``decide`` the rest (13 and
    9): the half that decides holds the larger share, and both halves every kind of set."""
    choose, decide = [], []
    for task, names in (("binary", keel.BINARY), ("multiclass", keel.MULTICLASS)):
        order = rng_for(seed, "benchmark", "decision split", task).permutation(len(names))
        cut = len(names) // 2
        choose += [names[i] for i in order[:cut]]
        decide += [names[i] for i in order[cut:]]
    return sorted(choose), sorted(decide)
