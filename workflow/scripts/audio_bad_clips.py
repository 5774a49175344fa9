"""List the clips left out as undecodable or unusable (empty when none)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
from pathlib import Path

import numpy as np

from kclf_workflow.files import atomic_write
from kclf_workflow.readers import reading

lines = []
for shard in snakemake.input:
    with reading(shard, "HMM shard"), np.load(shard, allow_pickle=False) as z:
        lines += z["bad"].astype(str).tolist()
atomic_write(snakemake.output[0], lambda f: Path(f).write_text("".join(s + "\n" for s in lines)))
logging.info("%d bad clips", len(lines))
