"""The files a release ships besides the code: licence, citation, changelog, one version.

``.ci/package.sh`` checks the built sdist and wheel themselves (``twine check``, the
licence inside the wheel, the installed metadata's version, ``cffconvert --validate``
against the Citation File Format schema); these tests check the sources.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

import kclf

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT.parent / "shared" / "papers"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CFF = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def _words(text):
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def test_licence_is_the_declared_one_and_shipped():
    project = PYPROJECT["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "Neither the name of the copyright holder nor the names of its" in text
    assert CFF["license"] == project["license"]


def test_build_backend_reads_spdx_licences():
    """PEP 639 expressions need setuptools 77 (76.1 rejects the string, 77.0.0 is not on
    the index): the floor says so."""
    (requirement,) = PYPROJECT["build-system"]["requires"]
    assert requirement == "setuptools>=77.0.1"


def test_version_is_written_once():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "kclf.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", kclf.__version__)
    # no second copy of the version string where one used to be
    for path in ("pyproject.toml", "CITATION.cff", "docs/conf.py", "README.md"):
        assert kclf.__version__ not in (ROOT / path).read_text(), path
    assignments = [
        p
        for p in (ROOT / "kclf").rglob("*.py")
        if re.search(r"^__version__\s*=", p.read_text(), re.M)
    ]
    assert assignments == [ROOT / "kclf" / "__init__.py"]


def test_changelog_keeps_a_changelog_and_describes_this_version():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n")
    assert "[Keep a Changelog](https://keepachangelog.com/" in text
    sections = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.M)
    assert sections[0] == ("Unreleased", "")
    releases = [(v, d) for v, d in sections[1:]]
    assert releases and all(d for _, d in releases), releases
    versions = [tuple(map(int, v.split("."))) for v, _ in releases]
    # a released version is the newest section's; a development version (X.Y.Z.devN) is
    # the next one's, which [Unreleased] describes
    release, _, dev = kclf.__version__.partition(".dev")
    if dev:
        assert tuple(map(int, release.split("."))) > versions[0], kclf.__version__
    else:
        assert releases[0][0] == kclf.__version__
    assert versions == sorted(versions, reverse=True)
    dates = [d for _, d in releases]
    assert dates == sorted(dates, reverse=True)
    allowed = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
    assert set(re.findall(r"^### (.+)$", text, re.M)) <= allowed


def test_citation_file_holds_the_project_and_its_references():
    assert CFF["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors", "type", "abstract"):
        assert CFF.get(key), key
    assert "version" not in CFF, "the version is written once, in kclf/__init__.py"
    for ref in CFF["references"]:
        assert ref["type"] and ref["title"] and ref["authors"], ref.get("title")
        for author in ref["authors"]:
            assert author.get("family-names") or author.get("name"), ref["title"]


def test_citation_bibtex_keys_are_unique_and_every_reference_is_on_the_citing_page():
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        import kclf_citation
    finally:
        sys.path.pop(0)
    entries = kclf_citation.entries(ROOT / "CITATION.cff", version=kclf.__version__)
    assert len(entries) == len(CFF["references"]) + 1
    assert f"version = {{{kclf.__version__}}}" in entries["kclf"]
    page = (ROOT / "docs" / "user_guide" / "citing.md").read_text()
    shown = set()
    for block in re.findall(r"```\{cff-bibtex\}([^\n]*)\n```", page):
        shown |= set(block.split())
    assert shown == set(entries), (sorted(set(entries) - shown), sorted(shown - set(entries)))
    for key, text in entries.items():
        assert text.startswith("@") and text.count("{") == text.count("}"), key


def test_every_paper_of_the_project_is_cited():
    if not PAPERS.is_dir():
        pytest.skip(f"the papers' folder {PAPERS} is not beside the clone")
    titles = {_words(ref["title"]) for ref in CFF["references"]}
    papers = sorted(PAPERS.glob("*.txt"))
    assert len(papers) == 5
    for paper in papers:
        first = next(line for line in paper.read_text().splitlines() if line.strip())
        title = _words(first.replace("*", ""))
        assert title in titles, f"{paper.name}: {first!r} is not in CITATION.cff"


WORKFLOW_PYPROJECT = tomllib.loads((ROOT / "workflow" / "pyproject.toml").read_text())
#: the package index's page of the library
LONG_DESCRIPTION = ROOT / PYPROJECT["project"]["readme"]


def test_the_library_depends_on_numpy_scipy_scikit_learn_and_threadpoolctl_only():
    names = {re.match(r"[\w-]+", r).group().lower() for r in PYPROJECT["project"]["dependencies"]}
    assert names == {"numpy", "scipy", "scikit-learn", "threadpoolctl"}
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert "features" in extras and not {"workflow", "download"} & set(extras)
    assert PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"] == ["kclf", "kclf.*"]


def test_the_long_description_works_off_the_repository():
    """Every link of the package index's description is absolute (a relative one breaks
    there), it says how to install, and every name it imports is public."""
    text = LONG_DESCRIPTION.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)]+)\)", text) + re.findall(r'(?:href|src)="([^"]+)"', text)
    assert links and all(re.match(r"https://", u) for u in links), links
    assert "pip install kclf" in text
    for names in re.findall(r"^from kclf import ([\w, ]+)$", text, re.M):
        assert all(n.strip() in kclf.__all__ for n in names.split(","))
    for name in (n for n in kclf.__all__ if not n.startswith("__")):
        assert f"`{name}`" in text, name


def test_the_metadata_has_classifiers_and_the_citation_files_authors():
    project = PYPROJECT["project"]
    classifiers = project["classifiers"]
    assert any(c.startswith("Development Status ::") for c in classifiers)
    assert "Programming Language :: Python :: 3 :: Only" in classifiers
    assert not any(c.startswith("License ::") for c in classifiers)  # PEP 639: the expression
    authors = [{"name": a["name"]} if "name" in a else a for a in CFF["authors"]]
    assert project["authors"] == authors == project["maintainers"]
    assert WORKFLOW_PYPROJECT["project"]["authors"] == authors
    assert WORKFLOW_PYPROJECT["project"]["license"] == project["license"]


def test_the_sdist_ships_no_tests_and_the_release_files():
    manifest = (ROOT / "MANIFEST.in").read_text()
    assert re.search(r"^prune tests$", manifest, re.M)
    assert re.search(r"^prune workflow$", manifest, re.M)
    included = re.search(r"^include (.+)$", manifest, re.M).group(1).split()
    assert {"CHANGELOG.md", "CITATION.cff"} <= set(included)


def test_the_workflow_distribution_is_versioned_with_the_library():
    import kclf_workflow

    assert kclf_workflow.__version__ == kclf.__version__
    assert WORKFLOW_PYPROJECT["project"]["dynamic"] == ["version"]
    assert WORKFLOW_PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "kclf_workflow.__version__"
    }
