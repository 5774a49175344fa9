# The two commands of the README:
#   make run  CORES=2   # set up .venv from the lock, run the default workflow
#   make test           # set up .venv from the lock, run the tests
#   make docs           # the documentation site into docs/_build/html (warnings are errors)
# Two distributions go into .venv, both editable and pinned by the lock: the library kclf
# (pyproject.toml) and the workflow's code kclf-workflow (workflow/pyproject.toml).
# The install step reruns only when requirements.lock or either pyproject.toml changed.
PYTHON ?= python3
CORES ?= 2
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs

.PHONY: install run test test-fast report lint clean-results docs clean-docs

$(STAMP): requirements.lock pyproject.toml workflow/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e . -e ./workflow
	touch $(STAMP)

install: $(STAMP)

# the doc tools pinned in requirements-docs.lock, on top of the project's lock
$(DOCS_STAMP): $(STAMP) requirements-docs.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock -r requirements-docs.lock
	touch $(DOCS_STAMP)

# runs the gallery's examples; -W: any warning fails the build
docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html

clean-docs:
	rm -rf docs/_build docs/api/generated docs/auto_examples docs/config docs/sg_execution_times.rst

# snakemake --cores $(CORES) --rerun-incomplete, first removing the lock a killed run
# left (workflow/src/kclf_workflow/resume.py; docs/user_guide/caching.md, "After a crash")
run: $(STAMP)
	$(BIN)/python -m kclf_workflow.resume --cores $(CORES)

# the test files spread over the machine's cores (pytest-xdist); a file's tests stay on one
# worker, so that its module-scoped fixtures (the workflow runs) are made once
PYTEST := $(BIN)/python -m pytest -q -n auto --dist loadfile

test: $(STAMP)
	$(PYTEST)

# everything but the workflow runs and the few slow maths tests (tests/conftest.py)
test-fast: $(STAMP)
	$(PYTEST) -m "not slow"

report: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --report results/report.html

lint: $(STAMP)
	$(BIN)/ruff check kclf tests benchmarks workflow/scripts workflow/src
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint

clean-results:
	rm -rf results/data results/records results/tables results/figures results/logs results/benchmarks
