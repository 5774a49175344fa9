"""Freesound API v2 client against a local server that serves the documented shapes:
text search pages ``{count, next, previous, results: [{id, tags, duration, previews}]}``,
token authentication, preview files."""

import http.server
import io
import json
import threading
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
import soundfile as sf
from freesound_api import fetch_freesound_by_tags

from kclf.features.audio import AudioFeatureConfig, clip_features
from kclf_workflow.datasets.audio_collections import load_freesound_folder

TOKEN = "test-token-123"


def _ogg(freq):
    buf = io.BytesIO()
    t = np.arange(16000 * 3) / 16000
    sf.write(buf, 0.3 * np.sin(2 * np.pi * freq * t), 16000, format="OGG", subtype="VORBIS")
    return buf.getvalue()


CLIPS = {
    101: (["dog", "bark"], 3.0, _ogg(300)),
    102: (["dog", "street"], 3.0, _ogg(500)),
    103: (["dog"], 3.0, _ogg(700)),
    201: (["rain", "street"], 3.0, _ogg(900)),
}


@pytest.fixture
def server():
    requests_seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, code, body, ctype):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            requests_seen.append((self.path, self.headers.get("Authorization")))
            if self.headers.get("Authorization") != f"Token {TOKEN}":
                return self._send(401, b'{"detail": "Invalid token."}', "application/json")
            url = urlparse(self.path)
            if url.path.startswith("/previews/"):
                cid = int(url.path.split("/")[-1].split("-")[0])
                return self._send(200, CLIPS[cid][2], "audio/ogg")
            q = parse_qs(url.query)
            tag = q["filter"][0].split('"')[1]
            assert "duration:[3.0 TO 60.0]" in q["filter"][0]
            ids = [c for c, (tags, _, _) in CLIPS.items() if tag in tags]
            page, size = int(q.get("page", ["1"])[0]), 2
            chunk = ids[(page - 1) * size : page * size]
            base = f"http://127.0.0.1:{self.server.server_port}"
            nxt = None
            if page * size < len(ids):
                nxt = f"{base}/apiv2/search/text/?filter={q['filter'][0]}&page={page + 1}"
            body = {
                "count": len(ids),
                "next": nxt,
                "previous": None,
                "results": [
                    {
                        "id": c,
                        "tags": CLIPS[c][0],
                        "duration": CLIPS[c][1],
                        "previews": {
                            "preview-hq-ogg": f"{base}/previews/{c}-hq.ogg",
                            "preview-hq-mp3": f"{base}/previews/{c}-hq.mp3",
                        },
                    }
                    for c in chunk
                ],
            }
            return self._send(200, json.dumps(body).encode(), "application/json")

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.seen = requests_seen
    httpd.base = f"http://127.0.0.1:{httpd.server_port}/apiv2"
    yield httpd
    httpd.shutdown()


def test_fetch_by_tags_pages_dedupes_and_writes_the_layout(server, tmp_path, monkeypatch):
    monkeypatch.setenv("FREESOUND_API_KEY", TOKEN)
    meta = fetch_freesound_by_tags(["dog", "street"], tmp_path, n_per_tag=10, base_url=server.base)
    # dog: 3 clips over 2 pages; street: 102 (already fetched) and 201
    assert meta["id"].tolist() == ["101", "102", "103", "201"]
    assert meta.set_index("id").loc["102", "tags"] == "dog street"
    assert all(auth == f"Token {TOKEN}" for _, auth in server.seen)
    assert sum(p.startswith("/previews/102") for p, _ in server.seen) == 1
    df = load_freesound_folder(tmp_path)
    assert df["tags"].tolist()[0] == ("dog", "bark")
    F = clip_features(df["path"][0], AudioFeatureConfig(sample_rate=16000))
    assert F.shape[0] == 1 + 3 * 16000 // 320
    # a second call downloads no audio again
    n = len(server.seen)
    fetch_freesound_by_tags(["dog"], tmp_path, n_per_tag=1, base_url=server.base)
    assert all(not p.startswith("/previews/") for p, _ in server.seen[n:])


def test_token_comes_from_the_environment_and_errors_are_clear(server, tmp_path, monkeypatch):
    monkeypatch.delenv("FREESOUND_API_KEY", raising=False)
    with pytest.raises(ValueError, match="FREESOUND_API_KEY"):
        fetch_freesound_by_tags("dog", tmp_path, base_url=server.base)
    monkeypatch.setenv("FREESOUND_API_KEY", "wrong")
    with pytest.raises(ValueError, match="answered 401"):
        fetch_freesound_by_tags("dog", tmp_path, base_url=server.base)
