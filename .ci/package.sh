#!/usr/bin/env bash
# The two products as a user gets them, each built (python -m build: the sdist, then the
# wheel from the sdist) and checked (twine check --strict), CITATION.cff validated
# (cffconvert), then installed into fresh venvs outside the repository:
#   * kclf alone: its wheel holds no file of the workflow, `pip show kclf` requires numpy,
#     scipy, scikit-learn and threadpoolctl only, every public name imports and the
#     quickstart and the package index's description run;
#   * kclf-workflow (workflow/) with kclf[features]: every one of its modules imports.
# The tools come pinned from requirements-release.lock, the wheels' dependencies at
# requirements.lock's versions. pip does not byte-compile what it installs (--no-compile):
# these venvs import a few modules and are thrown away (the script took 296 s, 231 s so).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/tools"
"$work/tools/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile \
  -r requirements-release.lock
for project in . workflow; do
  "$work/tools/bin/python" -m build --outdir "$work/dist" "$project" >"$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log"; exit 1; }
done
"$work/tools/bin/twine" check --strict "$work"/dist/*
"$work/tools/bin/cffconvert" --validate -i CITATION.cff

version_of() {  # the __version__ assignment of a package's __init__.py
  python3 -c 'import ast, sys; t = ast.parse(open(sys.argv[1]).read())
print(next(n.value.value for n in t.body if isinstance(n, ast.Assign)
           and getattr(n.targets[0], "id", "") == "__version__"))' "$1"
}
version=$(version_of kclf/__init__.py)
wf_version=$(version_of workflow/src/kclf_workflow/__init__.py)
wheel="$work/dist/kclf-$version-py3-none-any.whl"
wf_wheel="$work/dist/kclf_workflow-$wf_version-py3-none-any.whl"
for f in "$wheel" "$wf_wheel" "$work/dist/kclf-$version.tar.gz" \
  "$work/dist/kclf_workflow-$wf_version.tar.gz"; do
  test -f "$f" || { echo "not built: $f (the version in __init__.py?)"; ls "$work/dist"; exit 1; }
done
python3 - "$wheel" "$work/dist/kclf-$version.tar.gz" <<'PY'
import sys, tarfile, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
licences = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
assert licences, "the wheel carries no LICENSE"
outside = [n for n in names if not n.startswith(("kclf/", "kclf-"))]
assert not outside, f"files outside the library in the wheel: {outside}"
workflow = [n for n in names if "repro" in n or "kclf_workflow" in n]
assert not workflow, f"workflow files in the library's wheel: {workflow}"
sdist = tarfile.open(sys.argv[2]).getnames()
shipped = [n for n in sdist if "/tests/" in n or "/workflow/" in n]
assert not shipped, f"the sdist ships tests or the workflow: {shipped}"
for f in ("CHANGELOG.md", "CITATION.cff", "LICENSE", "README.pypi.md"):
    assert any(n.endswith("/" + f) for n in sdist), f"the sdist lacks {f}"
print(f"wheel: {len(names)} files, {licences[0]}; sdist: {len(sdist)} entries, no tests")
PY

# the library alone
python3 -m venv "$work/user"
"$work/user/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile \
  -c requirements.lock "$wheel"
requires=$("$work/user/bin/python" -m pip show kclf | sed -n 's/^Requires: //p')
test "$requires" = "numpy, scikit-learn, scipy, threadpoolctl" \
  || { echo "pip show kclf: Requires: $requires"; exit 1; }
cd "$work"
env -u PYTHONPATH "$work/user/bin/python" -c "
import importlib, importlib.metadata as m, kclf
assert m.version('kclf') == kclf.__version__, (m.version('kclf'), kclf.__version__)
for name in kclf.__all__:
    getattr(kclf, name)
for module in ('kclf.kernels', 'kclf.metrics', 'kclf.model_selection'):
    mod = importlib.import_module(module)
    for name in getattr(mod, '__all__', []):
        getattr(mod, name)
print('installed kclf', kclf.__version__, m.metadata('kclf')['License-Expression'],
      'requires', '$requires', '-', len(kclf.__all__), 'public names')"
for page in "$repo/docs/user_guide/quickstart.md" "$repo/README.pypi.md"; do
  env -u PYTHONPATH OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
    "$work/user/bin/python" "$repo/.ci/quickstart.py" "$page"
done

# the workflow's code, on the library with its features extra
python3 -m venv "$work/workflow"
"$work/workflow/bin/python" -m pip install --quiet --disable-pip-version-check --no-compile \
  -c "$repo/requirements.lock" "$wheel[features]" "$wf_wheel"
env -u PYTHONPATH "$work/workflow/bin/python" "$repo/.ci/import_walk.py" kclf_workflow
