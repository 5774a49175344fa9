from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
import tarfile
from pathlib import Path

out = Path(snakemake.output[0])
out.mkdir(parents=True, exist_ok=True)
with tarfile.open(snakemake.input[0]) as tar:
    tar.extractall(out, filter="data")
logging.info("extracted %s into %s", snakemake.input[0], out)
