from _joblog import to_rule_log

to_rule_log(snakemake)


from kclf_workflow.readers import load_npz, reading
from kclf_workflow.reports.multilabel import toy_figure

d = load_npz(snakemake.input.data)
a = load_npz(snakemake.input.ilr, "predictions archive")
b = load_npz(snakemake.input.corrlog, "predictions archive")
with reading(snakemake.input.data, "data archive"):
    Xt, Yt = d["Xt_0"], d["Yt_0"]
with reading(snakemake.input.ilr, "predictions archive"):
    ilr = a["Yp_0"]
with reading(snakemake.input.corrlog, "predictions archive"):
    corrlog = b["Yp_0"]
toy_figure(Xt, Yt, ilr, corrlog, snakemake.params.shift, snakemake.output[0])
