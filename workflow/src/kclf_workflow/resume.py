"""``make run``: Snakemake, resuming by itself after a killed run.

``python -m kclf_workflow.resume [snakemake arguments]`` runs ``snakemake <arguments>
--rerun-incomplete`` in the working folder (or the one ``--directory`` names).

A Snakemake killed outright (SIGKILL, a lost login node or power) leaves its lock in
``.snakemake/locks`` and the outputs of the jobs it was running marked incomplete; a plain
rerun then stops twice, asking for ``--unlock`` and then ``--rerun-incomplete``.
``--rerun-incomplete`` is always safe here: every output is written to a temporary file
and renamed into place, so an output is either whole or absent, and a job marked
incomplete is simply run again (docs/user_guide/caching.md, "After a crash").  The lock
is removed (``snakemake --unlock``) only when no Snakemake holds it:

* while it runs, this module holds an OS lock (``fcntl.flock``) on
  ``.snakemake/resume.lock`` and hands it on to Snakemake (``exec``); the kernel drops it
  when that process ends, SIGKILL included.  A second ``make run`` in the folder
  meanwhile stops at once with one line;
* holding that OS lock, Snakemake lock files are a killed run's unless a Snakemake was
  started by hand in the folder: running processes are looked for (psutil) whose command
  line runs Snakemake, or one of its job scripts, in this folder (their ``--directory``,
  else their working folder).  If there is one, nothing is removed and the run stops
  with one line naming it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import subprocess
import sys
from pathlib import Path

import psutil

logger = logging.getLogger(__name__)

LOCK_NAME = "resume.lock"


def workdir_of(args, cwd):
    """The folder a Snakemake command line ``args`` works in: its ``--directory`` (``-d``),
    else ``cwd``; resolved."""
    for k, arg in enumerate(args):
        if arg in ("--directory", "-d") and k + 1 < len(args):
            return (Path(cwd) / args[k + 1]).resolve()
        if arg.startswith("--directory="):
            return (Path(cwd) / arg.split("=", 1)[1]).resolve()
    return Path(cwd).resolve()


def _process_workdir(cmdline, cwd):
    """The folder of a running process if it is Snakemake or one of its job scripts
    (``<folder>/.snakemake/scripts/...``), else None."""
    for arg in cmdline:
        if "/.snakemake/" in arg:
            return Path(arg.split("/.snakemake/", 1)[0]).resolve()
    if any(Path(arg).name == "snakemake" for arg in cmdline[:2]) or cmdline[1:3] == [
        "-m",
        "snakemake",
    ]:
        return workdir_of(cmdline, cwd)
    return None


def running_snakemakes(folder, skip=()):
    """Pids of live processes that run Snakemake (or a job script of it) in ``folder``."""
    folder = Path(folder).resolve()
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if proc.pid in skip or not proc.info["cmdline"]:
            continue
        try:
            cwd = proc.cwd()
        except (psutil.Error, OSError):
            cwd = "/"
        if _process_workdir(proc.info["cmdline"], cwd) == folder:
            found.append(proc.pid)
    return found


def snakemake_locks(folder):
    """Snakemake's lock files in ``folder`` (left by a running or a killed Snakemake)."""
    return sorted((Path(folder) / ".snakemake" / "locks").glob("*.lock"))


def take_folder_lock(folder):
    """The OS lock of ``folder`` (an open file descriptor), or ``SystemExit`` with one line
    when another run of this module holds it."""
    state = Path(folder) / ".snakemake"
    state.mkdir(parents=True, exist_ok=True)
    fd = os.open(state / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SystemExit(
            f"kclf: another `make run` is running in {folder}: wait for it (or stop it) "
            "and run again"
        ) from None
    return fd


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    snakemake = str(Path(sys.executable).parent / "snakemake")
    folder = workdir_of(args, os.getcwd())
    fd = take_folder_lock(folder)
    if snakemake_locks(folder):
        me = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
        live = running_snakemakes(folder, skip=me)
        if live:
            raise SystemExit(
                f"kclf: {folder} is locked by a running Snakemake (pid "
                f"{', '.join(map(str, live))}): wait for it or stop it, then run again"
            )
        print(
            f"kclf: removing the lock a killed Snakemake left in {folder}/.snakemake/locks "
            "(no Snakemake runs there); incomplete jobs are run again",
            file=sys.stderr,
        )
        subprocess.run([snakemake, *args, "--unlock"], check=True, stdout=subprocess.DEVNULL)
    os.set_inheritable(fd, True)  # Snakemake holds the folder's lock until it ends
    os.execv(snakemake, [snakemake, *args, "--rerun-incomplete"])


if __name__ == "__main__":
    main()
