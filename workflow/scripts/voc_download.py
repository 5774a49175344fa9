from _joblog import to_rule_log

to_rule_log(snakemake)

import hashlib
import logging
from pathlib import Path

from kclf.repro.download import DownloadError, fetch

p = snakemake.params
out = Path(snakemake.output[0])
mirror = p.mirror if p.mirror and Path(p.mirror).is_dir() else None
# The PASCAL site publishes no SHA-256; torchvision's md5 is checked when sha256 is null.
path = fetch(
    p.url,
    p.sha256 or "print",
    cache_dir=out.parent,
    mirror=mirror,
    mirror_relpath=p.mirror_relpath,
    filename=out.name,
)
if p.md5:
    h = hashlib.md5()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() != p.md5:
        Path(path).unlink()
        raise DownloadError(
            f"checksum mismatch for {p.url}: expected md5 {p.md5}, got {h.hexdigest()} "
            "(file deleted)"
        )
logging.info("verified %s", path)
