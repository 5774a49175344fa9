"""Import every module of a package: ``python import_walk.py PACKAGE [PACKAGE ...]``
prints how many modules of each imported (run by .ci/package.sh in fresh venvs holding the
built wheels only; ``module_names`` is what tests/repro/test_workflow_package.py walks)."""

import importlib
import pkgutil
import sys


def module_names(package):
    """Every module of ``package``, the package itself first, sorted."""
    root = importlib.import_module(package)
    walked = pkgutil.walk_packages(root.__path__, f"{package}.")
    return [package, *sorted(m.name for m in walked)]


if __name__ == "__main__":
    for package in sys.argv[1:]:
        names = module_names(package)
        for name in names:
            importlib.import_module(name)
        print(f"{package}: {len(names)} modules imported")
