"""Link the estimators the user guide names to their API pages.

In the pages under ``user_guide/`` an inline code literal that names a public object of
kclf, ``LSPC``, ``kclf.LSPCCV``, ``MAPLP(sigma)``, ``CorrLog(decode="f1")``, or one of the
documented modules, ``kclf.metrics``, becomes a link to its API page, as if written with
the ``{class}`` role: guide pages written later link too, with no markup to remember.
Literals inside headings, links and code blocks are left alone.  The names come from the
``kclf_autolink_names`` (objects) and ``kclf_autolink_modules`` settings of ``conf.py``.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.addnodes import pending_xref

PREFIXES = ("user_guide/",)


def _patterns(app):
    names = "|".join(sorted(map(re.escape, app.config.kclf_autolink_names), key=len, reverse=True))
    modules = "|".join(sorted(map(re.escape, app.config.kclf_autolink_modules), key=len, reverse=True))
    obj = re.compile(rf"^(?:kclf\.)?({names})(?:\(.*\))?$", re.S) if names else None
    mod = re.compile(rf"^({modules})$") if modules else None
    return obj, mod


def _link(app, doctree):
    docname = app.env.docname
    if not docname.startswith(PREFIXES):
        return
    obj, mod = _patterns(app)
    for literal in list(doctree.findall(nodes.literal)):
        parent = literal.parent
        if isinstance(parent, (nodes.reference, pending_xref, nodes.title, nodes.literal_block)):
            continue
        if "xref" in literal.get("classes", []):
            continue
        text = literal.astext()
        m = obj.match(text) if obj else None
        if m:
            target, reftype = f"kclf.{m.group(1)}", "obj"
        else:
            m = mod.match(text) if mod else None
            if not m:
                continue
            target, reftype = m.group(1), "mod"
        ref = pending_xref(
            "",
            refdomain="py",
            reftype=reftype,
            reftarget=target,
            refexplicit=True,
            refwarn=True,
            refdoc=docname,
        )
        ref += literal.deepcopy()
        literal.replace_self(ref)


def setup(app):
    app.add_config_value("kclf_autolink_names", [], "env")
    app.add_config_value("kclf_autolink_modules", [], "env")
    app.connect("doctree-read", _link)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
