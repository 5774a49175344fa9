"""Assemble the row blocks, D -> K = exp(-D / tau), symmetry check, PSD projection (per
tau of audio.kernel.tau_factors for the fits' width search); with
audio.kernel.landmarks the landmark columns -> Nystroem features (the labels are not read
here: a tag edit reruns the fits, never the kernel)."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import json
import logging
from pathlib import Path

from kclf_workflow.files import atomic_write, save_npz
from kclf_workflow.shards.audio import assemble_kernel

p = snakemake.params
arrays, summary = assemble_kernel(
    snakemake.input.shards,
    snakemake.input.rows,
    tau=p.tau,
    landmarks=getattr(p, "landmarks", None),
    seed=getattr(p, "seed", None),
    tau_factors=getattr(p, "tau_factors", None),
)
save_npz(snakemake.output.kernel, **arrays)
atomic_write(snakemake.output.summary, lambda f: Path(f).write_text(json.dumps(summary, indent=1)))
logging.info("%s", summary)
