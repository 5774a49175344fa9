from _joblog import to_rule_log

to_rule_log(snakemake)

import logging

from kclf_workflow import provenance

prov = provenance.collect(
    dict(snakemake.config),
    repo_dir=snakemake.params.repo,
    benchmarks_dir=snakemake.params.benchmarks,
    lock_file=snakemake.input.lock,
)
provenance.write_json(prov, snakemake.output.json)
provenance.write_html(prov, snakemake.output.html)
logging.info(
    "config %s, commit %s, %d rules timed, lock mismatches: %s",
    prov["config_sha256"],
    prov["git"]["commit"],
    len(prov["rules"]),
    prov["lock_mismatches"],
)
