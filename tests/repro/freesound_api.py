"""The Freesound API v2 client the audio tests exercise against a local server
(tests/repro/test_audio_freesound_api.py): clips fetched by tag into the Freesound-style
layout that :func:`kclf_workflow.datasets.audio_collections.load_freesound_folder` reads.

The workflow itself never calls the API (the paper's crawl is not public; its audio
configs read ESC-50, UrbanSound8K or a Freesound-style folder a user fetched); this is a
test helper, kept here so that the package ships no code only its tests run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import requests

from kclf_workflow.files import atomic_write

FREESOUND_API = "https://freesound.org/apiv2"
FREESOUND_TOKEN_ENV = "FREESOUND_API_KEY"


def fetch_freesound_by_tags(
    tags,
    root,
    n_per_tag=50,
    *,
    min_seconds=3.0,
    max_seconds=60.0,
    preview="preview-hq-ogg",
    token_env=FREESOUND_TOKEN_ENV,
    base_url=FREESOUND_API,
    page_size=150,
    timeout=60,
):
    """Fetch clips by tag from the Freesound API v2 into the Freesound-style layout.

    For each tag, ``GET {base_url}/search/text/?filter=tag:<tag> duration:[min TO max]``
    (fields ``id, tags, duration, previews``), following ``next`` pages until
    ``n_per_tag`` clips; each clip's ``preview`` (an OGG or MP3 rendition: downloading
    originals needs OAuth2) is saved as ``root/audio/<id>.<ext>`` and ``root/metadata.csv``
    lists ``id, file, tags, duration`` (all of the clip's Freesound tags).  Files already
    present are not downloaded again.

    The API key is read from the environment variable ``token_env`` (never from a config
    file) and sent as ``Authorization: Token <key>``.  Returns the metadata DataFrame.
    """
    token = os.environ.get(token_env)
    if not token:
        raise ValueError(
            f"the Freesound API key must be in the environment variable {token_env} "
            "(https://freesound.org/apiv2/apply)"
        )
    if isinstance(tags, str):
        tags = [tags]
    root = Path(root)
    session = requests.Session()
    session.headers["Authorization"] = f"Token {token}"

    def get(url, **kw):
        try:
            r = session.get(url, timeout=timeout, **kw)
        except requests.RequestException as exc:
            raise ValueError(f"Freesound API request failed: {url}: {exc}") from None
        if r.status_code != 200:
            raise ValueError(f"Freesound API answered {r.status_code} for {r.url}: {r.text[:200]}")
        return r

    rows = {}
    for tag in tags:
        url = f"{base_url.rstrip('/')}/search/text/"
        params = {
            "query": "",
            "filter": f'tag:"{tag}" duration:[{min_seconds} TO {max_seconds}]',
            "fields": "id,tags,duration,previews",
            "page_size": int(page_size),
        }
        got = 0
        while url and got < n_per_tag:
            page = get(url, params=params).json()
            params = None  # "next" carries the query
            for hit in page.get("results", []):
                if got >= n_per_tag:
                    break
                cid = str(hit["id"])
                got += 1
                if cid in rows:
                    continue
                link = (hit.get("previews") or {}).get(preview)
                if not link:
                    raise ValueError(f"Freesound clip {cid} has no {preview!r} preview")
                rel = f"audio/{cid}{Path(link.split('?')[0]).suffix or '.ogg'}"
                target = root / rel
                if not target.is_file():
                    data = get(link).content
                    atomic_write(target, lambda p, data=data: Path(p).write_bytes(data))
                rows[cid] = {
                    "id": cid,
                    "file": rel,
                    "tags": " ".join(str(t).lower() for t in hit.get("tags", [])),
                    "duration": float(hit["duration"]),
                }
            url = page.get("next")
    meta = pd.DataFrame(list(rows.values()), columns=["id", "file", "tags", "duration"])
    atomic_write(root / "metadata.csv", lambda p: meta.to_csv(p, index=False))
    return meta
