"""Run every ``python`` code block of a page (the quickstart, the package index's
description) in order, in one namespace.

Run by ``.ci/package.sh`` with the Python of a fresh venv that holds only the built wheel
and its dependencies, from a folder outside the repository: the library installs and
works without the workflow or the checkout.  Usage: ``python quickstart.py PAGE.md``.
"""

import re
import sys
from pathlib import Path

page = Path(sys.argv[1])
blocks = re.findall(r"^```python\n(.*?)^```", page.read_text(), re.S | re.M)
if not blocks:
    sys.exit(f"{page}: no python code block")

import kclf  # noqa: E402

repo = Path(__file__).resolve().parents[1]
if Path(kclf.__file__).resolve().is_relative_to(repo):
    sys.exit(f"kclf imported from the checkout ({kclf.__file__}), not from the wheel")
print(f"kclf {kclf.__version__} from {Path(kclf.__file__).parent}")

namespace = {"__name__": "__quickstart__"}
for k, block in enumerate(blocks, 1):
    print(f"--- block {k} of {len(blocks)}", flush=True)
    exec(compile(block, f"{page.name}, block {k}", "exec"), namespace)
print(f"{page.name}: {len(blocks)} blocks ran")
