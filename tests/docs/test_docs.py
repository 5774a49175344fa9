"""The built documentation (``make docs``): pages render, images load, internal links resolve.

Skipped, with the reason, where ``docs/_build/html`` has not been built; the Chromium
checks are skipped where no Chromium is installed (``.ci/run`` installs Debian's
``chromium`` package).  CI runs these after ``make docs`` (``pytest -m docs``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "docs" / "_build" / "html"
PAGES = {
    "index": "index.html",
    "api": "api/generated/kclf.LSPC.html",
    "config": "config/index.html",
    "gallery": "auto_examples/plot_lspc_toy.html",
}

pytestmark = [
    pytest.mark.docs,
    pytest.mark.skipif(
        not (HTML / "index.html").exists(), reason="docs/_build/html not built (run make docs)"
    ),
]


class Page(HTMLParser):
    """Links, images, ids and the title of one HTML file."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.images, self.ids, self.title = [], [], set(), ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag in ("a", "link") and attrs.get("href"):
            if (
                tag == "a"
                or attrs.get("rel") == ["stylesheet"]
                or "stylesheet" in str(attrs.get("rel"))
            ):
                self.links.append(attrs["href"])
        if tag == "img" and attrs.get("src"):
            self.images.append(attrs["src"])
        if tag == "title":
            self._in_title = True

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


_parsed = {}


def parse(path):
    path = Path(path).resolve()
    if path not in _parsed:
        page = Page()
        page.feed(path.read_text(encoding="utf-8", errors="replace"))
        _parsed[path] = page
    return _parsed[path]


def internal_targets(path):
    """``(href, file, fragment)`` of every link of ``path`` into the built site."""
    page = parse(path)
    for href in page.links:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
            continue
        target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
        if target.is_dir():
            target = target / "index.html"
        yield href, target, unquote(parts.fragment)


def valid_image(path):
    data = path.read_bytes()
    if path.suffix.lower() == ".png":
        from PIL import Image

        with Image.open(path) as im:
            im.verify()
        return data.startswith(b"\x89PNG\r\n\x1a\n")
    if path.suffix.lower() == ".svg":
        return b"<svg" in data[:2000]
    return len(data) > 0


def all_pages():
    skip = {"_modules", "_static", "_sources"}
    return sorted(p for p in HTML.rglob("*.html") if not skip & set(p.relative_to(HTML).parts))


def test_every_internal_link_resolves():
    broken = []
    for path in all_pages():
        for href, target, fragment in internal_targets(path):
            if not target.exists():
                broken.append(f"{path.relative_to(HTML)}: {href} (no file)")
            elif fragment and target.suffix == ".html" and fragment not in parse(target).ids:
                broken.append(f"{path.relative_to(HTML)}: {href} (no anchor #{fragment})")
    assert broken == [], "\n".join(broken[:40])


@pytest.mark.parametrize("name", sorted(PAGES))
def test_page_images_exist_and_are_valid(name):
    path = HTML / PAGES[name]
    assert path.exists(), f"{PAGES[name]} was not built"
    page = parse(path)
    assert page.title.strip(), f"{PAGES[name]} has no title"
    for src in page.images:
        if urlsplit(src).scheme in ("http", "https", "data"):
            continue
        image = (path.parent / unquote(urlsplit(src).path)).resolve()
        assert image.exists(), f"{PAGES[name]}: image {src} missing"
        assert valid_image(image), f"{PAGES[name]}: image {src} is not a valid PNG/SVG"
    if name == "gallery":
        assert any(src.endswith(".png") for src in page.images), "the example drew no figure"


def test_every_gallery_example_has_a_figure():
    examples = sorted((ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 8
    for example in examples:
        page = HTML / "auto_examples" / f"{example.stem}.html"
        assert page.exists(), f"{example.name} has no gallery page"
        assert any(src.endswith(".png") for src in parse(page).images), example.name


def test_every_public_name_has_an_api_page():
    import kclf

    for name in kclf.__all__:
        if name.startswith("__"):
            continue
        page = HTML / "api" / "generated" / f"kclf.{name}.html"
        assert page.exists(), f"kclf.{name} has no API page"
    assert "<math" in (HTML / "api" / "generated" / "kclf.LSPC.html").read_text()


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


CHROMIUM = _chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium on this machine (Debian: apt-get install chromium)"
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--hide-scrollbars",
    "--virtual-time-budget=10000",
]


def _run(args, tmp_path):
    env = dict(os.environ, HOME=str(tmp_path))
    out = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    return out


@needs_chromium
@pytest.mark.parametrize("name", sorted(PAGES))
def test_chromium_renders_the_page(name, tmp_path):
    url = (HTML / PAGES[name]).resolve().as_uri()
    out = _run(["--dump-dom", url], tmp_path)
    dom = out.stdout
    assert "</html>" in dom, f"Chromium rendered nothing for {PAGES[name]}: {out.stderr[-2000:]}"
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title and title.group(1).strip(), "no title"
    main = re.search(r'<main[^>]*id="main-content"[^>]*>(.*)</main>', dom, re.S)
    assert main, "no main content"
    text = re.sub(r"<[^>]+>", " ", main.group(1))
    assert len(" ".join(text.split())) > 200, "the page body is (nearly) empty"
    # a screenshot that is not a blank page
    shot = tmp_path / "shot.png"
    _run([f"--screenshot={shot}", "--window-size=1280,1400", url], tmp_path)
    from PIL import Image

    with Image.open(shot) as im:
        extrema = im.convert("L").getextrema()
    assert extrema[0] < 128 < extrema[1] + 1, "the screenshot is blank"
