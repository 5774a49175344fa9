"""Math as MathML, converted at build time (no JavaScript, no CDN).

Sphinx's default math renderer loads MathJax from a CDN, so pages read offline (or on a
machine that reaches only a package index, like this project's) show raw TeX.  This
renderer converts every ``:math:`` role, ``.. math::`` block and MyST ``$...$`` to
MathML with ``latex2mathml`` while building; browsers render MathML Core natively
(Chromium 109+, Firefox, Safari).  A block with several lines (``\\\\``) and alignment
points (``&``) becomes an aligned ``<mtable>``.  TeX that cannot be converted is a
warning (an error under ``-W``).
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.util import logging

logger = logging.getLogger(__name__)

_ENV = re.compile(r"^\s*\\begin\{(split|aligned|align\*?|gather\*?)\}(.*)\\end\{\1\}\s*$", re.S)
_MATH = re.compile(r"^<math[^>]*>(.*)</math>$", re.S)


def _inner(tex):
    """MathML content (no ``<math>`` wrapper) of one TeX fragment."""
    out = convert(tex.strip() or r"\,")
    match = _MATH.match(out.strip())
    return match.group(1) if match else out


def to_mathml(tex, display):
    """One TeX expression as a ``<math>`` element."""
    body = tex.strip()
    env = _ENV.match(body)
    if env:
        body = env.group(2)
    rows = [r for r in re.split(r"\\\\(?:\[[^\]]*\])?", body) if r.strip()]
    mode = "block" if display else "inline"
    if len(rows) <= 1 and "&" not in body:
        content = _inner(body)
    else:
        trs = []
        for row in rows:
            cells = row.split("&")
            tds = [
                f'<mtd columnalign="{"right" if k % 2 == 0 else "left"}">'
                f"<mrow>{_inner(cell)}</mrow></mtd>"
                for k, cell in enumerate(cells)
            ]
            trs.append("<mtr>" + "".join(tds) + "</mtr>")
        content = '<mtable displaystyle="true">' + "".join(trs) + "</mtable>"
    return (
        f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="{mode}">'
        f"<semantics><mrow>{content}</mrow>"
        f'<annotation encoding="application/x-tex">{html.escape(tex.strip())}</annotation>'
        "</semantics></math>"
    )


def _safe(self, node, tex, display):
    try:
        return to_mathml(tex, display)
    except Exception as exc:  # noqa: BLE001 - any converter failure becomes a warning
        logger.warning("cannot convert TeX to MathML (%s): %s", exc, tex, location=node)
        return f"<code>{html.escape(tex)}</code>"


def visit_math(self, node):
    self.body.append(
        f'<span class="math notranslate">{_safe(self, node, node.astext(), False)}</span>'
    )
    raise nodes.SkipNode


def visit_displaymath(self, node):
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node.get("number"):
        self.body.append(f'<span class="eqno">({node["number"]})')
        self.add_permalink_ref(node, "Link to this equation")
        self.body.append("</span>")
    parts = [p for p in node.astext().split("\n\n") if p.strip()] or [""]
    for part in parts:
        self.body.append(_safe(self, node, part, True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer(
        "mathml", inline_renderers=(visit_math, None), block_renderers=(visit_displaymath, None)
    )
    app.add_css_file("mathml.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
