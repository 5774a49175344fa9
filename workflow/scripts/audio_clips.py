"""The clip list of the experiment (ids, paths, durations, tags): load the collection's
metadata, apply the paper's selection; the clips listed but missing on disk (dropped with
missing_files: drop) are named in the log and in dropped.txt."""

from _joblog import to_rule_log

log = to_rule_log(snakemake)

from pathlib import Path

import pandas as pd

from kclf.repro.datasets.audio_collections import load_collection, select_clips
from kclf.repro.records import atomic_write

p = snakemake.params
dropped = []
df = load_collection(p.layout, p.root, missing=p.missing, dropped=dropped)
for path in dropped:
    log.warning("dropped (listed in the metadata, missing on disk): %s", path)
sel = p.selection
clips, tags = select_clips(df, sel["n_top_tags"], sel["min_seconds"], sel["max_seconds"])
log.info(
    "%s: %d clips listed, %d dropped as missing, %d selected, %d tags",
    p.root,
    len(df) + len(dropped),
    len(dropped),
    len(clips),
    len(tags),
)
if len(clips) < 4:
    raise ValueError(f"only {len(clips)} clips of {p.root} pass the selection {sel}")
out = pd.DataFrame(
    {
        "id": clips["id"],
        "path": clips["path"],
        "duration": clips["duration"],
        "tags": [" ".join(t) for t in clips["tags"]],
    }
)
atomic_write(snakemake.output.clips, lambda f: out.to_csv(f, index=False))
atomic_write(snakemake.output.tags, lambda f: Path(f).write_text("\n".join(tags) + "\n"))
atomic_write(
    snakemake.output.dropped, lambda f: Path(f).write_text("".join(d + "\n" for d in dropped))
)
