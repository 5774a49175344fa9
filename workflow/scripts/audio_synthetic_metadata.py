"""metadata.csv of the generated collection (Freesound-style layout), from the shards'
manifests."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

import pandas as pd

from kclf_workflow.files import atomic_write
from kclf_workflow.manifests import read_manifest

COLUMNS = ["id", "file", "tags", "duration", "sample_rate", "channels", "subtype"]
rows = [r for path in snakemake.input for r in read_manifest(path)]
meta = pd.DataFrame(rows, columns=COLUMNS).sort_values("id", kind="stable")
atomic_write(snakemake.output[0], lambda f: meta.to_csv(f, index=False))
log.info(
    "%d clips; sample rates %s; channels %s; subtypes %s",
    len(meta),
    meta["sample_rate"].value_counts().to_dict(),
    meta["channels"].value_counts().to_dict(),
    meta["subtype"].value_counts().to_dict(),
)
