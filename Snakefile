# kclf: reproduce the kernel probabilistic classifiers' papers end to end.
# Run `snakemake --cores N`; see README.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/download.smk"
include: "workflow/rules/manifest.smk"
include: "workflow/rules/lspc_toy.smk"
include: "workflow/rules/voc.smk"
include: "workflow/rules/scene.smk"
include: "workflow/rules/multilabel.smk"
include: "workflow/rules/audio.smk"
include: "workflow/rules/mgpc.smk"
include: "workflow/rules/ida.smk"
include: "workflow/rules/multiclass.smk"
include: "workflow/rules/benchmark.smk"
include: "workflow/rules/provenance.smk"


rule all:
    default_target: True
    input:
        FINAL_OUTPUTS,
