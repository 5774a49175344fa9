"""The first line of every rule script: its stderr and logging go to the rule's log.

    from _joblog import to_rule_log

    log = to_rule_log(snakemake)

After this call a traceback, a warning or anything a library prints to stderr (Python or
C level) lands in ``snakemake.log[0]``, so a failed job's rule log says why, on a
workstation as on a SLURM node.  Python-level stderr (tracebacks, warnings) is also still
shown on the console Snakemake runs in.  Only the standard library is imported here, so
the redirection is in place before numpy, scikit-learn or kclf are imported.
(Snakemake puts this folder on the script's ``sys.path``.)
"""

import logging
import os
import sys

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _Tee:
    """A text stream writing to several streams (the rule log and the console)."""

    def __init__(self, *streams):
        self._streams = streams

    def write(self, text):
        for s in self._streams:
            s.write(text)
            s.flush()
        return len(text)

    def flush(self):
        for s in self._streams:
            s.flush()

    def isatty(self):
        return False

    @property
    def closed(self):  # libraries check it before writing (PyStan's clikit output)
        return any(s.closed for s in self._streams)

    def writable(self):
        return True

    @property
    def encoding(self):
        return self._streams[0].encoding

    def fileno(self):
        return self._streams[0].fileno()


def to_rule_log(snakemake, level=logging.INFO):
    """Send stderr, warnings and :mod:`logging` of this job to its rule's log; return a
    logger named after the rule."""
    name = getattr(snakemake, "rule", None) or "job"
    if not snakemake.log:
        logging.basicConfig(level=level, format=FORMAT, force=True)
        return logging.getLogger(name)
    path = str(snakemake.log[0])
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    log = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives with the job
    sys.stderr.flush()
    console = os.fdopen(os.dup(2), "w", buffering=1, encoding="utf-8", errors="replace")
    os.dup2(log.fileno(), 2)  # C-level writes (BLAS, solvers, decoders) go to the log
    sys.stderr = _Tee(log, console)
    logging.basicConfig(stream=log, level=level, format=FORMAT, force=True)
    logging.captureWarnings(True)
    return logging.getLogger(name)
