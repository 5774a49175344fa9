"""Generated clips in the Freesound-style layout (the offline stand-in for Freesound)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf.datasets.synthetic_audio import make_synthetic_collection

s = snakemake.params.synthetic
meta = make_synthetic_collection(
    snakemake.params.root,
    s["n_clips"],
    seed=snakemake.params.seed,
    duration_range=(s["min_seconds"], s["max_seconds"]),
)
logging.info(
    "%d clips; sample rates %s; channels %s; subtypes %s",
    len(meta),
    meta["sample_rate"].value_counts().to_dict(),
    meta["channels"].value_counts().to_dict(),
    meta["subtype"].value_counts().to_dict(),
)
