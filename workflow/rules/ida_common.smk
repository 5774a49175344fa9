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


IDA_USER = user_datasets("ida", IDA["datasets"]) if enabled("ida") else []


def ida_fixed_split(dataset):
    """A user data set given as train: + test: (one realisation, its own split)."""
    return dataset in IDA_USER and USER_DATASETS[dataset]["path"] is None


def ida_realisations(dataset):
    """Realisations of `dataset`: 1 for a user's fixed split, ida.realisations, else the
    published count (100 for a user's path: set)."""
    if ida_fixed_split(dataset):
        return 1
    if IDA["realisations"] is not None:
        return IDA["realisations"]
    return _ida_data.PUBLISHED.get(dataset, _ida_data.EXTRA.get(dataset, (0, 0, 100)))[2]


IDA_CHUNKS = {d: trial_chunks(ida_realisations(d), IDA["trials_per_job"]) for d in IDA["datasets"]}


def ida_select_chunk(dataset):
    """The realisations whose CV optimum enters the median (a fixed split: its one)."""
    return "0-0" if ida_fixed_split(dataset) else f"0-{IDA['n_select'] - 1}"


if enabled("ida"):
    checked(
        _checks.n_select_fits,
        IDA["n_select"],
        {d: ida_realisations(d) for d in IDA["datasets"] if not ida_fixed_split(d)},
    )


def ida_sources(wildcards):
    """The files ida_data reads for a dataset and chunk (kclf.repro.experiments.ida.prepare's
    order of sources): the user's files for a name under datasets:; benchmarks.mat; nothing for wdbc and generated sets; else the
    mirror's pattern set and the IDA split files of the chunk's realisations."""
    name = wildcards.dataset
    if name in IDA_USER:
        return user_files(name)
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


def ida_grids(method):
    """What a selection or fit of `method` reads: the widths, the folds, the method's own
    grid and, for LSPC-new, its variant (ida.lspc_new)."""
    return pick(IDA, fit_keys(IDA, method, ["sigma_factors", "folds", IDA_GRID[method]]))
