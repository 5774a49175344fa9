"""IDA error and time tables and the error dot plot, from records."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from pathlib import Path

import numpy as np

from kclf.repro.reports.ida import write_report

inp, p = snakemake.input, snakemake.params
base, from_asc = {}, {}
for path in inp.data:  # results/data/ida/<dataset>/<chunk>.npz
    name = Path(path).parent.name
    with np.load(path) as f:
        origin = str(f["origin"]).split(" (realisation ")[0]
        base.setdefault(name, origin)
        from_asc.setdefault(name, []).extend(int(r) for r in f["from_asc"])
origins = {
    name: text
    + (
        f" (realisation {', '.join(map(str, sorted(from_asc[name])))} from the IDA split files)"
        if from_asc[name]
        else ""
    )
    for name, text in base.items()
}
summary, agree = write_report(
    inp.records,
    inp.reference_error[0] if inp.reference_error else None,
    inp.reference_time[0] if inp.reference_time else None,
    origins,
    snakemake.output,
    p.methods,
    folds=p.folds,
    n_select=p.n_select,
    user=p.user,
)
log.info("\n%s\n%s", summary.to_string(), agree.to_string())
