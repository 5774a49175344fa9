# Verified downloads (kclf_workflow.download.fetch): cache, then the local mirror, then the URL.
#
# Every public file the workflow needs becomes one rule download_<name> whose output is
# <cache_dir>/<name> (cache_dir and mirror are top-level config keys).  Declare a file
#   * in the config (schema: workflow/schemas/downloads.schema.yaml):
#         downloads:
#           ida/benchmarks.mat:
#             url: https://.../benchmarks.mat
#             sha256: 0123...cdef         # null: unknown, its hash is written to the log
#             mirror_relpath: ida/benchmarks.mat
#   * or from a family's .smk, included after this file:
#         VOC_TAR = download_file("voc/VOCtrainval_03-May-2010.tar", url=..., sha256=...)
#     and use VOC_TAR (the path <cache_dir>/<name>) as an input of the rule that reads it.
# An absent mirror, or one without the file, falls through to the URL.  Downloads run on
# the submitting host (localrule: compute nodes often have no internet); each takes one
# unit of the resource `downloads`, so `--resources downloads=1` fetches one at a time.

import os
import re

if "CORE_ENV" not in globals():  # included on its own, without common.smk

    include: "envs.smk"


DOWNLOADS = {}  # <cache_dir>/<name> -> its entry, one rule each


def mirror_copy(relpath):
    """``[<mirror>/<relpath>]`` when the mirror holds the file, else ``[]``."""
    mirror = config.get("mirror")
    path = os.path.join(mirror, relpath) if mirror else None
    return [path] if path and os.path.isfile(path) else []


def mirror_input(relpath, pinned):
    """The download rule's input: the mirror's copy.  A file whose hash the config pins is
    ``ancient``: a mirror re-stamped by a copy or a sync reruns nothing (what the file
    must hold is fixed by its hash, checked when it is fetched); a file of unknown hash is
    fetched again when the mirror's copy is newer than the cached one."""
    return [ancient(p) if pinned else p for p in mirror_copy(relpath)]


def mirror_param(relpath):
    """The download rule's ``mirror`` param: where the mirror holds the file (the rule's
    input), a function of that input (its path less ``relpath``), so the directory follows
    the input wherever a job's files are staged; else the configured mirror, which lacks
    it (the fetch logs so).  A function of the input is left out of Snakemake's record of
    params, so the second case stays a plain value: cached downloads are not redone."""
    if not mirror_copy(relpath):
        return config.get("mirror")
    return lambda wildcards, input: os.path.normpath(str(input[0])[: -len(relpath)])


def download_path(name):
    """Output path of the download named `name` (its path under cache_dir)."""
    return f"{config['cache_dir']}/{name}"


def download_file(name, url, sha256, mirror_relpath=None, md5=None):
    """Define rule download_<name> producing <cache_dir>/<name>; return that path.

    ``md5``: also check this MD5 (for files whose publisher gives only an MD5, as the
    PASCAL site's tar; its SHA-256 is then printed to the log when sha256 is null)."""
    if not name or os.path.isabs(name) or ".." in name.split("/"):
        raise ValueError(f"download name must be a relative path inside cache_dir, got {name!r}")
    target = download_path(name)
    entry = {"url": url, "sha256": sha256, "mirror_relpath": mirror_relpath or name, "md5": md5}
    if target in DOWNLOADS:
        if DOWNLOADS[target] != entry:
            raise ValueError(
                f"download {name!r} declared twice with different url/sha256/mirror_relpath: "
                f"{DOWNLOADS[target]} and {entry}"
            )
        return target
    DOWNLOADS[target] = entry

    rule:
        name:
            f"download_{re.sub('[^0-9A-Za-z_]', '_', name)}"
        input:
            mirror_input(mirror_relpath or name, pinned=bool(sha256 or md5)),
        output:
            target,
        log:
            f"results/logs/download/{name}.log",
        localrule: True
        conda:
            CORE_ENV
        resources:
            mem_mb=500,
            downloads=1,
        params:
            **({"md5": md5} if md5 else {}),
            url=url,
            sha256=sha256,
            mirror=mirror_param(mirror_relpath or name),
            mirror_relpath=mirror_relpath or name,
        script:
            "../scripts/download_fetch.py"

    return target


for _name, _entry in config.get("downloads", {}).items():
    download_file(
        _name, _entry["url"], _entry["sha256"], _entry.get("mirror_relpath"), _entry.get("md5")
    )
