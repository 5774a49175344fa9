# The IDA family's plan (kclf_workflow.plans.ida): realisations, trial chunks, the files a
# data job reads, the grids a selection or fit reads.
from kclf_workflow.plans.ida import IdaPlan

IDA = config["ida"]
IDA_MAT_CFG = IDA["benchmarks_mat"]
IDA_MAT = (
    download_file(
        "ida/benchmarks.mat",
        IDA_MAT_CFG["url"],
        IDA_MAT_CFG["sha256"],
        IDA_MAT_CFG["mirror_relpath"],
    )
    if IDA_MAT_CFG["use"]
    else []
)
IDA_MIRROR = mirror_file("ida")
IDA_USER = user_datasets("ida", IDA["datasets"]) if enabled("ida") else []
IDA_PLAN = checked(
    IdaPlan,
    IDA,
    user={d: USER_DATASETS[d] for d in IDA_USER},
    mirror=config.get("mirror"),
    benchmarks_mat=IDA_MAT or None,
    enabled=enabled("ida"),
)


def ida_sources(wildcards):
    name = wildcards.dataset
    files = user_files(name) if name in IDA_USER else []
    return IDA_PLAN.sources(name, wildcards.trials, files)
