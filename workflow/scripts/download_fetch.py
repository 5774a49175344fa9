"""Fetch one public file into resources/ via kclf_workflow.download (cache, mirror, URL)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
import sys
from pathlib import Path

from kclf_workflow.download import DownloadError, check_md5, fetch

p = snakemake.params
out = Path(snakemake.output[0])
mirror = p.mirror if p.mirror and Path(p.mirror).is_dir() else None
try:
    path = fetch(
        p.url,
        p.sha256,
        cache_dir=out.parent,
        filename=out.name,
        mirror=mirror,
        mirror_relpath=p.mirror_relpath,
    )
    if "md5" in p.keys():
        check_md5(path, p.md5, p.url)
except DownloadError as err:
    logging.error("%s", err)
    sys.exit(f"download failed: {err}")
