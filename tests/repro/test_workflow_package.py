"""The workflow's code as a distribution of its own (workflow/pyproject.toml,
kclf-workflow): every module imports, every package it imports is declared, every
declared one is used, and it uses the library through ``kclf``'s public names.

.ci/package.sh installs the built wheels into fresh venvs and walks the modules there too
(.ci/import_walk.py, the walk of :func:`test_every_module_of_the_workflow_package_imports`)."""

import ast
import importlib
import importlib.metadata as md
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "workflow"
PYPROJECT = tomllib.loads((WORKFLOW / "pyproject.toml").read_text())
sys.path.insert(0, str(ROOT / ".ci"))
from import_walk import module_names  # noqa: E402

sys.path.pop(0)


def _name(requirement):
    """The normalised distribution name of a requirement string."""
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9._-]+", requirement).group()).lower()


def _declared():
    project = PYPROJECT["project"]
    required = {_name(r) for r in project["dependencies"]}
    extras = {_name(r) for rs in project["optional-dependencies"].values() for r in rs}
    return required, extras


def _top_level_imports(path):
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
    return out


def _third_party(names):
    own = {"kclf_workflow", "_joblog"}
    return {n for n in names if n not in sys.stdlib_module_names and n not in own}


def _code_files():
    return sorted((WORKFLOW / "src").rglob("*.py")) + sorted((WORKFLOW / "scripts").glob("*.py"))


def _rule_files():
    return [ROOT / "Snakefile", *sorted((WORKFLOW / "rules").glob("*.smk"))]


def _rule_imports():
    """The top-level modules the Snakefile and the rule files import."""
    out = set()
    for path in _rule_files():
        out |= set(re.findall(r"^\s*(?:from|import) (\w+)", path.read_text(), re.M))
    return out


def _distribution(module):
    dists = md.packages_distributions().get(module)
    assert dists, f"no installed distribution provides {module!r}"
    return {_name(d) for d in dists}


def test_every_module_of_the_workflow_package_imports():
    names = module_names("kclf_workflow")
    assert len(names) > 60 and "kclf_workflow.methods.benchmark" in names
    for name in names:
        importlib.import_module(name)


def test_every_package_the_workflow_imports_is_declared_and_every_declared_one_used():
    required, extras = _declared()
    imported = set()
    for path in _code_files():
        imported |= _third_party(_top_level_imports(path))
    imported |= _third_party(_rule_imports())
    provided = {}
    for module in sorted(imported):
        if module == "GPy" and not md.packages_distributions().get(module):
            provided[module] = {"gpy"}  # the optional extra, not installed here
            continue
        provided[module] = _distribution(module)
    undeclared = {m: d for m, d in provided.items() if not d & (required | extras)}
    assert not undeclared, undeclared
    used = set().union(*provided.values()) | {"kclf"}
    # snakemake's SLURM plugin is loaded by Snakemake itself for workflow/profiles/slurm
    unused = (required | extras) - used - {"snakemake-executor-plugin-slurm"}
    assert not unused, unused


def test_the_distribution_depends_on_the_library_with_its_features():
    (kclf,) = [r for r in PYPROJECT["project"]["dependencies"] if _name(r) == "kclf"]
    assert kclf.startswith("kclf[features]")
    assert PYPROJECT["project"]["name"] == "kclf-workflow"
    assert PYPROJECT["tool"]["setuptools"]["packages"]["find"]["where"] == ["src"]


@pytest.mark.parametrize("name", ["kclf", "kclf-workflow"])
def test_both_distributions_are_installed_at_their_versions(name):
    import kclf
    import kclf_workflow

    version = {"kclf": kclf.__version__, "kclf-workflow": kclf_workflow.__version__}[name]
    assert md.version(name) == version


def test_the_workflow_starts_without_importing_scikit_learn_or_the_library():
    # Snakemake runs the rule files at every start (a dry run, each cluster job): the
    # workflow's imports there load neither scikit-learn nor kclf (2.4 s of an 8.5 s dry run)
    pattern = r"^(?:from|import) kclf_workflow\b.*$"
    imports = sorted(
        {line for path in _rule_files() for line in re.findall(pattern, path.read_text(), re.M)}
    )
    assert "from kclf_workflow import methods as METHOD_REGISTRY" in imports
    code = "\n".join(
        ["import sys", *imports, "print(sorted({'sklearn', 'kclf'} & sys.modules.keys()))"]
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(WORKFLOW / "src")])}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout
