"""kclf_workflow.download against a real HTTP server on 127.0.0.1 started by the test."""

import hashlib
import http.server
import io
import json
import logging
import os
import socket
import subprocess
import sys
import tarfile
import threading
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from kclf_workflow.download import ChecksumError, DownloadError, fetch, untar
from kclf_workflow.files import file_sha256

PAYLOAD = b"x1,x2,y\n0.5,1.5,1\n-0.5,0.25,-1\n"
SHA = hashlib.sha256(PAYLOAD).hexdigest()
WRONG = "0" * 64


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):
        self.server.requests.append(self.path)
        super().do_GET()


@pytest.fixture
def server(tmp_path):
    """Serve ``tmp_path/www`` on a free port; ``server.requests`` lists the paths asked."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "data.csv").write_bytes(PAYLOAD)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(www)))
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.www = www
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_good_file_is_downloaded_and_verified(server, tmp_path):
    path = fetch(f"{server.url}/data.csv", SHA, cache_dir=tmp_path / "cache")
    assert path == (tmp_path / "cache" / "data.csv").resolve()
    assert path.read_bytes() == PAYLOAD
    assert server.requests == ["/data.csv"]


def test_cache_hit_makes_no_request(server, tmp_path):
    first = fetch(f"{server.url}/data.csv", SHA, cache_dir=tmp_path / "cache")
    second = fetch(f"{server.url}/data.csv", f"sha256:{SHA.upper()}", cache_dir=tmp_path / "cache")
    assert first == second
    assert server.requests == ["/data.csv"]


def test_wrong_checksum_deletes_file_and_names_url_and_hashes(server, tmp_path):
    cache = tmp_path / "cache"
    url = f"{server.url}/data.csv"
    with pytest.raises(ChecksumError) as err:
        fetch(url, WRONG, cache_dir=cache)
    msg = str(err.value)
    assert url in msg and WRONG in msg and SHA in msg
    assert len(msg.splitlines()) == 1
    assert not cache.exists() or list(cache.iterdir()) == []


def test_server_down_gives_one_line_error_naming_url(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/data.csv"
    with pytest.raises(DownloadError) as err:
        fetch(url, SHA, cache_dir=tmp_path / "cache")
    msg = str(err.value)
    assert url in msg and len(msg.splitlines()) == 1
    assert "refused" in msg.lower()


def test_missing_file_on_server_names_url(server, tmp_path):
    url = f"{server.url}/absent.csv"
    with pytest.raises(DownloadError, match="404") as err:
        fetch(url, SHA, cache_dir=tmp_path / "cache")
    assert url in str(err.value)


def test_mirror_hit_never_contacts_server(server, tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "sub").mkdir(parents=True)
    (mirror / "sub" / "copy.csv").write_bytes(PAYLOAD)
    path = fetch(
        f"{server.url}/data.csv",
        SHA,
        cache_dir=tmp_path / "cache",
        mirror=mirror,
        mirror_relpath="sub/copy.csv",
    )
    assert path.read_bytes() == PAYLOAD and path.name == "data.csv"
    assert server.requests == []
    # the server can be gone: the cache answers now
    server.shutdown()
    assert fetch(f"{server.url}/data.csv", SHA, cache_dir=tmp_path / "cache") == path


def test_mirror_without_the_file_falls_back_to_url(server, tmp_path):
    (tmp_path / "mirror").mkdir()
    path = fetch(
        f"{server.url}/data.csv", SHA, cache_dir=tmp_path / "cache", mirror=tmp_path / "mirror"
    )
    assert path.read_bytes() == PAYLOAD
    assert server.requests == ["/data.csv"]


def test_missing_mirror_directory_falls_back_to_url(server, tmp_path):
    absent = tmp_path / "no_such_mirror"
    path = fetch(f"{server.url}/data.csv", SHA, cache_dir=tmp_path / "cache", mirror=absent)
    assert path.read_bytes() == PAYLOAD and server.requests == ["/data.csv"]


def test_missing_mirror_and_server_down_names_both(tmp_path):
    absent = tmp_path / "no_such_mirror"
    url = f"http://127.0.0.1:{_closed_port()}/data.csv"
    with pytest.raises(DownloadError) as err:
        fetch(url, SHA, cache_dir=tmp_path / "cache", mirror=absent)
    msg = str(err.value)
    assert url in msg and f"mirror directory not found: {absent}" in msg
    assert len(msg.splitlines()) == 1


def test_corrupt_mirror_file_is_an_error_and_not_cached(server, tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "data.csv").write_bytes(PAYLOAD + b"tampered")
    with pytest.raises(ChecksumError) as err:
        fetch(f"{server.url}/data.csv", SHA, cache_dir=tmp_path / "cache", mirror=mirror)
    assert str(mirror / "data.csv") in str(err.value) and SHA in str(err.value)
    assert not (tmp_path / "cache" / "data.csv").exists()
    assert server.requests == []


def test_a_checksum_message_names_what_was_deleted_and_what_was_kept(server, tmp_path):
    """A bad mirror file is kept and named; the mismatching cached copy it was meant to
    replace is named as deleted (not "file deleted" after the mirror's path); a bad
    download says it was deleted and that nothing is cached."""
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    mirror.mkdir()
    cache.mkdir()
    (mirror / "data.csv").write_bytes(PAYLOAD + b"tampered")
    (cache / "data.csv").write_bytes(b"half a fil")
    with pytest.raises(ChecksumError) as err:
        fetch(f"{server.url}/data.csv", SHA, cache_dir=cache, mirror=mirror)
    msg = str(err.value)
    cached = (cache / "data.csv").resolve()
    assert f"mirror file {mirror / 'data.csv'}: expected sha256 {SHA}" in msg
    assert f"the mirror's file is kept, not copied; the cached copy {cached}" in msg
    assert msg.endswith("was deleted)") and "file deleted" not in msg
    assert (mirror / "data.csv").is_file() and not cached.exists()
    with pytest.raises(ChecksumError) as err:
        fetch(f"{server.url}/data.csv", WRONG, cache_dir=tmp_path / "other")
    msg = str(err.value)
    other = (tmp_path / "other" / "data.csv").resolve()
    assert msg.endswith(f"(the download was deleted; nothing is cached at {other})"), msg


def test_corrupt_cache_is_replaced(server, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "data.csv").write_bytes(b"half a fil")
    path = fetch(f"{server.url}/data.csv", SHA, cache_dir=cache)
    assert path.read_bytes() == PAYLOAD
    assert server.requests == ["/data.csv"]


def test_unknown_hash_is_logged_and_then_cached(server, tmp_path, caplog):
    url = f"{server.url}/data.csv"
    with caplog.at_level(logging.WARNING, logger="kclf_workflow.download"):
        path = fetch(url, None, cache_dir=tmp_path / "cache")
    assert any(SHA in r.getMessage() for r in caplog.records if r.name == "kclf_workflow.download")
    assert fetch(url, "print", cache_dir=tmp_path / "cache") == path
    assert server.requests == ["/data.csv"]


@pytest.mark.parametrize("as_rule", [False, True])
def test_unknown_hash_reaches_stderr_or_the_rule_log(server, tmp_path, as_rule):
    """Through the module logger only: a plain session (no logging configured) shows it
    on stderr, a workflow job (workflow/scripts/_joblog.py) in its rule log."""
    log = tmp_path / "logs" / "voc_download.log"
    rule = (
        f"sys.path.append({str(REPO / 'workflow' / 'scripts')!r})\n"
        f"snakemake = types.SimpleNamespace(log=[{str(log)!r}], rule='voc_download')\n"
        "from _joblog import to_rule_log\nto_rule_log(snakemake)\n"
    )
    script = (
        "import sys, types\n"
        + (rule if as_rule else "")
        + "from kclf_workflow.download import fetch\n"
        + f"fetch({server.url + '/data.csv'!r}, None, cache_dir={str(tmp_path / 'c')!r})\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    if as_rule:
        assert f"WARNING kclf_workflow.download: sha256 of {server.url}" in log.read_text()
        assert SHA in log.read_text()
    else:
        assert SHA in proc.stderr


@pytest.mark.parametrize("bad", ["", "abc", "g" * 64, 42])
def test_malformed_hash_is_rejected(bad, tmp_path):
    with pytest.raises(ValueError, match="sha256"):
        fetch("http://127.0.0.1:9/x.csv", bad, cache_dir=tmp_path)


def test_untar_processor_extracts_members(server, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("set/data.csv")
        info.size = len(PAYLOAD)
        tar.addfile(info, io.BytesIO(PAYLOAD))
    (server.www / "set.tar.gz").write_bytes(buf.getvalue())
    sha = file_sha256(server.www / "set.tar.gz")
    files = fetch(f"{server.url}/set.tar.gz", sha, cache_dir=tmp_path / "c", processor=untar())
    assert len(files) == 1 and files[0].endswith("set/data.csv")
    with open(files[0], "rb") as f:
        assert f.read() == PAYLOAD
    again = fetch(f"{server.url}/set.tar.gz", sha, cache_dir=tmp_path / "c", processor=untar())
    assert again == files and server.requests == ["/set.tar.gz"]


# --- the Snakemake rule (workflow/rules/download.smk) -----------------------------------

REPO = Path(__file__).resolve().parents[2]


def _snakemake(workdir, *args):
    return subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--directory", str(workdir), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _workflow(tmp_path, entries, mirror=None):
    wd = tmp_path / "wf"
    wd.mkdir(exist_ok=True)
    (wd / "Snakefile").write_text(
        'configfile: "config.yaml"\n'
        f'include: "{REPO}/workflow/rules/download.smk"\n'
        "rule all:\n    input: list(DOWNLOADS)\n    default_target: True\n"
    )
    config = {
        "cache_dir": "resources",
        "mirror": None if mirror is None else str(mirror),
        "downloads": entries,
    }
    (wd / "config.yaml").write_text(json.dumps(config))
    return wd


@pytest.mark.slow
def test_download_rule_fetches_once_and_fails_naming_the_culprit(server, tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "m").mkdir(parents=True)
    (mirror / "m" / "other.csv").write_bytes(PAYLOAD)
    big = np.random.default_rng(0).bytes(1_500_000)
    (mirror / "m" / "big.bin").write_bytes(big)
    entries = {
        "toy/data.csv": {"url": f"{server.url}/data.csv", "sha256": SHA},
        "toy/from_mirror.csv": {
            "url": f"{server.url}/never.csv",
            "sha256": SHA,
            "mirror_relpath": "m/other.csv",
        },
        # over Snakemake's checksum size (1 MB), so only mtimes tell it of a change
        "toy/pinned.bin": {
            "url": f"{server.url}/never.bin",
            "sha256": hashlib.sha256(big).hexdigest(),
            "mirror_relpath": "m/big.bin",
        },
        "toy/unknown.bin": {
            "url": f"{server.url}/never.bin",
            "sha256": None,
            "mirror_relpath": "m/big.bin",
        },
    }
    wd = _workflow(tmp_path, entries, mirror=mirror)
    run = _snakemake(wd, "-s", str(wd / "Snakefile"))
    assert run.returncode == 0, run.stderr
    assert (wd / "resources/toy/data.csv").read_bytes() == PAYLOAD
    assert (wd / "resources/toy/from_mirror.csv").read_bytes() == PAYLOAD
    assert server.requests == ["/data.csv"]
    assert (wd / "results/logs/download/toy/data.csv.log").exists()
    again = _snakemake(wd, "-s", str(wd / "Snakefile"))
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr
    assert server.requests == ["/data.csv"]
    # the mirror re-stamped (a copy, a sync): the file its hash pins is not fetched again,
    # the one of unknown hash is
    later = (wd / "resources/toy/pinned.bin").stat().st_mtime + 100
    os.utime(mirror / "m" / "big.bin", (later, later))
    plan = _snakemake(wd, "-s", str(wd / "Snakefile"), "-n")
    out = plan.stdout + plan.stderr
    assert plan.returncode == 0, out
    assert "rule download_toy_unknown_bin" in out
    assert "rule download_toy_pinned_bin" not in out

    bad = _workflow(tmp_path, {"toy/bad.csv": {"url": f"{server.url}/data.csv", "sha256": WRONG}})
    run = _snakemake(bad, "-s", str(bad / "Snakefile"))
    assert run.returncode != 0
    line = next(x for x in run.stderr.splitlines() if "download failed" in x)
    assert f"{server.url}/data.csv" in line and WRONG in line and SHA in line
    assert not (bad / "resources/toy/bad.csv").exists()


def _schema_errors(downloads):
    import jsonschema
    import yaml

    schema = yaml.safe_load((REPO / "workflow/schemas/downloads.schema.yaml").read_text())
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(downloads)]


def test_downloads_schema():
    good = {"ida/b.mat": {"url": "https://x.org/b.mat", "sha256": SHA, "mirror_relpath": "i/b"}}
    assert _schema_errors(good) == []
    assert _schema_errors({"a.csv": {"url": "https://x.org/a.csv", "sha256": None}}) == []
    assert _schema_errors({"a.csv": {"url": "https://x.org/a.csv", "sha256": "abc"}})
    assert _schema_errors({"a.csv": {"url": "x.org/a.csv", "sha256": SHA}})
    assert _schema_errors({"a.csv": {"url": "https://x.org/a.csv"}})  # sha256 required
    assert _schema_errors({"a.csv": {"url": "https://x.org/a", "sha256": SHA, "md5": "1"}})
    assert _schema_errors({"/etc/a": {"url": "https://x.org/a", "sha256": SHA}})


def test_real_mirror_file_with_its_published_hash(shared_data, tmp_path):
    sums = dict(
        reversed(line.split(maxsplit=1))
        for line in (shared_data / "SHA256SUMS").read_text().splitlines()
        if line.strip()
    )
    sha = sums["./ida/unique_xt/thyroid.mat"]
    url = f"http://127.0.0.1:{_closed_port()}/thyroid.mat"  # never contacted
    path = fetch(
        url, sha, cache_dir=tmp_path, mirror=shared_data, mirror_relpath="ida/unique_xt/thyroid.mat"
    )
    assert file_sha256(path) == sha
    assert path.read_bytes() == (shared_data / "ida/unique_xt/thyroid.mat").read_bytes()


def test_every_fetch_is_one_local_download_rule(tmp_path):
    """The workflow fetches files only through download_file's rules, which are local (a
    compute node under the SLURM profile may have no internet): the VOC tar, MULAN's
    scene archive and ESC-50, all planned at once from a config that needs them."""
    import re

    import workflow_run as wf

    scripts = sorted((REPO / "workflow" / "scripts").glob("*.py"))
    fetching = [p.name for p in scripts if re.search(r"\bfetch\(|pooch|urlopen", p.read_text())]
    assert fetching == ["download_fetch.py"]

    cfg = wf.tiny_config("tiny")
    cfg["mirror"] = None
    cfg["voc"].update(enabled=True, source="download")
    cfg["multilabel"].update(enabled=True, datasets=["scene"], download_scene=True)
    cfg["audio"].update(enabled=True, source="esc50", root=None)
    (tmp_path / "config.yaml").write_text(wf.yaml.safe_dump(cfg))
    out = wf.run(tmp_path, "--dry-run", cores=1).stdout
    downloads = set(re.findall(r"^(?:local)?rule (download_\w+):", out, re.M))
    assert downloads == {
        "download_voc_VOCtrainval_03_May_2010_tar",
        "download_mulan_scene_rar",
        "download_audio_ESC_50_master_zip",
    }
    rules = {p.name: p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk")}
    users = [n for n, text in rules.items() if "download_fetch.py" in text]
    assert users == ["download.smk"]  # the rule download_file defines, the only one
    body = rules["download.smk"].split("    rule:", 1)[1]
    assert "localrule: True" in body.split("script:", 1)[0]
