from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf_workflow.datasets.synthetic_voc import write_image_sets

p = snakemake.params
written = write_image_sets(p.root, p.ids, p.classes, p.image_set)
logging.info("%d label files for %d images", len(written), len(p.ids))
