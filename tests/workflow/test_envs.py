"""envs/*.yaml agree with requirements.lock: same versions, nothing missing.

Conda's channels are unreachable from our machines, so the environments are checked
statically: every pip pin equals the lock's, Python matches the interpreter the lock
was resolved with, and each env pins the whole dependency closure of its root
packages (computed from the installed distributions' metadata), so
``--software-deployment-method conda`` installs exactly the wheels the venv route uses.

``python tests/workflow/test_envs.py --write`` regenerates the files from ``ENVS`` and the lock.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"
ENV_DIR = ROOT / "envs"

# Rule group -> packages its scripts import (their dependencies are pinned too).
ENVS = {
    "core": {
        "about": "fits, records, tables, figures, provenance (numpy/scipy/scikit-learn/pandas)",
        "roots": [
            "numpy",
            "scipy",
            "scikit-learn",
            "pandas",
            "matplotlib",
            "pooch",
            "threadpoolctl",
            "tabulate",
            "jinja2",
            "pyyaml",
            "unlzw3",
            "libarchive-c",
            "scikit-posthocs",
            "baycomp",
            "pystan",
        ],
    },
    "images": {
        "about": "image features: SURF (mahotas) / SIFT (OpenCV), visual-word vocabulary",
        "roots": ["opencv-contrib-python-headless", "mahotas", "pillow"],
        "extends": "core",
    },
    "audio": {
        "about": "audio features (librosa), per-clip HMMs and HMM kernels (hmmlearn)",
        "roots": ["librosa", "soundfile", "hmmlearn"],
        "extends": "core",
    },
}


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(path=LOCK):
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            name, version = line.split("==")
            pins[canonical(name)] = version.strip()
    return pins


def _requirements(name):
    """Unconditional (non-extra, marker-true) requirements of an installed distribution."""
    from packaging.requirements import Requirement

    out = []
    for raw in metadata.requires(name) or []:
        req = Requirement(raw)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        out.append(canonical(req.name))
    return out


def closure(roots):
    """Roots plus all their installed transitive requirements (canonical names)."""
    seen, todo = set(), [canonical(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_requirements(name))
    return seen


def env_packages(env):
    spec = ENVS[env]
    names = closure(spec["roots"])
    if "extends" in spec:
        names |= env_packages(spec["extends"])
    return names


def python_minor():
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def render(env):
    pins = read_lock()
    names = sorted(env_packages(env))
    missing = [n for n in names if n not in pins]
    if missing:
        raise ValueError(f"{env}: {missing} are needed but not pinned in {LOCK.name}")
    lines = [
        f"# {ENVS[env]['about']}.",
        "# Generated from requirements.lock by `python tests/workflow/test_envs.py --write`;",
        "# the pip pins install the same wheels as the venv route, so conda and venv runs agree.",
        f"name: kclf-{env}",
        "channels:",
        "  - conda-forge",
        "  - nodefaults",
        "dependencies:",
        f"  - python={python_minor()}",
        "  - pip",
        "  - pip:",
    ]
    lines += [f"      - {n}=={pins[n]}" for n in names]
    return "\n".join(lines) + "\n"


def load_env(env):
    return yaml.safe_load((ENV_DIR / f"{env}.yaml").read_text())


def pip_pins(doc):
    pins = {}
    for dep in doc["dependencies"]:
        if isinstance(dep, dict) and "pip" in dep:
            for line in dep["pip"]:
                name, version = line.split("==")
                pins[canonical(name)] = version
    return pins


def conda_deps(doc):
    return [d for d in doc["dependencies"] if isinstance(d, str)]


@pytest.fixture(scope="module")
def lock():
    return read_lock()


def test_every_env_file_is_known():
    assert sorted(p.stem for p in ENV_DIR.glob("*.yaml")) == sorted(ENVS)


@pytest.mark.parametrize("env", sorted(ENVS))
def test_pins_equal_the_lock(env, lock):
    pins = pip_pins(load_env(env))
    assert pins, f"envs/{env}.yaml pins nothing"
    wrong = {n: (v, lock.get(n)) for n, v in pins.items() if lock.get(n) != v}
    assert wrong == {}, f"envs/{env}.yaml disagrees with requirements.lock: {wrong}"


@pytest.mark.parametrize("env", sorted(ENVS))
def test_env_pins_its_whole_closure(env):
    pins = pip_pins(load_env(env))
    missing = sorted(env_packages(env) - set(pins))
    assert missing == [], f"envs/{env}.yaml lacks pins for {missing}"


@pytest.mark.parametrize("env", sorted(ENVS))
def test_python_and_channels(env):
    doc = load_env(env)
    assert f"python={python_minor()}" in conda_deps(doc)
    assert "pip" in conda_deps(doc)
    assert doc["channels"][0] == "conda-forge"
    # Anything installed by conda itself must be exactly pinned too.
    loose = [d for d in conda_deps(doc) if d != "pip" and "=" not in d]
    assert loose == []


@pytest.mark.parametrize("env", sorted(ENVS))
def test_env_file_is_up_to_date(env):
    assert (ENV_DIR / f"{env}.yaml").read_text() == render(env), (
        f"envs/{env}.yaml is stale: run `python tests/workflow/test_envs.py --write`"
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/workflow/test_envs.py --write")
    ENV_DIR.mkdir(exist_ok=True)
    for name in ENVS:
        (ENV_DIR / f"{name}.yaml").write_text(render(name))
        print(f"wrote envs/{name}.yaml")
