#!/usr/bin/env bash
# The release as a user gets it: the sdist and the wheel built (python -m build) and checked
# (twine check), the wheel's licence and version checked, CITATION.cff validated against the
# Citation File Format schema (cffconvert), then the wheel installed into a fresh venv and
# the quickstart run there from a folder outside the repository (the library installs and
# works without the workflow). The tools come pinned from requirements-release.lock, the
# wheel's dependencies at requirements.lock's versions.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/tools"
"$work/tools/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r requirements-release.lock
"$work/tools/bin/python" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log"; exit 1; }
"$work/tools/bin/twine" check --strict "$work"/dist/*
"$work/tools/bin/cffconvert" --validate -i CITATION.cff

wheel=$(ls "$work"/dist/kclf-*.whl)
version=$(python3 -c 'import ast, sys; t = ast.parse(open("kclf/__init__.py").read())
print(next(n.value.value for n in t.body if isinstance(n, ast.Assign)
           and getattr(n.targets[0], "id", "") == "__version__"))')
case "$wheel" in
  */kclf-"$version"-py3-none-any.whl) ;;
  *) echo "wheel $wheel does not carry kclf.__version__ $version"; exit 1 ;;
esac
test -f "$work/dist/kclf-$version.tar.gz" || { echo "no sdist kclf-$version.tar.gz"; exit 1; }
python3 - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
licences = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
assert licences, "the wheel carries no LICENSE"
assert not any(n.startswith(("workflow/", "tests/", "docs/")) for n in names), "workflow files in the wheel"
print(f"wheel: {len(names)} files, {licences[0]}")
PY

python3 -m venv "$work/user"
"$work/user/bin/python" -m pip install --quiet --disable-pip-version-check \
  -c requirements.lock "$wheel"
cd "$work"
env -u PYTHONPATH "$work/user/bin/python" -c "
import importlib.metadata as m, kclf
assert m.version('kclf') == kclf.__version__, (m.version('kclf'), kclf.__version__)
print('installed kclf', kclf.__version__, m.metadata('kclf')['License-Expression'])"
env -u PYTHONPATH OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
  "$work/user/bin/python" "$repo/.ci/quickstart.py" "$repo/docs/user_guide/quickstart.md"
