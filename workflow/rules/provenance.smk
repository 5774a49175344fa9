from kclf_workflow.provenance import config_hash

# Provenance of the run: config hash, code version, packages, machine, per-rule run times.
# Its input is every other final output (a function, so families included after this
# file count too): it runs last, when the benchmark files it summarises are all written.
PROVENANCE_OUTPUTS = ["results/provenance.json", "results/provenance.html"]


rule provenance:
    input:
        outputs=lambda wc: [str(f) for f in FINAL_OUTPUTS if str(f) not in PROVENANCE_OUTPUTS],
        lock=str(WORKFLOW_ROOT / "requirements.lock"),
    output:
        json=PROVENANCE_OUTPUTS[0],
        html=report(
            PROVENANCE_OUTPUTS[1],
            caption="../report/provenance.rst",
            category="Provenance",
        ),
    log:
        "results/logs/provenance/all.log",
    localrule: True
    conda:
        CORE_ENV
    resources:
        mem_mb=500,
        runtime=5,
    params:
        # it records the config: rewritten whenever the config changes
        config_sha256=config_hash(config),
        repo=lambda wildcards, input: str(Path(input.lock).parent),
        benchmarks="results/benchmarks",
    script:
        "../scripts/provenance.py"


FINAL_OUTPUTS += PROVENANCE_OUTPUTS
