"""Sphinx configuration of the kclf documentation (``make docs``)."""

from __future__ import annotations

import inspect
import os
import re
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))
# the gallery's examples are run in this process: a non-interactive backend, one BLAS
# thread per process as the workflow does (numbers do not depend on the machine's cores)
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from kclf_inventories import SITES, write_inventories  # noqa: E402

import kclf  # noqa: E402

project = "kclf"
author = "the kclf developers"
copyright = "the kclf developers, BSD-3-Clause"
version = release = kclf.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "kclf_mathml",
    "kclf_equations",
    "kclf_config_reference",
    "kclf_citation",
    "kclf_autolink",
]

root_doc = "index"
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = [
    "_build",
    "**/sg_execution_times.rst",
    "sg_execution_times.rst",
]
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["kclf.css"]
math_renderer = "mathml"
suppress_warnings = []

# -- API reference ---------------------------------------------------------------------

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_xref_aliases = {
    "ndarray": "numpy.ndarray",
    "RandomState": "numpy.random.RandomState",
    "Generator": "numpy.random.Generator",
    "BaseEstimator": "sklearn.base.BaseEstimator",
}
numpydoc_xref_ignore = {
    "of",
    "or",
    "shape",
    "default",
    "optional",
    "instance",
    "array-like",
    "sequence",
    "int",
    "float",
    "bool",
    "str",
    "None",
    "callable",
    "dict",
    "list",
    "tuple",
    "object",
    "classifier",
    "estimator",
    "iterable",
    "n_samples",
    "n_features",
    "n_classes",
    "n_tasks",
    "n_labels",
    "path",
    "array",
    "matrix",
    "function",
    "splitter",
    "with",
    "positive",
    "in",
    "and",
    "the",
    "a",
    "an",
    "any",
    "sparse",
}
numpydoc_validation_checks = set()

# the API index of the library's public names, in three parts: the estimators
# (kclf.__all__, by paper; a name not in a group, one added later, still gets its page,
# under "Other estimators and functions"), the kernels and metrics, and the feature
# extraction (kclf.features' modules, their __all__). The workflow's code (the distribution
# kclf-workflow) is no part of it.
API_GROUPS = {
    "Least-squares probabilistic classifiers (LSPC, LSPC-new)": ["LSPC", "LSPCCV"],
    "Kernel logistic regression and pairwise coupling": [
        "KernelLogisticRegression",
        "KernelLogisticRegressionCV",
        "PairwiseCoupling",
        "couple",
    ],
    "MAP kernel classifier by linear programming": ["MAPLP"],
    "Correlated logistic model (multilabel)": ["CorrLog"],
    "Manifold Gaussian process classifier": ["ManifoldGPC", "WeightedRidgeLogistic"],
    "Calibration": ["PlattScaled"],
}
API_MODULES = {
    "kclf.kernels": "Kernels, offset-safe distances and the median heuristic",
    "kclf.model_selection": "The CV searches' default grids and their tie rule",
    "kclf.metrics": "Probability quality and multilabel measures",
    "kclf.mgpc.inference": "Laplace and EP for a binary GP classifier on a given covariance",
}
FEATURE_PACKAGE = "kclf.features"


def public_names():
    """``kclf.__all__`` without the version string."""
    return [n for n in kclf.__all__ if not n.startswith("__")]


def module_members(module_name):
    """Public functions and classes defined in a module (``__all__`` when it has one)."""
    import importlib

    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            n
            for n, obj in vars(module).items()
            if not n.startswith("_")
            and (inspect.isfunction(obj) or inspect.isclass(obj))
            and getattr(obj, "__module__", None) == module_name
        ]
    return list(names)


def submodules(package_name):
    """The public modules of a package (not starting with ``_``), sorted."""
    import importlib
    import pkgutil

    package = importlib.import_module(package_name)
    return [
        f"{package_name}.{m.name}"
        for m in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
        if not m.name.startswith("_")
    ]


def feature_modules():
    return submodules(FEATURE_PACKAGE)


def _first_line(obj):
    doc = inspect.getdoc(obj) or ""
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _title(text, line):
    return [text, line * len(text), ""]


def _module_section(module_name, description, line):
    lines = _title(f":mod:`{module_name}`: {description}", line)
    lines += [
        f".. automodule:: {module_name}",
        "   :no-members:",
        "",
        f".. currentmodule:: {module_name}",
        "",
        ".. autosummary::",
        "   :toctree: generated",
        "",
    ]
    return lines + [f"   {m}" for m in module_members(module_name)] + [""]


def write_api_index():
    """``docs/api/index.rst`` from the package itself, so a new public name is listed."""
    import importlib

    names = public_names()
    lines = [
        ".. _api:",
        "",
        *_title("API reference", "="),
        ".. This page is generated by docs/conf.py (write_api_index) from kclf.__all__,",
        "   the modules of API_MODULES and the modules of kclf.features.",
        "",
        "The library's public names, in three parts: the :ref:`estimators <api-estimators>`,",
        "the :ref:`kernels, metrics and GP inference <api-kernels-metrics>` they share, and the",
        ":ref:`feature extraction <api-features>` of the image and audio experiments.",
        "",
        ".. _api-estimators:",
        "",
        *_title("Estimators", "-"),
        "Every estimator follows scikit-learn's API (``fit``, ``predict``, ``predict_proba``,",
        "``get_params`` / ``set_params``, ``clone``); import them from the top level,",
        "``from kclf import LSPC``.  Each page states the paper's model and lists every",
        "public method, inherited ones included.",
        "",
        ".. currentmodule:: kclf",
        "",
    ]
    groups = dict(API_GROUPS)
    rest = [n for n in names if not any(n in g for g in API_GROUPS.values())]
    if rest:
        groups["Other estimators and functions"] = rest
    for title, members in groups.items():
        members = [m for m in members if m in names]
        if not members:
            continue
        lines += _title(title, "~")
        lines += [".. autosummary::", "   :toctree: generated", ""]
        lines += [f"   {m}" for m in members] + [""]
    lines += [".. _api-kernels-metrics:", "", *_title("Kernels and metrics", "-")]
    for module_name, description in API_MODULES.items():
        lines += _module_section(module_name, description, "~")
    lines += [
        ".. _api-features:",
        "",
        *_title("Feature extraction", "-"),
        "The features of the image and audio experiments; they need the ``features`` extra",
        "(``pip install -e .[features]``).",
        "",
    ]
    for module_name in feature_modules():
        module = importlib.import_module(module_name)
        lines += _module_section(module_name, _first_line(module).rstrip("."), "~")
    text = "\n".join(lines)
    path = DOCS / "api" / "index.rst"
    path.parent.mkdir(exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


write_api_index()

# the user guide's code literals naming these link to their API pages (kclf_autolink)
kclf_autolink_names = public_names()
kclf_autolink_modules = [*API_MODULES, *feature_modules()]

# scikit-learn's generated metadata-routing methods (set_fit_request, ...) are left out
SKIP_MEMBER = re.compile(r"^(set_\w+_request|get_metadata_routing)$")
# ``|sigmas|`` in a docstring is prose (an absolute value or a count), not a
# reStructuredText substitution: escape such bars outside literals
SUBSTITUTION = re.compile(r"(?<![\\`|])\|(?=[^\s|`])([^|`]*?[^\s\\|`])\|(?![`|\w])")


def _skip_member(app, what, name, obj, skip, options):
    return True if SKIP_MEMBER.match(name) else None


def _escape_bars(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        parts = re.split(r"(``[^`]*``)", line)
        lines[i] = "".join(
            p if p.startswith("``") else SUBSTITUTION.sub(r"\\|\1\\|", p) for p in parts
        )


# scikit-learn's own docstrings (the inherited get_params, set_params, score) refer to
# labels of its user guide; they are kept as plain text here
SKLEARN_REF = re.compile(r":ref:`([^`<]+?)\s*<[^`>]+>`")


def _plain_sklearn_refs(app, what, name, obj, options, lines):
    if getattr(obj, "__module__", "").startswith("sklearn"):
        lines[:] = [SKLEARN_REF.sub(r"\1", line) for line in lines]


def setup(app):
    app.connect("autodoc-skip-member", _skip_member)
    app.connect("autodoc-process-docstring", _plain_sklearn_refs, priority=100)
    app.connect("autodoc-process-docstring", _escape_bars, priority=100)


# -- cross-references to numpy, scipy, scikit-learn and Snakemake ----------------------

_inventories = write_inventories(DOCS / "_build" / "intersphinx")
_online = os.environ.get("KCLF_DOCS_ONLINE") == "1"
intersphinx_mapping = {
    name: (url, (None, str(_inventories[name])) if _online else str(_inventories[name]))
    for name, url in SITES.items()
}
intersphinx_timeout = 10

# -- user guide (Markdown) -------------------------------------------------------------

myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- example gallery -------------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "doc_module": ("kclf",),
    "backreferences_dir": "api/generated/backreferences",
    "reference_url": {"kclf": None},
    "remove_config_comments": True,
    "download_all_examples": False,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "plot_gallery": "True",
    "min_reported_time": 1,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "show_memory": False,
    "write_computation_times": True,
}
warnings.filterwarnings("ignore", category=UserWarning, message="Matplotlib is currently using agg")

# -- HTML ------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"kclf {release}"
html_theme_options = {
    "navbar_align": "left",
    # the five top-level sections (guide, gallery, API, config, changelog) all in the bar
    "header_links_before_dropdown": 6,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
}
html_sidebars = {"index": []}
html_show_sourcelink = True
html_copy_source = True
