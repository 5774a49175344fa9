"""The clip list of the experiment: load the collection, apply the paper's selection."""

from _joblog import to_rule_log

to_rule_log(snakemake)

import logging
import zipfile
from pathlib import Path

import pandas as pd

from kclf.datasets.freesound import load_collection, select_clips
from kclf.records import atomic_write

p = snakemake.params
source, root = p.source, Path(p.root)
if source == "esc50" and snakemake.input:  # the verified GitHub archive: unpack once
    extract = Path(p.extract_dir)
    if not any(extract.glob("*/meta/esc50.csv")):
        with zipfile.ZipFile(snakemake.input[0]) as z:
            z.extractall(extract)
    root = next(extract.glob("*/meta/esc50.csv")).parent.parent
layout = "freesound" if source == "synthetic" else source
df = load_collection(layout, root, missing=p.missing)
sel = p.selection
clips, tags = select_clips(df, sel["n_top_tags"], sel["min_seconds"], sel["max_seconds"])
logging.info("%s: %d clips, %d selected, %d tags", root, len(df), len(clips), len(tags))
if len(clips) < 4:
    raise ValueError(f"only {len(clips)} clips of {root} pass the selection {sel}")
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
