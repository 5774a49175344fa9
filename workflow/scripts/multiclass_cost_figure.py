from _joblog import to_rule_log

to_rule_log(snakemake)


import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from kclf.repro.readers import reading
from kclf.repro.reports.multiclass import plot_cost  # noqa: E402
from kclf.repro.reports.tables import save_figure  # noqa: E402

with reading(snakemake.input[0], "cost table"):
    df = pd.read_csv(snakemake.input[0])
fig, ax = plt.subplots(figsize=(5.5, 4))
plot_cost(df, ax)
save_figure(fig, snakemake.output[0])
