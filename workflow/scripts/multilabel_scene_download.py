from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
from pathlib import Path

from kclf.repro.datasets.mulan import fetch_scene

root = fetch_scene(snakemake.params.cache)
out = Path(snakemake.output.train).parent
out.mkdir(parents=True, exist_ok=True)
for name in ("scene-train.arff", "scene-test.arff"):
    if (root / name).resolve() != (out / name).resolve():
        (out / name).write_bytes((root / name).read_bytes())
logging.info("scene verified in %s", root)
