from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SHARED_DATA = SHARED / "data"


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
