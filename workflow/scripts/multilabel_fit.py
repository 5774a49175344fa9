from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
import warnings

from kclf_workflow.experiments.multilabel import fit_method
from kclf_workflow.files import save_npz
from kclf_workflow.readers import load_npz
from kclf_workflow.records import write_records

warnings.simplefilter("default")
data = load_npz(snakemake.input[0])
rows, preds = fit_method(
    data,
    snakemake.wildcards.dataset,
    snakemake.wildcards.method,
    snakemake.params.cfg,
    snakemake.params.seed,
    n_bins=snakemake.params.n_bins,
)
write_records(rows, snakemake.output.records)
save_npz(snakemake.output.predictions, **preds)
logging.info("%d records", len(rows))
