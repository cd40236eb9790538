"""A house rule ruff cannot check: every exception to the linter or the formatter says why it is there."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the linter's and the formatter's markers (noqa, alone or with codes such as E402; fmt: skip;
#: fmt: off), each after a `#`, and whatever follows on the line
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


def test_every_test_has_a_time_limit(request, pytester):
    """A test that hangs fails by itself, with its stack, and the suite goes on (pytest-timeout)."""
    assert request.config.pluginmanager.hasplugin("timeout")
    assert float(request.config.getini("timeout")) > 0
    hang = (
        "import threading\n\ndef test_hangs():\n    threading.Event().wait()\n\ndef test_after():\n    pass\n"
    )
    pytester.makepyfile(hang)
    result = pytester.runpytest_subprocess("-o", "timeout=1", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, passed=1)
    assert "Timeout" in result.stdout.str()
