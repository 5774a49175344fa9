"""The clip list of the experiment (ids, paths, durations, tags): load the collection's
metadata, apply the paper's selection; the clips listed but missing on disk (dropped with
missing_files: drop) are named in the log and in dropped.txt."""

from _joblog import to_rule_log

to_rule_log(snakemake)

from pathlib import Path

from kclf_workflow.datasets.audio_collections import experiment_clips, write_tag_file
from kclf_workflow.files import atomic_write

p, out = snakemake.params, snakemake.output
clips, tags, dropped, left_out = experiment_clips(p.layout, p.root, p.missing, p.selection)
atomic_write(out.clips, lambda f: clips.to_csv(f, index=False))
atomic_write(out.tags, lambda f: write_tag_file(f, tags, left_out, p.title))
atomic_write(out.dropped, lambda f: Path(f).write_text("".join(d + "\n" for d in dropped)))
