"""TSH's files read as files (issue 37): a `.t` replaced by a link to a secret, a FIFO, a device,
a huge or a binary file, tried on `sheet`, `scores` and `hall --tsh`: one line naming the file,
never a traceback."""

import os
import resource
import shutil
import subprocess
import sys

import pytest

from tileclock.director.event.hall_pairings import HallPairings
from tileclock.director.event.tfile import MAX_BYTES, TshFileRefused, read_players
from tournament import END, TSH_FILES, play

#: a secret as `hall-setup` writes one (tileclock.keys: a clock's 64 hex digits) and a password
SECRET = "c1 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\nhunter2-Xq7zPw-kV9\n"


def _pieces(secret, width=8):
    """Every `width`-character piece of `secret`'s lines: none may reach a phone."""
    return {line[at : at + width] for line in secret.split() for at in range(len(line) - width + 1)}


def _swap(path, kind, tmp_path):
    """Put `kind` where the `.t` file `path` was, as an attacker with TSH's folder would."""
    os.remove(path)
    if kind == "a link to a secret":
        secret = tmp_path / "secret.keys"  # outside the event's folder
        secret.write_text(SECRET)
        os.symlink(secret, path)
    elif kind == "a FIFO":
        os.mkfifo(path)
    elif kind == "a huge file":
        with open(path, "wb") as file:  # good player lines, past the cap (once read whole)
            line = b"Ann Other 1500 2 0 1 ; 400 350 380 ; board 1 1 1 ; p12 1 2 1\n"
            file.write(line * (MAX_BYTES // len(line) + 1))
    elif kind == "binary junk":
        with open(path, "wb") as file:
            file.write(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + SECRET.encode())


def _unblock(path):
    """A reader an old build left waiting in open() on the FIFO `path` is let go."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_a_link_to_a_secret_is_refused_at_the_start_and_a_link_inside_the_folder_followed(tmp_path):
    folder = tmp_path / "event"
    folder.mkdir()
    secret = tmp_path / "tileclock.keys"
    secret.write_text(SECRET)
    os.symlink(secret, folder / "a.t")
    with pytest.raises(TshFileRefused, match="a.t: a symbolic link to .*, outside .*: not read") as refused:
        HallPairings(tsh=[str(folder / "a.t")])
    assert not [piece for piece in _pieces(SECRET) if piece in str(refused.value)]
    (folder / "sub").mkdir()
    shutil.copy(TSH_FILES[0], folder / "sub" / "real.t")
    os.symlink(folder / "sub" / "real.t", folder / "b.t")  # TSH's own folder: followed
    assert [p.name for p in read_players(str(folder / "b.t"))][:1] == ["Anderson, Ann"]


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("played")
    play(
        str(folder), "1", "0 press B\n26:30 press A\n27:00 press STOP\n" + END.format(t="27:10", t2="27:13.5")
    )
    return str(folder / "records")


def _limited():
    """The child's memory capped at 1 GiB: an old build reading /dev/zero fails fast, harmlessly."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


#: each command's arguments after its records folder, `{out}` and `{t}` (the `.t` file) filled in
COMMANDS = {
    "sheet": "sheet {records} --tsh {t} --round 3 --out {out} --no-pictures",
    "scores": "scores {records} --tsh {t} --round 3 --out {out} --dry-run",
    "hall": "hall --broker 127.0.0.1 --tsh {t} --out {out}",
}
#: each kind of file, and the words its one line says
KINDS = {
    "a device": ("/dev/zero", "/dev/zero: a device, not a file"),
    "a FIFO": ("a FIFO", "a FIFO (a named pipe), not a file"),
    "a huge file": ("a huge file", "-byte limit for one of TSH's files"),
    "binary junk": ("binary junk", "a binary file (a NUL byte at byte 8), not TSH's text"),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_command_says_one_line_naming_the_file(records, tmp_path, command, kind):
    """As a user runs it (a process of its own, so an old build's hang or MemoryError is bounded)."""
    given, words = KINDS[kind]
    path = given
    if not given.startswith("/"):
        path = str(tmp_path / "a.t")
        open(path, "w").close()
        _swap(path, given, tmp_path)
    argv = [
        word.format(records=records, out=str(tmp_path / "out"), t=path) for word in COMMANDS[command].split()
    ]
    env = {**os.environ, "TILECLOCK_HALL_PASSWORD": ""}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tileclock", *argv],
            capture_output=True,
            text=True,
            timeout=30,
            preexec_fn=_limited,
            env=env,
        )
    finally:
        _unblock(path)
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("tileclock: ") and path in lines[0] and words in lines[0]
    assert "PNG" not in lines[0] and "IHDR" not in lines[0]  # names the file, quotes none of it
