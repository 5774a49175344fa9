"""What the workflow decides while Snakemake parses its rule files, as plain Python.

The rule files (``workflow/rules/*.smk``) keep the rules' declarations and call these
functions of the config for everything else: which files a rule reads, which data source
a family uses, how its items fall into shards, which config entries a job's params hold.
None of them imports Snakemake, so each is unit-tested on its own
(``tests/repro/test_plans.py``).  A config no job can run raises
:class:`kclf.repro.config_checks.ConfigError` with one line naming the key.

* :mod:`~kclf.repro.plans.common`: shared by every family (the config's validation and
  key order, trial chunks, params, mirror and user files, manifests' params);
* one module per family with data sources to choose or list: :mod:`~kclf.repro.plans.voc`,
  :mod:`~kclf.repro.plans.audio`, :mod:`~kclf.repro.plans.ida`,
  :mod:`~kclf.repro.plans.multiclass`, :mod:`~kclf.repro.plans.multilabel`,
  :mod:`~kclf.repro.plans.benchmark`.
"""
