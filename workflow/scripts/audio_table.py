"""Table 2 of the LSPC-new paper, its figure, calibration and time tables
(:func:`kclf_workflow.reports.audio.write_audio_report`)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

from kclf_workflow.records import read_records
from kclf_workflow.reports.audio import write_audio_report

i, o = snakemake.input, snakemake.output
write_audio_report(
    read_records(i.records),
    str(o.csv)[: -len(".csv")],
    dataset=snakemake.params.dataset,
    methods=snakemake.params.methods,
    kernel_summary=i.kernel_summary,
    tags_file=i.tags,
    dropped_file=i.dropped,
    bad_file=i.bad,
    figure=o.figure,
    reliability=o.reliability,
    reference=i.reference[0] if i.reference else None,
)
