"""What the workflow decides while Snakemake parses its rule files, as plain Python.

The rule files (``workflow/rules/*.smk``) keep the rules' declarations and call these
functions of the config for everything else: which files a rule reads, which data source
a family uses, how its items fall into shards, which config entries a job's params hold.
None of them imports Snakemake, so each is unit-tested on its own
(``tests/repro/test_plans.py``).  A config no job can run raises
:class:`kclf_workflow.config_checks.ConfigError` with one line naming the key.

* :mod:`~kclf_workflow.plans.common`: shared by every family (the config's validation and
  key order, trial chunks, params, mirror and user files, manifests' params);
* one module per family with data sources to choose or list: :mod:`~kclf_workflow.plans.voc`,
  :mod:`~kclf_workflow.plans.audio`, :mod:`~kclf_workflow.plans.ida`,
  :mod:`~kclf_workflow.plans.multiclass`, :mod:`~kclf_workflow.plans.multilabel`,
  :mod:`~kclf_workflow.plans.benchmark`.
"""
