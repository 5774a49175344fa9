# Config and input functions of the IDA family (workflow/rules/ida.smk).
from kclf.repro.datasets import breiman as _breiman
from kclf.repro.datasets import ida as _ida_data

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


def ida_realisations(dataset):
    """Realisations of `dataset`: ida.realisations, else the published count."""
    if IDA["realisations"] is not None:
        return IDA["realisations"]
    return _ida_data.PUBLISHED.get(dataset, _ida_data.EXTRA.get(dataset, (0, 0, 100)))[2]


IDA_CHUNKS = {d: trial_chunks(ida_realisations(d), IDA["trials_per_job"]) for d in IDA["datasets"]}
IDA_SELECT = f"0-{IDA['n_select'] - 1}"  # the realisations whose CV optimum enters the median
if enabled("ida"):
    for _d in IDA["datasets"]:
        if IDA["n_select"] > ida_realisations(_d):
            raise WorkflowError(
                f"invalid config: key 'ida.n_select': {IDA['n_select']} exceeds the "
                f"{ida_realisations(_d)} realisations of {_d} (ida.realisations)"
            )


def ida_sources(wildcards):
    """The files ida_data reads for a dataset and chunk (kclf.repro.experiments.ida.prepare's
    order of sources): benchmarks.mat; nothing for wdbc and generated sets; else the
    mirror's pattern set and the IDA split files of the chunk's realisations."""
    name = wildcards.dataset
    if IDA_MAT and name in _ida_data.PUBLISHED:
        return [IDA_MAT]
    mirror_set = mirror_file(f"ida/unique_xt/{name}.mat")
    if name == "wdbc" or (
        name in _breiman.GENERATORS and (name in IDA["generate"] or not mirror_set)
    ):
        return []
    files = [mirror_set] if mirror_set else []
    for r in chunk_trials(wildcards.trials):
        asc = [
            mirror_file(f"ida/splits_asc/{name}/{name}_{part}_{kind}_{r + 1}.asc")
            for part in ("train", "test")
            for kind in ("data", "labels")
        ]
        if all(asc):
            files += asc
    return files


# the grid each method's CV searches (kclf.repro.experiments.ida._search)
IDA_GRID = {
    "maplp": "maplp_solver_options",
    "maplp_bias": "maplp_solver_options",
    "svm": "svm_C",
    "klr": "lams",
    "lspc_new": "lams",
    "lspc": "lams",
}
