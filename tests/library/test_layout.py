"""The repository's shape as the README and the user guide state it: every public name the
README shows imports, the layout's files (docs/user_guide/workflow.md) exist, and the two
products stay apart: the library ``kclf`` never imports the workflow's code (the
distribution kclf-workflow, ``workflow/src/kclf_workflow``), which uses the library's
public names only."""

import ast
import importlib
import re
from pathlib import Path

import pytest

import kclf

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: the page that holds the layout of the package
LAYOUT_PAGE = (ROOT / "docs" / "user_guide" / "workflow.md").read_text(encoding="utf-8")


def _readme_imports():
    """``(module, name)`` of every ``from kclf... import a, b`` line of the README."""
    out = []
    for module, names in re.findall(r"^\s*from (kclf[\w.]*) import ([\w, ]+)", README, re.M):
        out += [(module, n.strip()) for n in names.split(",") if n.strip()]
    return out


def _paper_table_names():
    """The estimator names of the README's paper table (its second column)."""
    lines = README.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| "))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    rows = lines[start + 2 : end]  # the first table of the README, past its header rule
    cells = [row.split("|")[2] for row in rows if row.count("|") >= 4]
    return sorted({n for c in cells for n in re.findall(r"`(\w+)`", c)})


#: the two products' trees on the layout page: the library and the workflow's code
LAYOUT_ROOTS = ("kclf/", "workflow/src/kclf_workflow/")
WORKFLOW_CODE = ROOT / "workflow" / "src" / "kclf_workflow"


def _layout_paths(root="kclf/"):
    """Files and folders of the ``root`` tree (one of :data:`LAYOUT_ROOTS`) in the user
    guide's layout section."""
    block = LAYOUT_PAGE.split(f"```\n{root}\n", 1)[1].split("```", 1)[0]
    paths, stack = [], []
    for line in block.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent > 4:  # a description's continuation
            continue
        head = line.strip().split("  ")[0]
        words = [w for w in head.split() if re.fullmatch(r"\w+\.py|\w+/", w)]
        if not words:
            continue
        stack = stack[: indent // 2 - 1]
        for w in words:
            paths.append("/".join([root.rstrip("/"), *stack, w]).rstrip("/"))
        if words[-1].endswith("/"):
            stack.append(words[-1].rstrip("/"))
    return paths


def test_readme_shows_the_imports_and_estimators():
    assert ("kclf", "LSPCCV") in _readme_imports()
    assert {"LSPC", "LSPCCV", "CorrLog", "MAPLP", "ManifoldGPC"} <= set(_paper_table_names())


@pytest.mark.parametrize("module,name", _readme_imports())
def test_every_import_the_readme_shows_works(module, name):
    assert hasattr(importlib.import_module(module), name), f"{module}.{name}"


@pytest.mark.parametrize("name", _paper_table_names())
def test_every_estimator_of_the_paper_table_is_public(name):
    assert name in kclf.__all__ and hasattr(kclf, name)


@pytest.mark.parametrize("root", LAYOUT_ROOTS)
def test_the_layout_section_names_files_that_exist(root):
    paths = _layout_paths(root)
    assert len(paths) > 10, paths
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, missing


def test_the_layout_page_describes_the_two_products():
    """Both trees are on the page, each module of the workflow's code is named in its tree,
    and the page names the two distributions and their pyproject files."""
    named = set(_layout_paths("workflow/src/kclf_workflow/"))
    modules = {
        str(p.relative_to(ROOT)).removesuffix("/__init__.py").removesuffix(".py")
        for p in WORKFLOW_CODE.rglob("*.py")
        if p.parent == WORKFLOW_CODE or p.name == "__init__.py"
    }
    top = {m for m in modules if m.count("/") <= 3 and m != "workflow/src/kclf_workflow"}
    unnamed = {m for m in top if m not in {n.removesuffix(".py") for n in named}}
    assert not unnamed, sorted(unnamed)
    for text in ("kclf-workflow", "workflow/pyproject.toml", "pip install kclf"):
        assert text in LAYOUT_PAGE, text


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            out.append(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names]
    return out


def _library_modules():
    return sorted((ROOT / "kclf").rglob("*.py"))


def test_the_library_never_imports_the_workflow_code():
    """No module of the library, the feature modules too (their shards and shard files
    live in kclf_workflow.shards), imports the workflow's package at any depth of the
    module (imports inside functions count), and none is left under kclf/repro."""
    library = _library_modules()
    assert len(library) > 10 and ROOT / "kclf/features/hmm_kernel.py" in library
    assert not (ROOT / "kclf" / "repro").exists()
    bad = {
        str(p.relative_to(ROOT)): [m for m in _imports(p) if m.split(".")[0] == "kclf_workflow"]
        for p in library
        if any(m.split(".")[0] == "kclf_workflow" for m in _imports(p))
    }
    assert not bad, bad


def test_the_import_check_sees_the_workflow_package(tmp_path):
    """The check above finds an import of the workflow's package, inside a function too."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from kclf_workflow.seeding import seed_for\n")
    assert _imports(module) == ["kclf_workflow.seeding"]


def _kclf_imports(path, root=ROOT):
    """``(module, name)`` of every import of a kclf module in ``path`` (relative imports
    resolved against its package below ``root``; ``name`` None for ``import kclf.x``)."""
    package = list(path.relative_to(root).with_suffix("").parts[:-1])
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out += [(module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names]
    return [(m, n) for m, n in out if m == "kclf" or m.startswith("kclf.")]


def _private(module, name):
    parts = module.split(".")[1:] + ([name] if name else [])
    return any(p.startswith("_") and not p.startswith("__") for p in parts)


def test_the_workflow_code_calls_the_public_api_only():
    """Nothing of the workflow's code (workflow/src/kclf_workflow, the workflow's scripts)
    imports a private module or name of the library (``kclf._search``,
    ``kclf.lspc._solver``, ``_fit``, ...), nor calls a private attribute of another
    object: what the workflow runs, a user can."""
    files = sorted(WORKFLOW_CODE.rglob("*.py"))
    files += sorted((ROOT / "workflow" / "scripts").glob("*.py"))
    assert len(files) > 40
    bad = {}
    for path in files:
        private = [f"{m}.{n}" if n else m for m, n in _kclf_imports(path) if _private(m, n)]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                private.append(f"... .{node.attr}")
        if private:
            bad[str(path.relative_to(ROOT))] = private
    assert not bad, bad


def test_the_private_check_sees_relative_and_private_imports():
    """The check above resolves relative imports and flags a private module or name."""
    path = WORKFLOW_CODE / "experiments" / "multitask_auc.py"
    found = _kclf_imports(path)
    assert ("kclf", "PlattScaled") in found and ("kclf.model_selection", "best_index") in found
    assert _private("kclf._search", "best_index") and _private("kclf.lspc._solver", None)
    assert _private("kclf.lspc", "_fit") and not _private("kclf.model_selection", "sigma_grid")


def test_the_benchmarks_import_public_names_only():
    """No script of ``benchmarks/`` imports a private module or name of the library (at any
    depth of the file): what a benchmark measures, a user can call."""
    files = sorted((ROOT / "benchmarks").rglob("*.py"))
    assert len(files) > 10
    bad = {}
    for path in files:
        private = [f"{m}.{n}" if n else m for m, n in _kclf_imports(path) if _private(m, n)]
        if private:
            bad[str(path.relative_to(ROOT))] = private
    assert not bad, bad


def test_the_benchmark_check_sees_a_private_import_inside_a_function(tmp_path):
    """The check above finds ``from kclf.x._y import z`` in a function body."""
    module = tmp_path / "bench.py"
    module.write_text("import numpy\n\n\ndef f():\n    from kclf.mgpc._solver import ep_sites\n")
    found = _kclf_imports(module, root=tmp_path)
    assert found == [("kclf.mgpc._solver", "ep_sites")] and _private(*found[0])


#: where each estimator's numerics live: one private module per estimator, beside it in
#: its family's folder (the meta-estimators wrap another estimator's)
SOLVERS = {
    "LSPC": "kclf/lspc/_solver.py",
    "LSPCCV": "kclf/lspc/_solver.py",
    "KernelLogisticRegression": "kclf/klr/_solver.py",
    "KernelLogisticRegressionCV": "kclf/klr/_solver.py",
    "CorrLog": "kclf/corrlog/_solver.py",
    "ManifoldGPC": "kclf/mgpc/_solver.py",
    "WeightedRidgeLogistic": "kclf/mgpc/_ridge_solver.py",
    "MAPLP": "kclf/maplp/_solver.py",
}
META_ESTIMATORS = {"PairwiseCoupling", "PlattScaled"}


def test_every_estimator_has_its_solver_in_one_file_of_its_family():
    """A newcomer's question "where is this estimator's solver?" has one answer per
    estimator: the private module its public module imports, in the same folder, named on
    the layout page."""
    import inspect

    classes = {n for n in kclf.__all__ if inspect.isclass(getattr(kclf, n))}
    assert classes - META_ESTIMATORS == set(SOLVERS)
    for name, solver in SOLVERS.items():
        module = Path(inspect.getfile(getattr(kclf, name)))
        assert (ROOT / solver).is_file() and (ROOT / solver).parent == module.parent, name
        stem = Path(solver).stem
        assert any(m.endswith(f".{stem}") for m in _imports(module)), (name, stem)
        family = Path(solver).parent.name
        assert f"  {family}/" in LAYOUT_PAGE and f"    {stem}.py" in LAYOUT_PAGE, solver


def _library_graph():
    """``{module: kclf modules it imports}`` over the library (kclf/repro apart), at any
    depth of each file; ``from .pkg import name`` counts the submodule ``pkg.name`` where
    there is one, else ``pkg``."""
    library = [p for p in (ROOT / "kclf").rglob("*.py") if "repro" not in p.parts]

    def name(path):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name(p): p for p in library}
    graph = {}
    for module, path in modules.items():
        found = set()
        for target, imported in _kclf_imports(path):
            sub = f"{target}.{imported}"
            found.add(sub if sub in modules else target)
        graph[module] = {m for m in found if m in modules}
    return graph


def test_no_library_module_imports_from_a_module_above_it():
    """The library's imports form layers (no cycle, at any depth of a file): whatever a
    module imports, a private name included, comes from a module that does not import
    it back.  In particular the estimators' solvers sit below the search base
    (``kclf._search``, above the estimators) and take the folds, scores and cores from
    the private modules below them (``kclf._folds``, ``kclf._scoring``,
    ``kclf._parallel``)."""
    graph = _library_graph()
    assert {"kclf._search", "kclf._folds", "kclf._scoring", "kclf.lspc._solver"} <= set(graph)

    def below(module):
        seen, stack = set(), [module]
        while stack:
            for m in graph[stack.pop()]:
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
        return seen

    cycles = sorted((a, b) for a in graph for b in graph[a] if a in below(b))
    assert not cycles, cycles
    solvers = [m for m in graph if m.rsplit(".", 1)[-1].endswith("_solver")]
    assert {"kclf.lspc._solver", "kclf.klr._solver"} <= set(solvers)
    up = {m: sorted(graph[m] & {"kclf._search"}) for m in solvers}
    assert not any(up.values()), up
    for low in ("kclf._folds", "kclf._scoring", "kclf._parallel", "kclf.kernels"):
        assert "kclf._search" not in below(low) and not any(
            m.startswith(("kclf.lspc", "kclf.klr")) for m in below(low)
        ), low


def test_the_generic_wrappers_know_no_concrete_estimator():
    """``PlattScaled`` asks the estimator it wraps for its scores
    (``kclf.platt.response_method``), as scikit-learn's ``CalibratedClassifierCV`` does,
    instead of testing its class: ``kclf.platt`` imports no estimator family."""
    graph = _library_graph()
    families = ("kclf.lspc", "kclf.klr", "kclf.maplp", "kclf.mgpc", "kclf.corrlog")
    assert not [m for m in graph["kclf.platt"] if m.startswith(families)]
