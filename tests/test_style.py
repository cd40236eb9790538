"""A house rule ruff cannot check: every exception to the linter or the formatter says why it is there."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: `# noqa`, `# noqa: E402`, `# fmt: skip`, `# fmt: off`, and whatever follows on the line
EXCEPTION = re.compile(
    r"#\s*(noqa(?::\s*[A-Z]+[0-9]+(?:,\s*[A-Z]+[0-9]+)*)?|fmt:\s*(?:skip|off))(?P<why>.*)$"
)


def test_every_noqa_and_fmt_skip_says_why():
    silent = []
    for path in sorted(p for folder in ("firmware", "tests", "hw") for p in (ROOT / folder).rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found = EXCEPTION.search(line)
            if found and not re.search(r"[a-z]{3}", found["why"]):
                silent.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert silent == [], "add the reason after the marker, e.g. `# fmt: skip  # a table, one row a line`"
