from _joblog import to_rule_log

to_rule_log(snakemake)


import numpy as np

from kclf.repro.reports.multilabel import toy_figure

with (
    np.load(snakemake.input.data) as d,
    np.load(snakemake.input.ilr) as a,
    np.load(snakemake.input.corrlog) as b,
):
    toy_figure(
        d["Xt_0"], d["Yt_0"], a["Yp_0"], b["Yp_0"], snakemake.params.shift, snakemake.output[0]
    )
