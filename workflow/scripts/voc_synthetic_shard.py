from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf.datasets.synthetic_voc import write_images
from kclf.download import file_sha256
from kclf.records import atomic_write

p = snakemake.params
s = p.synthetic
paths = write_images(
    p.root,
    p.ids,
    p.classes,
    p.seed,
    tuple(s["size"]),
    s["max_objects"],
    s["difficult_fraction"],
    s["grey_fraction"],
    s["cmyk_fraction"],
    s["png_fraction"],
)
lines = [f"{i}\t{path}\t{file_sha256(path)}" for i, path in zip(p.ids, paths)]
text = "image_id\tpath\tsha256\n" + "".join(line + "\n" for line in lines)
atomic_write(snakemake.output[0], lambda tmp: open(tmp, "w").write(text))
logging.info("%d generated images in %s", len(paths), p.root)
