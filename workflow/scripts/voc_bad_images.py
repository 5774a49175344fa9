from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf_workflow.files import atomic_write
from kclf_workflow.shards.images import load_shard

bad = sorted(b for path in snakemake.input for b in load_shard(path)["bad"])
text = "# images left out (skip_bad_images: true): path<TAB>reason\n"
text += "".join(f"{path}\t{reason}\n" for path, reason in bad)
atomic_write(snakemake.output[0], lambda tmp: open(tmp, "w").write(text))
for path, reason in bad:
    logging.warning("left out %s: %s", path, reason)
logging.info("%d bad images", len(bad))
