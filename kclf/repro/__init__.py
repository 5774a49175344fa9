"""The reproduction machinery the Snakemake workflow drives: what reproduces the tables.

Seeds (:mod:`.seeding`), tidy records and atomic writes (:mod:`.records`), verified
downloads (:mod:`.download`), file manifests (:mod:`.manifests`), the feature stages as
jobs and their files (:mod:`.shards`), the run's provenance
(:mod:`.provenance`), the data sets (:mod:`.datasets`), the experiments that fit and score
(:mod:`.experiments`) and every table and figure (:mod:`.reports`).

The rule of the house: this package imports the library (``kclf``'s estimators, kernels,
metrics, features), and nothing in the library imports this package.
"""
