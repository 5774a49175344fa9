"""Intersphinx inventories for numpy, scipy, scikit-learn and Snakemake, made offline.

The project's machines (and CI) reach a package index but not the projects' documentation
sites, so Sphinx cannot download their ``objects.inv``.  ``write_inventories`` builds a
small inventory per project from the *installed, pinned* packages (public names of the
modules the docs cite) and the sites' URL scheme for their API pages, written under
``docs/_build/intersphinx/``.  ``conf.py`` lists the real ``objects.inv`` first and this
file as the fallback when ``KCLF_DOCS_ONLINE=1`` is set, and the generated one alone
otherwise (an unreachable inventory would be a warning, an error under ``-W``).  The links
point at the real sites either way.
"""

from __future__ import annotations

import importlib
import inspect
import zlib
from pathlib import Path

SITES = {
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "sklearn": "https://scikit-learn.org/stable/",
    "snakemake": "https://snakemake.readthedocs.io/en/stable/",
}

SCIPY_MODULES = ["scipy.linalg", "scipy.optimize", "scipy.sparse", "scipy.special", "scipy.stats"]
SKLEARN_MODULES = [
    "sklearn.base",
    "sklearn.calibration",
    "sklearn.cluster",
    "sklearn.datasets",
    "sklearn.gaussian_process",
    "sklearn.kernel_approximation",
    "sklearn.linear_model",
    "sklearn.metrics",
    "sklearn.model_selection",
    "sklearn.multiclass",
    "sklearn.multioutput",
    "sklearn.pipeline",
    "sklearn.preprocessing",
    "sklearn.svm",
    "sklearn.utils",
]
SKLEARN_TERMS = [
    "random_state",
    "n_jobs",
    "cross-validation estimator",
    "predict_proba",
    "decision_function",
    "fit",
    "multilabel",
    "multiclass",
    "precomputed",
]
# Snakemake's documentation pages the guide links to (std:doc names = their paths)
SNAKEMAKE_DOCS = {
    "snakefiles/configuration": "Configuration",
    "snakefiles/rules": "Snakefiles and Rules",
    "snakefiles/reporting": "Reports",
    "snakefiles/deployment": "Distribution and Reproducibility",
    "executing/cli": "Command line interface",
}


def _public(module_name):
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    for name in sorted(set(names)):
        try:
            obj = getattr(module, name, None)
        except Exception:  # noqa: BLE001 - e.g. scikit-learn's experimental names
            continue
        if inspect.isclass(obj):
            yield name, "py:class"
        elif callable(obj):
            yield name, "py:function"


def _numpy():
    rows = [("numpy", "py:module", "reference/index.html#module-numpy")]
    for name, role in _public("numpy"):
        full = f"numpy.{name}"
        rows.append((full, role, f"reference/generated/{full}.html#{full}"))
    rows += [
        (
            "numpy.random.Generator",
            "py:class",
            "reference/random/generator.html#numpy.random.Generator",
        ),
        (
            "numpy.random.RandomState",
            "py:class",
            "reference/random/legacy.html#numpy.random.RandomState",
        ),
        (
            "numpy.random.default_rng",
            "py:function",
            "reference/random/generator.html#numpy.random.default_rng",
        ),
    ]
    return rows


def _scipy():
    rows = []
    for module in SCIPY_MODULES:
        rows.append((module, "py:module", f"reference/{module.split('.')[1]}.html#module-{module}"))
        for name, role in _public(module):
            full = f"{module}.{name}"
            rows.append((full, role, f"reference/generated/{full}.html#{full}"))
    return rows


def _sklearn():
    rows = []
    for module in SKLEARN_MODULES:
        rows.append((module, "py:module", f"api/{module}.html#module-{module}"))
        for name, role in _public(module):
            full = f"{module}.{name}"
            rows.append((full, role, f"modules/generated/{full}.html#{full}"))
    for term in SKLEARN_TERMS:
        anchor = "term-" + term.replace(" ", "-")
        rows.append((term, "std:term", f"glossary.html#{anchor}"))
    return rows


def _snakemake():
    return [(name, "std:doc", f"{name}.html") for name in SNAKEMAKE_DOCS]


def _write(path, project, version, rows):
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        f"# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    lines = []
    for name, role, uri in rows:
        display = SNAKEMAKE_DOCS.get(name, "-") if role == "std:doc" else "-"
        lines.append(f"{name} {role} 1 {uri} {display}\n")
    path.write_bytes(header + zlib.compress("".join(lines).encode()))


def write_inventories(out_dir):
    """Write ``<project>.inv`` for every project of ``SITES``; returns name -> path."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    makers = {"numpy": _numpy, "scipy": _scipy, "sklearn": _sklearn, "snakemake": _snakemake}
    paths = {}
    for project, make in makers.items():
        try:
            version = importlib.import_module(project).__version__
        except Exception:  # noqa: BLE001 - the version is a label only
            version = ""
        path = out_dir / f"{project}.inv"
        _write(path, project, version, make())
        paths[project] = path
    return paths
