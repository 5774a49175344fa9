from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
import tarfile
from pathlib import Path

from kclf_workflow.files import atomic_directory

out = Path(snakemake.output[0])
with tarfile.open(snakemake.input[0]) as tar:
    atomic_directory(out, lambda tmp: tar.extractall(tmp, filter="data"))
logging.info("extracted %s into %s", snakemake.input[0], out)
