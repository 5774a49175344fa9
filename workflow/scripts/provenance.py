import logging

from kclf import provenance

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)
prov = provenance.collect(
    dict(snakemake.config),
    repo_dir=snakemake.params.repo,
    benchmarks_dir=snakemake.params.benchmarks,
    lock_file=snakemake.params.lock,
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
