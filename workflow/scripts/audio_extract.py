"""Unpack the verified ESC-50 archive (a checkpoint: the clips are listed afterwards)."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import zipfile
from pathlib import Path

out = Path(snakemake.output[0])
out.mkdir(parents=True, exist_ok=True)
with zipfile.ZipFile(snakemake.input[0]) as z:
    z.extractall(out)
metas = sorted(out.glob("*/meta/esc50.csv"))
if not metas:
    raise ValueError(f"{snakemake.input[0]} holds no <folder>/meta/esc50.csv: not ESC-50")
log.info("extracted %s into %s", snakemake.input[0], metas[0].parent.parent)
