"""The docs point at things that exist: sections cited by anchor, files named by path or link."""

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What a reader follows: the docs, and the files shipped to the Pi beside them.
DOC_FILES = [
    *ROOT.glob("*.md"),
    *(ROOT / "docs").glob("*.md"),
    *(ROOT / "hw").glob("*.md"),
    *(ROOT / "systemd").glob("*"),
]
#: Where sections are cited: the docs, the tests and the code.
TEXT_FILES = [*DOC_FILES, *(ROOT / "tests").glob("*.py"), *(ROOT / "firmware").rglob("*.py")]


def anchor(heading):
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    return {anchor(line.lstrip("#")) for line in path.read_text().splitlines() if line.startswith("#")}


def test_every_cited_section_exists():
    cited = [
        (source.relative_to(ROOT), doc, section)
        for source in TEXT_FILES
        for doc, section in re.findall(r"\b((?:docs|hw)/[\w-]+\.md)#([\w-]+)", source.read_text())
    ]
    assert cited  # the tests cite docs/rules.md by section
    missing = [
        (str(source), f"{doc}#{section}")
        for source, doc, section in cited
        if not (ROOT / doc).exists() or section not in anchors(ROOT / doc)
    ]
    assert missing == []


def test_every_linked_or_named_file_exists():
    named = []
    for source in DOC_FILES:
        text = source.read_text()
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text) if source.suffix == ".md" else ():
            if "://" not in target:  # a markdown link, relative to the page
                named.append((source, os.path.normpath(source.parent / target)))
        for target in re.findall(
            r"(?<![\w/.])((?:docs|hw|systemd|tests)/[\w./-]+\.(?:md|py|toml|sh|png|service))\b", text
        ):
            named.append((source, str(ROOT / target)))
    missing = sorted(
        {
            (str(source.relative_to(ROOT)), os.path.relpath(target, ROOT))
            for source, target in named
            if not os.path.exists(target)
        }
    )
    assert missing == []
