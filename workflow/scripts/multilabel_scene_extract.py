"""MULAN scene's two ARFF files out of the downloaded scene.rar, verified by SHA-256."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
import tempfile
from pathlib import Path

from kclf_workflow.datasets.mulan import SCENE_FILES, extract_rar, find_scene_root, verify_scene
from kclf_workflow.files import atomic_write

out = Path(snakemake.output.train).parent
with tempfile.TemporaryDirectory(dir=out.parent if out.parent.is_dir() else None) as tmp:
    root = verify_scene(find_scene_root(extract_rar(snakemake.input[0], tmp)))
    for name, dest in zip(SCENE_FILES, (snakemake.output.train, snakemake.output.test)):
        atomic_write(dest, lambda f, src=root / name: Path(f).write_bytes(src.read_bytes()))
logging.info("scene extracted from %s and verified", snakemake.input[0])
