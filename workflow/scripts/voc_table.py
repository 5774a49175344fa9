"""Table 1 of the LSPC-new paper from records (VOC; MULAN scene with the same layout), the
paper's figures beside ours when a reference is given, the per-class figure, and the
calibration companions (kclf_workflow.reports.auc)."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from pathlib import Path

from kclf_workflow.readers import read_text
from kclf_workflow.reports.auc import write_auc_report

out, inp = snakemake.output, snakemake.input
notes = []
if "bad" in inp.keys():
    lines = read_text(inp.bad, "list").splitlines()
    bad = [line.split("\t")[0] for line in lines if line and not line.startswith("#")]
    notes.append(
        f"{len(bad)} image(s) skipped as unreadable"
        + (f" (listed in {Path(inp.bad).name})." if bad else ".")
    )
write_auc_report(
    inp.records,
    str(out.csv)[: -len(".csv")],
    out.figure,
    title=snakemake.params.title,
    reference=inp.reference[0] if inp.reference else None,
    reliability=out.reliability,
    methods=snakemake.params.methods,
    tasks=snakemake.params.tasks,
    notes=notes,
)
log.info("table %s from %d record files", out.csv, len(inp.records))
