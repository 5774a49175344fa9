"""Row block r of the cross log-likelihood matrix: its clips against every clip's HMM, or
(audio.kernel.landmarks) against the landmark clips' HMMs and back."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf_workflow.files import save_npz
from kclf_workflow.shards.audio import loglik_rows

p = snakemake.params
out = loglik_rows(
    snakemake.input,
    int(snakemake.wildcards.r),
    p.n_shards,
    landmarks=getattr(p, "landmarks", None),
    seed=getattr(p, "seed", None),
)
save_npz(snakemake.output[0], **out)
logging.info("%d rows x %d models", out["rows"].size, out["L"].shape[1])
