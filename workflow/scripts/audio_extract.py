"""Unpack the verified ESC-50 archive (a checkpoint: the clips are listed afterwards)."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import zipfile
from pathlib import Path

from kclf_workflow.files import atomic_directory


def extract(tmp):
    with zipfile.ZipFile(snakemake.input[0]) as z:
        z.extractall(tmp)
    metas = sorted(Path(tmp).glob("*/meta/esc50.csv"))
    if not metas:
        raise ValueError(f"{snakemake.input[0]} holds no <folder>/meta/esc50.csv: not ESC-50")
    return metas[0].parent.parent.name


out = Path(snakemake.output[0])
found = []
atomic_directory(out, lambda tmp: found.append(extract(tmp)))
log.info("extracted %s into %s", snakemake.input[0], out / found[0])
