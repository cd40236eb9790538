"""The docs point at things that exist: sections cited by anchor, files named by path or link."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: What a reader follows: the docs, and the files shipped to the Pi beside them.
DOC_FILES = [
    *ROOT.glob("*.md"),
    *(ROOT / "docs").glob("*.md"),
    *(ROOT / "hw").glob("*.md"),
    *(ROOT / "systemd").glob("*"),
]
#: Where sections are cited: the docs, the tests and the code.
TEXT_FILES = [
    *DOC_FILES,
    *(ROOT / "tests").glob("*.py"),
    *(ROOT / "tests" / "support").glob("*.py"),  # the tests' shared helpers, moved out of them
    *(ROOT / "firmware").rglob("*.py"),
]


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
    for source in TEXT_FILES:  # the docs, and the code and tests that point into them
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


#: Fenced commands that do not run here, and where they are tested instead.
NOT_HERE = {
    "make sim": "interactive: tests/test_terminal.py drives it in a pseudo-terminal",
    "make test": "this is the test run",
    "make hall-demo": "runs until stopped: tests/test_hall*.py run the hall on a real broker",
    "make pi-kernel-check": "boots a VM for minutes: .ci/run runs it, after the tests",
    "make image": "builds and boots a card as root for many minutes: `make image-check`, by hand and "
    "before a release (docs/build-guide.md); its settings file is tested in tests/test_firstboot.py",
    "sudo ": "changes the machine: tests/test_install.py runs the installer as a dry run",
    "git clone ": "needs the repository's address and the network",
    "tileclock hall ": "needs a broker: tests/test_hall*.py run it on a real mosquitto",
    "tileclock collect ": "needs clocks on serial ports: tests/test_collect.py runs it on pseudo-terminals",
    "tileclock run --simulate --line ": "runs until stopped: tests/test_cable.py runs it and reads its line",
}
#: Commands that may end with 1: their finding is the answer (off a Pi, the doctor finds no pins).
MAY_FIND_PROBLEMS = ("tileclock doctor",)


def fenced_commands():
    """(file, command) for every line of every ```sh block in the README and the docs."""
    for source in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```sh\n(.*?)```", source.read_text(), re.S):
            for line in block.splitlines():
                command = re.split(r"\s+#", line.strip(), maxsplit=1)[0].strip()
                if command and not command.startswith("#"):
                    yield source.relative_to(ROOT), command


@pytest.fixture(scope="module")
def director_folder(tmp_path_factory):
    """A folder as a director's would be after round 3: records/, the TSH files, a pairings CSV."""
    from support.tournament import DATA, PAIRINGS_CSV, TSH_FILES, play_round

    folder = tmp_path_factory.mktemp("director")
    play_round(str(folder))
    for path in (*TSH_FILES, PAIRINGS_CSV, os.path.join(DATA, "scores", "round-3-slips.csv")):
        shutil.copy(path, folder)
    tsh = folder / "tsh"  # TSH's own folder, for `--tsh-dir`
    tsh.mkdir()
    for path in TSH_FILES:
        shutil.copy(path, tsh)
    (tsh / "config.tsh").write_text("config accept_remote_commands = 1\ndivision A a.t\ndivision B b.t\n")
    (folder / ".venv").symlink_to(ROOT / ".venv")
    (folder / "docs").symlink_to(ROOT / "docs")
    return folder


def each_command_once():
    """(the files that give it, command) for each distinct fenced command: one written in two
    places is run once (a `sheet` costs seconds)."""
    sources = {}
    for source, command in fenced_commands():
        sources.setdefault(command, set()).add(str(source))
    return [(", ".join(sorted(files)), command) for command, files in sorted(sources.items())]


@pytest.mark.parametrize("source, command", each_command_once())
def test_every_command_in_the_docs_runs_as_written(source, command, director_folder):
    unwrapped = command.removeprefix(".venv/bin/")
    skipped = next((why for start, why in NOT_HERE.items() if unwrapped.startswith(start)), None)
    if skipped:
        pytest.skip(skipped)
    env = dict(os.environ, PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(
        ["bash", "-c", command], cwd=director_folder, capture_output=True, text=True, env=env, timeout=120
    )
    allowed = (0, 1) if unwrapped.startswith(MAY_FIND_PROBLEMS) else (0,)
    assert result.returncode in allowed and "Traceback" not in result.stderr, (source, command, result.stderr)
