"""A newcomer's way through the built site (``make docs``), checked in headless Chromium.

One Chromium run loads every page of the site (served on the loopback interface) into a
frame 1280 px wide and measures it as laid out: the top bar's sections (the API reference
and the gallery in it, nothing folded under "More"), the section navigation of every
user-guide page, the grouped API index, and no code block, table or equation that runs
past the page's content column or hides part of itself behind a scroll bar.  Static checks
beside it: every estimator page lists its public methods, inherited ones included; no
private name on a public page; the guide links the estimators it names; each model is
stated once on its API page.
"""

from __future__ import annotations

import functools
import http.server
import inspect
import json
import os
import re
import subprocess
import threading
from html import unescape
from pathlib import Path

import pytest
from test_docs import CHROMIUM, FLAGS, HTML, all_pages

pytestmark = [
    pytest.mark.docs,
    pytest.mark.skipif(
        not (HTML / "index.html").exists(), reason="docs/_build/html not built (run make docs)"
    ),
]
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium on this machine (Debian: apt-get install chromium)"
)

WIDTH = 1280
GUIDE = "user_guide"
TOP_SECTIONS = ["User guide", "Example gallery", "API reference", "Config reference"]
API_GROUPS = ["Estimators", "Kernels and metrics", "Feature extraction"]

# Measures one page laid out in a frame of the checker page: the visible top-bar links,
# the visible section-navigation links, the API index's h2 sections with the objects
# listed under each, and every pre / table / display equation of the article that ends
# right of the article's content box or whose content is wider than its box.
MEASURE = r"""
function measure(doc) {
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0
      && doc.defaultView.getComputedStyle(el).visibility !== 'hidden';
  };
  const out = {navbar: [], dropdown: [], sidebar: [], sections: [], overflow: []};
  doc.querySelectorAll('.bd-header .bd-navbar-elements > .nav-item > a.nav-link')
     .forEach(a => { if (visible(a)) out.navbar.push(a.textContent.trim()); });
  doc.querySelectorAll('.bd-header .bd-navbar-elements .dropdown-toggle')
     .forEach(b => { if (visible(b)) out.dropdown.push(b.textContent.trim()); });
  doc.querySelectorAll('.bd-sidebar-primary nav.bd-docs-nav a.reference')
     .forEach(a => { if (visible(a)) out.sidebar.push(a.href); });
  doc.querySelectorAll('article.bd-article section > h2').forEach(h => {
    const names = [];
    h.parentElement.querySelectorAll('table.autosummary td:first-child code')
      .forEach(c => names.push(c.textContent.trim()));
    out.sections.push({title: h.firstChild.textContent.trim(), names: names});
  });
  const article = doc.querySelector('article.bd-article');
  if (article) {
    const style = doc.defaultView.getComputedStyle(article);
    // the content column's right edge, with a border's few pixels to spare
    const right = article.getBoundingClientRect().right - parseFloat(style.paddingRight) + 3;
    article.querySelectorAll('pre, table, div.math').forEach(el => {
      if (!visible(el)) return;
      const wrapped = el.parentElement.classList.contains('pst-scrollable-table-container');
      const box = el.tagName === 'TABLE' && wrapped ? el.parentElement : el;
      const r = el.getBoundingClientRect();
      const hidden = el.tagName === 'TABLE'
        ? r.width > box.clientWidth + 1 : el.scrollWidth > el.clientWidth + 1;
      if (r.right > right || hidden) {
        out.overflow.push(el.tagName.toLowerCase() + ' ' + Math.round(r.width) + ' px (box '
          + box.clientWidth + ' px): ' + el.textContent.trim().slice(0, 70).replace(/\s+/g, ' '));
      }
    });
  }
  return out;
}
"""

CHECKER = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>checker</title></head><body>
<iframe id="f" style="width:{width}px;height:900px;border:0"></iframe>
<pre id="result">running</pre>
<script>
{measure}
const pages = {pages};
const results = {{}};
const frame = document.getElementById('f');
let k = 0;
function next() {{
  if (k >= pages.length) {{
    const text = 'RES' + 'ULT<<' + JSON.stringify(results) + '>>' + 'END';
    document.getElementById('result').textContent = text;
    return;
  }}
  const page = pages[k++];
  frame.onload = () => {{
    try {{ results[page] = measure(frame.contentDocument); }}
    catch (e) {{ results[page] = {{error: String(e)}}; }}
    setTimeout(next, 0);
  }};
  frame.src = '/' + page;
}}
next();
</script></body></html>"""


def _pages():
    skip = ("search.html", "genindex.html", "py-modindex.html")
    return [str(p.relative_to(HTML)) for p in all_pages() if p.name not in skip]


@pytest.fixture(scope="module")
def laid_out(tmp_path_factory):
    """``{page: measures}`` of every page, from one Chromium run."""
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install chromium)")
    pages = _pages()
    checker = CHECKER.format(width=WIDTH, measure=MEASURE, pages=json.dumps(pages))

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/__checker__.html":
                body = checker.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(HTML))
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    tmp = tmp_path_factory.mktemp("chromium")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/__checker__.html"
        budget = 2000 * len(pages) + 10000
        flags = [f for f in FLAGS if not f.startswith("--virtual-time-budget")]
        proc = subprocess.run(
            [
                CHROMIUM,
                *flags,
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--virtual-time-budget={budget}",
                f"--window-size={WIDTH + 100},1000",
                f"--user-data-dir={tmp / 'profile'}",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=600,
            env=dict(os.environ, HOME=str(tmp)),
        )
    finally:
        server.shutdown()
        server.server_close()
    match = re.search(r"RESULT&lt;&lt;(.*?)&gt;&gt;END", proc.stdout, re.S)
    assert match, f"the checker did not finish: {proc.stdout[-1500:]} {proc.stderr[-1500:]}"
    results = json.loads(unescape(match.group(1)))
    assert set(results) == set(pages), f"pages not measured: {sorted(set(pages) - set(results))}"
    errors = {p: r["error"] for p, r in results.items() if "error" in r}
    assert not errors, errors
    return results


@needs_chromium
def test_top_bar_holds_the_sections_with_nothing_under_more(laid_out):
    for page in ("index.html", f"{GUIDE}/quickstart.html", "api/generated/kclf.LSPC.html"):
        bar = laid_out[page]["navbar"]
        assert bar[: len(TOP_SECTIONS)] == TOP_SECTIONS, (page, bar)
        assert laid_out[page]["dropdown"] == [], (page, laid_out[page]["dropdown"])


@needs_chromium
def test_every_guide_page_shows_the_section_navigation(laid_out):
    guide = sorted(p for p in laid_out if p.startswith(f"{GUIDE}/"))
    pages = {Path(p).name for p in guide if Path(p).name != "index.html"}
    assert len(pages) >= 12, pages
    for page in guide:
        links = {Path(h.split("#")[0]).name for h in laid_out[page]["sidebar"]}
        missing = pages - links
        assert not missing, f"{page}: the sidebar lacks {sorted(missing)}"


@needs_chromium
def test_api_index_is_grouped(laid_out):
    sections = laid_out["api/index.html"]["sections"]
    assert [s["title"] for s in sections] == API_GROUPS, sections
    names = {s["title"]: s["names"] for s in sections}
    import kclf

    estimators = [n for n in kclf.__all__ if not n.startswith("__")]
    assert sorted(names["Estimators"]) == sorted(estimators)
    assert {"log_loss", "median_sigma", "ep_sites"} <= set(names["Kernels and metrics"])
    assert "hmm_kernel" in names["Feature extraction"]


def test_api_reference_lists_the_library_only():
    """The API reference is the library's: no page of the workflow's code (the
    distribution kclf-workflow), every generated page a name under ``kclf``."""
    pages = sorted((HTML / "api" / "generated").glob("*.html"))
    assert pages
    assert not [p.name for p in pages if not p.name.startswith("kclf.")]
    index = (HTML / "api" / "index.html").read_text()
    assert not re.search(r'href="[^"]*(kclf_workflow|repro)', index)  # no entry of the workflow


@needs_chromium
def test_no_code_block_table_or_equation_overflows_the_page(laid_out):
    overflow = {p: r["overflow"] for p, r in laid_out.items() if r["overflow"]}
    assert not overflow, "\n".join(f"{p}: {o}" for p, os_ in overflow.items() for o in os_)


# -- static checks of the built pages ---------------------------------------------------


def _main_text(path):
    t = path.read_text(encoding="utf-8", errors="replace")
    m = re.search(r"<main[^>]*>(.*)</main>", t, re.S)
    return unescape(re.sub(r"<[^>]+>", " ", m.group(1))) if m else ""


def _estimators():
    import kclf

    return {n: getattr(kclf, n) for n in kclf.__all__ if inspect.isclass(getattr(kclf, n, None))}


def _public_methods(cls):
    skip = re.compile(r"^(set_\w+_request|get_metadata_routing)$")
    return sorted(
        n
        for n in dir(cls)
        if not n.startswith("_") and not skip.match(n) and inspect.isfunction(getattr(cls, n))
    )


def test_every_estimator_page_lists_its_inherited_public_methods():
    for name, cls in _estimators().items():
        page = (HTML / "api" / "generated" / f"kclf.{name}.html").read_text()
        missing = [m for m in _public_methods(cls) if f'id="kclf.{name}.{m}"' not in page]
        assert not missing, f"kclf.{name}'s page lists no {missing}"
    # the CV estimators' search methods come from their shared (private) base class
    for name in ("LSPCCV", "KernelLogisticRegressionCV"):
        page = (HTML / "api" / "generated" / f"kclf.{name}.html").read_text()
        for method in ("fit", "predict", "predict_proba", "decision_function", "score"):
            assert f'id="kclf.{name}.{method}"' in page, (name, method)


def _private_helpers():
    """Public names defined in kclf's private modules, at any depth of the library
    (``kclf._search.cv_splits``, ``kclf.lspc._solver.fit_alpha``, ...), but those a
    public module exports in its ``__all__`` (``kclf.mgpc.inference.ep_sites``)."""
    import importlib
    import pkgutil

    import kclf

    names, exported = set(), set(kclf.__all__)
    for mod in pkgutil.walk_packages(kclf.__path__, "kclf."):
        if mod.name.startswith("kclf.features"):
            continue
        module = importlib.import_module(mod.name)
        if not any(part.startswith("_") for part in mod.name.split(".")):
            exported |= set(getattr(module, "__all__", ()))
        if mod.name.rsplit(".", 1)[1].startswith("_"):
            names |= {
                n
                for n, obj in vars(module).items()
                if not n.startswith("_")
                and (inspect.isfunction(obj) or inspect.isclass(obj))
                and getattr(obj, "__module__", "") == module.__name__
            }
    return names - exported


def test_no_private_name_on_a_public_page():
    helpers = _private_helpers()
    assert {"cv_splits", "fit_alpha", "spd_inverse"} <= helpers
    assert "ep_sites" not in helpers  # public: kclf.mgpc.inference
    found = {}
    for path in all_pages():
        if path.parts[len(HTML.parts)] in ("_modules", "_sources"):
            continue
        text = _main_text(path)
        hits = set(re.findall(r"\bkclf(?:\.\w+)*\._(?!_)\w+", text))
        code = re.findall(r"<code[^>]*>(.*?)</code>", path.read_text(errors="replace"), re.S)
        for c in code:
            word = re.sub(r"<[^>]+>", "", c).strip()
            if re.sub(r"\(.*", "", word) in helpers:
                hits.add(word)
        if hits:
            found[str(path.relative_to(HTML))] = sorted(hits)
    assert not found, found


def test_guide_pages_link_the_estimators_they_name():
    import kclf

    names = [n for n in kclf.__all__ if not n.startswith("__")]
    unlinked = {}
    for path in sorted((HTML / GUIDE).glob("*.html")):
        html = path.read_text(encoding="utf-8", errors="replace")
        main = re.search(r"<main[^>]*>(.*)</main>", html, re.S).group(1)
        for code in re.finditer(r"(<a [^>]*>)?\s*<code[^>]*>(.*?)</code>", main, re.S):
            text = re.sub(r"<[^>]+>", "", code.group(2)).strip()
            name = re.sub(r"^kclf\.|\(.*$", "", text, flags=re.S)
            if name not in names or "<pre" in main[max(0, code.start() - 200) : code.start()]:
                continue
            link = code.group(1) or ""
            if f"api/generated/kclf.{name}.html" not in link:
                unlinked.setdefault(path.name, set()).add(text)
    assert not unlinked, {k: sorted(v) for k, v in unlinked.items()}


def test_each_model_is_stated_once_on_its_page():
    """The rendered equations, not a second plain-text copy of them."""
    ascii_forms = {
        "LSPC": ["alpha~_y = (H + lam I_n)", "h_y = (1/n) sum"],
        "LSPCCV": ["K^T K / m + lam I", "alpha~ = ("],
        "couple": ["p_i <- p_i sum_j", "r_ij log(r_ij / mu_ij)"],
    }
    for name, forms in ascii_forms.items():
        path = HTML / "api" / "generated" / f"kclf.{name}.html"
        assert "<math" in path.read_text()
        text = _main_text(path)
        assert not [f for f in forms if f in text], (name, [f for f in forms if f in text])
        assert text.count("Model") >= 1
