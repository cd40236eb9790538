"""TSH's files read as files (issue 37): a `.t` replaced by a link to a secret, a FIFO, a device,
a huge or a binary file, or a hung network share, tried on the hall's real page and on `sheet`,
`scores` and `hall --tsh`. The hall refuses each, keeps serving the names it read last (marked
stale), tells the director why, and tells a phone nothing of any file; the commands say one line
naming the file, never a traceback."""

import http.client
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from support.hall_helpers import hall_page, page_json
from support.table_one import ANN, DAN, GAME, BoardFeed
from support.tournament import END, TSH_FILES, play
from tileclock.cli.hall import _pairings_news
from tileclock.clock.history import last_game
from tileclock.director.event import inputs
from tileclock.director.event.entries import ScoreBook
from tileclock.director.event.hall_pairings import STALE_NOTE, HallPairings
from tileclock.director.event.tfile import MAX_BYTES, PairingsError, TshFileRefused, read_players

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


@pytest.fixture
def event(sim, tmp_path):
    """The hall's real page naming table 1's players from `event/a.t` and `event/b.t`."""
    folder = tmp_path / "event"
    folder.mkdir()
    files = [str(folder / os.path.basename(path)) for path in TSH_FILES]
    for source, path in zip(TSH_FILES, files, strict=True):
        shutil.copy(source, path)
    book = ScoreBook(str(tmp_path / "scores"))
    pairings = HallPairings(tsh=files)
    with hall_page(BoardFeed(last_game(sim(GAME))), scores=book, pairings=pairings) as server:
        yield server, book, pairings, files[0]
    pairings.close()
    _unblock(files[0])


def _get(server, path, timeout_s=1.0):
    """GET `path` from the page within `timeout_s`: (status, text); a stall is a socket timeout."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout_s)
    try:
        connection.request("GET", path, headers={"Host": f"127.0.0.1:{server.port}"})
        answer = connection.getresponse()
        return answer.status, answer.read().decode()
    finally:
        connection.close()


@pytest.mark.parametrize("kind", ["a link to a secret", "a FIFO", "a huge file", "binary junk"])
def test_a_t_swapped_for_anything_else_leaves_the_page_answering_with_the_last_names(event, tmp_path, kind):
    server, book, pairings, a_t = event
    token = book.issue(3, "1", "A")
    assert page_json(server, f"/api/score/1/A/{token}")["names"] == [ANN, DAN]
    _swap(a_t, kind, tmp_path)
    assert pairings.wait_fresh(5)
    # more requests at once than the page has threads (6 on this machine): each answers in 1 s
    with ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(lambda _: _get(server, f"/api/score/1/A/{token}"), range(12)))
    assert {status for status, _ in answers} == {200}
    phone = "".join(text for _, text in answers) + _get(server, f"/S/1/A/{token}")[1]
    assert not [piece for piece in _pieces(SECRET) if piece in phone]
    assert not [text for _, text in answers if "a.t" in text]  # a phone is told of no file
    assert os.path.dirname(a_t) not in phone
    form = json.loads(answers[0][1])
    assert form["names"] == [ANN, DAN] and form["stale"] == STALE_NOTE  # the names read last, said stale
    # the director's page says which file and why (never the secret's bytes: it was never read)
    problem = page_json(server, "/api/scores?round=3")["problem"]
    assert a_t in problem and "the names are as read at" in problem
    assert not [piece for piece in _pieces(SECRET) if piece in problem]


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


def test_a_hung_share_stalls_no_request_and_the_names_are_said_stale(event, monkeypatch):
    """A read that never returns (a network share gone away mid-read) stalls the pairings' own
    thread alone; the page answers from the last copy at once, marked stale."""
    server, book, pairings, a_t = event
    entered, release = threading.Event(), threading.Event()

    def hung(*_args):
        entered.set()
        release.wait(30)
        raise OSError(5, "Input/output error", a_t)

    monkeypatch.setattr(inputs, "read_schedule", hung)
    pairings.hung_s = 0.0  # a look not back at once counts as hung: no waiting on real time
    os.utime(a_t, ns=(1, 1))  # TSH wrote it: the next look reads it
    pairings.wait_fresh(0)
    try:
        assert entered.wait(5)
        token = book.issue(3, "1", "A")
        with ThreadPoolExecutor(12) as pool:
            answers = list(pool.map(lambda _: _get(server, f"/api/score/1/A/{token}"), range(12)))
        assert {status for status, _ in answers} == {200}
        assert json.loads(answers[0][1])["names"] == [ANN, DAN]
        assert json.loads(answers[0][1])["stale"] == STALE_NOTE
        assert "the pairings files have not answered since" in pairings.problem
        assert _get(server, "/api/scores?round=3")[0] == 200
    finally:
        release.set()


def test_pairings_that_do_not_answer_at_the_start_are_one_error_not_a_hang(tmp_path, monkeypatch):
    shutil.copy(TSH_FILES[0], tmp_path / "a.t")
    release = threading.Event()

    def hung(*_args):
        release.wait(30)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(inputs, "read_schedule", hung)
    try:
        with pytest.raises(PairingsError, match=r"a\.t: no answer in 0\.05 s \(a hung network share\?\)"):
            HallPairings(tsh=[str(tmp_path / "a.t")], start_s=0.05)
    finally:
        release.set()
    monkeypatch.undo()
    os.mkfifo(tmp_path / "pairings.csv")  # a CSV is read as TSH's files are
    with pytest.raises(TshFileRefused, match="pairings.csv: a FIFO"):
        HallPairings(csv=str(tmp_path / "pairings.csv"))


def test_the_console_names_the_file_once_and_says_when_it_is_read_well_again(event, tmp_path):
    _server, _book, pairings, a_t = event
    out = io.StringIO()
    _swap(a_t, "a FIFO", tmp_path)
    assert pairings.wait_fresh(5)
    said = _pairings_news(pairings, None, out)
    said = _pairings_news(pairings, said, out)  # said once, not every step of the hall's loop
    os.remove(a_t)
    shutil.copy(TSH_FILES[0], a_t)
    assert pairings.wait_fresh(5)
    _pairings_news(pairings, said, out)
    first, again = out.getvalue().splitlines()
    assert first.startswith(f"tileclock hall: the pairings cannot be read again: {a_t}: a FIFO")
    assert again == "tileclock hall: the pairings are read again: up to date"


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
