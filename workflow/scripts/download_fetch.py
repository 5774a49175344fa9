"""Fetch one public file into resources/ via kclf.repro.download (cache, mirror, URL)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
import sys
from pathlib import Path

from kclf.repro.download import DownloadError, fetch

p = snakemake.params
out = Path(snakemake.output[0])
try:
    fetch(
        p.url,
        p.sha256,
        cache_dir=out.parent,
        filename=out.name,
        mirror=p.mirror,
        mirror_relpath=p.mirror_relpath,
    )
except DownloadError as err:
    logging.error("%s", err)
    sys.exit(f"download failed: {err}")
