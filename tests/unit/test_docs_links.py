"""Citations of the Katib contract resolve, and nothing cites a reference the repository lacks.

The code, tests and docs cite ``docs/katib-contract.md#<section>`` for the Katib facts they keep.
A citation is only worth something if its section exists, so every one is checked against the
headings of that file (with GitHub's anchors). The reference files the contract was first written
from (a behavioural specification and its two companions) are not part of the repository: a
citation of one of them, or a bare section sign pointing into one, cannot be followed by anyone
who has only the repository.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "docs" / "katib-contract.md"
SKIPPED = {".git", "build", "katib_resume", "__pycache__", ".mypy_cache", ".ruff_cache"}
TEXT = {".py", ".md", ".toml", ".yaml", ".yml", ".cfg", ".txt", ""}
CITATION = re.compile(r"katib-contract\.md#([\w-]+)")
IN_PAGE = re.compile(r"\]\(#([\w-]+)\)")
# The names are assembled so that this file does not cite them itself.
FOREIGN = re.compile(r"\b(" + "|".join(("BEHAVIOR", "TRIALS", "ALGORITHMS")) + r")\.md\b")
SECTION_SIGN = re.compile("\N{SECTION SIGN}" + r"\s*\d")


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    """Every heading anchor of a Markdown text (outside code fences), duplicates numbered."""
    found: list[str] = []
    seen: Counter[str] = Counter()
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (heading := re.match(r"#{1,6} (.+)", line)):
            base = slug(heading.group(1))
            found.append(base if not seen[base] else f"{base}-{seen[base]}")
            seen[base] += 1
    return set(found)


def repository_files() -> Iterator[Path]:
    """The repository's text files, without the package's symbolic links (the same files)."""
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith(".venv"))
        for name in sorted(files):
            path = Path(folder) / name
            if path.suffix in TEXT and path != Path(__file__).resolve():
                yield path


def is_python(path: Path) -> bool:
    return path.suffix == ".py"


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def test_slug_follows_github() -> None:
    assert slug("Resume policy values") == "resume-policy-values"
    assert slug("Katib's tests") == "katibs-tests"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def citations() -> list[tuple[str, str]]:
    """(file, section) for every citation of the contract, its own in-page links included."""
    found = [
        (str(path.relative_to(ROOT)), name)
        for path in repository_files()
        for name in CITATION.findall(read(path))
    ]
    return found + [(CONTRACT.name, name) for name in IN_PAGE.findall(read(CONTRACT))]


def test_every_citation_of_the_contract_names_a_section_it_has() -> None:
    sections = anchors(read(CONTRACT))
    cited = citations()
    assert len({name for _, name in cited}) >= 10  # the docs alone cite a dozen sections
    assert [f"{where}: #{name}" for where, name in cited if name not in sections] == []


@pytest.mark.parametrize(
    "python",
    [
        pytest.param(False, id="docs-and-other-files"),
        pytest.param(True, id="python-files"),
    ],
)
def test_no_file_cites_a_reference_the_repository_does_not_have(python: bool) -> None:
    present = {path.name for path in repository_files()}
    offenders = []
    for path in repository_files():
        if is_python(path) != python:
            continue
        text = read(path)
        missing = {name for name in FOREIGN.findall(text) if f"{name}.md" not in present}
        signs = SECTION_SIGN.findall(text)
        if missing or signs:
            where = path.relative_to(ROOT)
            offenders.append(f"{where}: {sorted(missing)}, {len(signs)} section signs")
    assert offenders == []
