"""kclf_workflow: the Python code of the Snakemake workflow that reproduces the tables.

Seeds (:mod:`.seeding`), tidy records and atomic writes (:mod:`.records`), verified
downloads (:mod:`.download`), file manifests (:mod:`.manifests`), the feature stages as
jobs and their files (:mod:`.shards`), the run's provenance (:mod:`.provenance`), the
registry of every family's methods (:mod:`.methods`), the data sets (:mod:`.datasets`),
the experiments that fit and score (:mod:`.experiments`) and every table and figure
(:mod:`.reports`).

The rule of the house: this package uses the library ``kclf`` through its public names
only (its estimators, kernels, metrics, features), and nothing in the library imports
this package.
"""

__version__ = "0.3.0.dev0"  # the one source: workflow/pyproject.toml reads it
