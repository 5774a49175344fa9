"""BibTeX on the "How to cite" page, from ``CITATION.cff``: the bibliographic data are
written once.

``.. cff-bibtex:: KEY [KEY ...]`` renders the project (``kclf``) or the references of
``CITATION.cff`` named by their keys as one BibTeX code block.  A reference's key is its
first author's family name (ASCII letters, lower case) and its year, or the first word of
its title when it has no year: ``yamada2011``, ``rothprobabilistic``.  The project's entry
takes its version from ``kclf.__version__``, the one place the version is written.  An
unknown key is an error that lists the known ones.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import yaml
from docutils import nodes
from docutils.parsers.rst import Directive

CFF = Path(__file__).resolve().parents[2] / "CITATION.cff"
PROJECT_KEY = "kclf"

_ENTRY_TYPES = {
    "article": "article",
    "conference-paper": "inproceedings",
    "report": "techreport",
    "book": "book",
    "thesis": "phdthesis",
}


def _ascii(text):
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _person(author):
    """One author as BibTeX writes it: ``Family, Given`` or ``{Entity}``."""
    if "name" in author:
        return "{" + author["name"] + "}"
    family = author.get("family-names", "")
    if author.get("name-particle"):
        family = f"{author['name-particle']} {family}"
    if " " in family:
        family = "{" + family + "}"
    given = author.get("given-names")
    return f"{family}, {given}" if given else family


def reference_key(ref):
    """``<first author's family name><year>``, or ``<family><first title word>``."""
    first = ref["authors"][0]
    if "family-names" in first:
        family = re.sub(r"[^a-z]", "", _ascii(first["family-names"]).lower())
    else:  # an entity, "The FSDD contributors": its first word but "the"
        words = [w for w in re.findall(r"[a-z]+", _ascii(first["name"]).lower()) if w != "the"]
        family = words[0]
    if ref.get("year") is not None:
        return f"{family}{ref['year']}"
    words = [w for w in re.findall(r"[a-z]+", _ascii(ref["title"]).lower()) if len(w) > 3]
    return f"{family}{words[0] if words else ''}"


def _pages(ref):
    start, end = ref.get("start"), ref.get("end")
    if start is not None and end is not None:
        return f"{start}--{end}"
    return None if start is None else str(start)


def _brace(value):
    """A title in braces of its own, so BibTeX styles keep its capitals."""
    return "{" + value + "}"


def bibtex(entry, key, kind=None):
    """One CFF work (the project or a reference) as a BibTeX entry."""
    kind = kind or _ENTRY_TYPES.get(entry.get("type"), "misc")
    fields = [
        ("author", " and ".join(_person(a) for a in entry["authors"])),
        ("title", _brace(" ".join(str(entry["title"]).split()))),
        ("journal", entry.get("journal")),
        ("booktitle", entry.get("collection-title")),
        ("volume", entry.get("volume")),
        ("number", entry.get("issue") or entry.get("number")),
        ("pages", _pages(entry)),
        ("institution", (entry.get("institution") or {}).get("name")),
        ("publisher", (entry.get("publisher") or {}).get("name")),
        ("year", entry.get("year")),
        ("version", entry.get("version")),
        ("doi", entry.get("doi")),
        ("url", entry.get("url")),
        ("note", entry.get("note")),
    ]
    for ident in entry.get("identifiers") or []:
        if str(ident.get("value", "")).startswith("arXiv:"):
            fields.append(("eprint", ident["value"].split(":", 1)[1]))
            fields.append(("archiveprefix", "arXiv"))
    lines = [f"@{kind}{{{key},"]
    lines += [f"  {name} = {{{value}}}," for name, value in fields if value not in (None, "")]
    lines[-1] = lines[-1].rstrip(",")
    return "\n".join(lines + ["}"])


def load(path=CFF):
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def entries(path=CFF, version=None):
    """``{key: BibTeX}`` of the project (key ``kclf``) and of every reference."""
    cff = load(path)
    project = {k: v for k, v in cff.items() if k != "references"}
    project["version"] = version
    project["note"] = "Software, BSD-3-Clause licence"
    out = {PROJECT_KEY: bibtex(project, PROJECT_KEY, "misc")}
    for ref in cff.get("references", []):
        key = reference_key(ref)
        if key in out:
            raise ValueError(f"{path}: two references have the BibTeX key {key!r}")
        out[key] = bibtex(ref, key)
    return out


class CffBibtex(Directive):
    required_arguments = 1
    optional_arguments = 50

    def run(self):
        import kclf

        known = entries(version=kclf.__version__)
        self.state.document.settings.record_dependencies.add(str(CFF))
        missing = [k for k in self.arguments if k not in known]
        if missing:
            raise self.error(
                f"cff-bibtex: no entry {', '.join(missing)} in {CFF.name} "
                f"(known: {', '.join(sorted(known))})"
            )
        text = "\n\n".join(known[k] for k in self.arguments)
        block = nodes.literal_block(text, text, language="bibtex")
        return [block]


def setup(app):
    app.add_directive("cff-bibtex", CffBibtex)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
