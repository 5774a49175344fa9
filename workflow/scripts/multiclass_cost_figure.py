from _joblog import to_rule_log

to_rule_log(snakemake)

import pandas as pd

from kclf_workflow.readers import reading
from kclf_workflow.reports.multiclass import cost_figure

with reading(snakemake.input[0], "cost table"):
    df = pd.read_csv(snakemake.input[0])
cost_figure(df, snakemake.output[0])
