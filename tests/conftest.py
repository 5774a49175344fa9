import os

# scikit-learn's array API dispatch needs SciPy's array API support, switched on before
# SciPy is first imported (tests/library/test_array_api.py); NumPy inputs are unaffected
os.environ.setdefault("SCIPY_ARRAY_API", "1")

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SHARED_DATA = SHARED / "data"


# The property-based invariant layer (tests/library/test_invariants.py) draws the same
# examples on every run and machine (derandomize: seeded by each test's name), keeps no
# example database and has no per-example deadline (a fit's time varies with the load);
# each test bounds its own number of examples.
settings.register_profile(
    "kclf",
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("kclf")


@pytest.fixture
def shared_data():
    """../shared/data beside the clone (the real-data mirror); skip when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"real-data mirror {SHARED_DATA} not present (only in the project's CI/dev machines)"
        )
    return SHARED_DATA


@pytest.fixture
def shared_reference():
    ref = SHARED / "reference"
    if not ref.is_dir():
        pytest.skip(f"published-numbers folder {ref} not present")
    return ref


def _direct_ece(confidence, hit, edges):
    """sum_b n_b / n |mean hit - mean confidence| over bins (edges[b], edges[b + 1]] (the
    first bin closed at its left edge, the last open at its right one: sklearn's
    calibration_curve assignment), written out bin by bin."""
    total, n, last = 0.0, len(confidence), len(edges) - 2
    for b in range(last + 1):
        inside = np.ones(n, dtype=bool)
        if b > 0:
            inside &= confidence > edges[b]
        if b < last:
            inside &= confidence <= edges[b + 1]
        if inside.any():
            total += inside.sum() / n * abs(hit[inside].mean() - confidence[inside].mean())
    return total


def _direct_metrics(y, proba, classes, n_bins, eps=1e-15):
    """Log loss (probabilities clipped to eps), Brier score and the equal-width and
    equal-mass ECEs of predictions ``proba`` (n, C) of labels ``y`` (columns in
    ``classes`` order), computed from their definitions in the metrics module docstring:
    the binary case on P(classes[1]), several classes on the top-label confidence."""
    y = np.asarray(y)
    proba = np.asarray(proba, dtype=float)
    onehot = (y[:, None] == np.asarray(classes)[None, :]).astype(float)
    if proba.shape[1] == 2:
        p, t = proba[:, 1], onehot[:, 1]
        q = np.minimum(np.maximum(p, eps), 1 - eps)
        log_loss = -np.mean(t * np.log(q) + (1 - t) * np.log(1 - q))
        brier = np.mean((p - t) ** 2)
        confidence, hit = p, t
    else:
        q = np.where(proba < eps, eps, proba)
        q = q / q.sum(axis=1, keepdims=True)
        log_loss = -np.mean(np.log(np.sum(q * onehot, axis=1)))
        brier = np.mean(np.sum((proba - onehot) ** 2, axis=1))
        confidence = proba.max(axis=1)
        hit = onehot[np.arange(len(y)), proba.argmax(axis=1)]
    return {
        "log_loss": log_loss,
        "brier": brier,
        "ece": _direct_ece(confidence, hit, np.linspace(0, 1, n_bins + 1)),
        "ece_mass": _direct_ece(
            confidence, hit, np.percentile(confidence, np.linspace(0, 100, n_bins + 1))
        ),
    }


@pytest.fixture
def direct_metrics():
    """``f(y, proba, classes, n_bins) -> {log_loss, brier, ece, ece_mass}``, the
    probability metrics computed directly from their definitions (not by kclf.metrics)."""
    return _direct_metrics


# --- the workflow's test helpers (tests/workflow_run.py) and the layers' marks -----------


@pytest.fixture(scope="session")
def workflow():
    """tests/workflow_run.py: tiny configs, work folders, runs and dry runs of the
    repository's Snakefile in a temporary folder."""
    import workflow_run

    return workflow_run


#: tests slower than a few seconds outside tests/workflow (deselected by make test-fast)
SLOW = {
    "test_slurm.py",
    "test_digits_3_vs_8",
    "test_warm_path_choice_equals_exhaustive_search_on_scene",
    "test_toy_experiment_reproduces_figure1_claim",
    "test_workflow_family_runs_offline_and_is_up_to_date_after",
}


def pytest_collection_modifyitems(config, items):
    """Everything under tests/workflow runs Snakemake: marked slow, as the named tests."""
    for item in items:
        path = Path(str(item.fspath))
        name = item.name.split("[")[0]
        if path.parent.name == "workflow" or name in SLOW or path.name in SLOW:
            item.add_marker(pytest.mark.slow)
