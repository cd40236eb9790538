"""The score code on the panels (issue 29, docs/player-guide.md "Entering the score"): the hall's
link comes to the clock as a `code` command, and a player's press on the ended game shows it on
their own panel as a QR code that a real decoder (Debian's zbarimg, from zbar-tools) reads back
as the exact link of that side's score form. The final screens come first."""

import os
import subprocess

import pytest
from PIL import Image

from conftest import events
from support.qr_codes import in_glass, scanned, zbarimg
from tileclock.device.screen.score_screen import code_matrix, draw_code
from tileclock.device.screen.text import Panel
from tileclock.wire.protocol import CommandError, parse_command, with_crc

BASE, TOKEN = "HTTP://192.168.1.20:8080/S/12", "7Q4K2M9X"
TOKEN_B = "3R5T6Y8U"
#: a game played and ended by the two-step end; its `new_game` is seq 1 (the boot is 0)
GAME = """\
0 press B
10 press A
20 press STOP
21 hold STOP 2.5
24 press STOP
"""


def scanned_all(paths):
    """Every code zbarimg reads off any of the frames `paths`, in one run of it (a set)."""
    shown = [in_glass(path) for path in paths]
    result = subprocess.run(
        [zbarimg(), "--quiet", "--raw", *shown], capture_output=True, text=True, timeout=120
    )
    for name in shown:
        os.remove(name)
    return set(result.stdout.split())


def test_a_press_on_the_ended_game_shows_that_sides_code_and_a_phone_reads_its_exact_link(sim, tmp_path):
    script = GAME + f"30 send code 1 {BASE} {TOKEN}\n40 press A\n50 press B\n60 press A\n70 until\n"
    records = sim(script, "--frames", str(tmp_path))
    assert not events(records, "error")  # the link was taken
    ignored = [(r["button"], r["reason"]) for r in events(records, "ignored")]
    assert ignored == [("A", "ended"), ("B", "ended"), ("A", "ended")]  # recorded, never acted on
    # the final screen first: the times and penalties, no code, on both panels, before and after the link
    for instant in ("t000024005", "t000030000"):
        for side in "AB":
            assert scanned(tmp_path / f"{instant}-{side}.png") is None
    # the link held, the final screen says how to show the code
    assert (
        Image.open(tmp_path / "t000030000-A.png").tobytes()
        != Image.open(tmp_path / "t000024005-A.png").tobytes()
    )
    # A's press: A's panel shows A's link, B's panel still its final screen
    assert scanned(tmp_path / "t000040005-A.png") == f"{BASE}/A/{TOKEN}"
    assert scanned(tmp_path / "t000040005-B.png") is None
    # B's press: B's link on B's panel
    assert scanned(tmp_path / "t000050005-B.png") == f"{BASE}/B/{TOKEN}"
    # A again: back to A's final screen, the same as before the code
    again = Image.open(tmp_path / "t000060005-A.png").tobytes()
    assert again == Image.open(tmp_path / "t000030000-A.png").tobytes()


def test_each_panel_shows_its_own_sides_link_and_never_the_others(sim, tmp_path):
    """Issue 37: one token for both sides let the phone that read A's panel open B's form. The hall
    now sends a token a side; A's panel shows A's link alone, B's panel B's."""
    script = GAME + f"30 send code 1 {BASE} {TOKEN} {TOKEN_B}\n40 press A\n50 press B\n60 until\n"
    records = sim(script, "--frames", str(tmp_path))
    assert not events(records, "error")
    assert scanned(tmp_path / "t000040005-A.png") == f"{BASE}/A/{TOKEN}"
    assert scanned(tmp_path / "t000050005-B.png") == f"{BASE}/B/{TOKEN_B}"
    # every frame since the code came (none before it can hold a link it had not been given)
    since = [
        tmp_path / name for name in os.listdir(tmp_path) if name.endswith(".png") and name >= "t000030000"
    ]
    shown = scanned_all(since)
    assert f"{BASE}/B/{TOKEN}" not in shown and f"{BASE}/A/{TOKEN_B}" not in shown


def test_without_a_link_a_press_on_the_ended_game_changes_nothing_on_the_panels(sim, tmp_path):
    sim(GAME + "40 press A\n50 until\n", "--frames", str(tmp_path))
    assert not [name for name in os.listdir(tmp_path) if name.startswith("t00004")]


def test_a_link_for_a_game_gone_by_is_refused_and_a_new_game_drops_the_link(sim, tmp_path):
    # the link for game 1 comes after the players started the next game: refused, never shown
    late = GAME + f"30 hold STOP 2.5\n40 send code 1 {BASE} {TOKEN}\n"
    records = sim(late, "--frames", str(tmp_path))
    assert "code: for game 1" in events(records, "error")[-1]["detail"]
    # a link taken, then a new game: the new game's panels show no code
    dropped = GAME + f"30 send code 1 {BASE} {TOKEN}\n40 press A\n50 hold STOP 2.5\n60 press A\n"
    frames = tmp_path / "dropped"
    records = sim(dropped, "--frames", str(frames))
    assert scanned(frames / "t000040005-A.png") == f"{BASE}/A/{TOKEN}"
    assert events(records, "new_game")
    assert scanned_all(frames / name for name in os.listdir(frames) if name >= "t000050000") == set()


@pytest.mark.parametrize(
    "line",
    [
        f"code 1 {BASE.lower()} {TOKEN}",  # lower case: not QR's compact mode
        f"code 1 HTTP://HALL/S/TABLE_2 {TOKEN}",  # `_` is not in it either
        f"code 1 FTP://HALL/S/2 {TOKEN}",
        f"code 1 {BASE}/EXTRA {TOKEN}",
        f"code 1 {BASE} {TOKEN.lower()}",
        f"code x {BASE} {TOKEN}",
        f"code 1 {BASE}",
        f"code 1 HTTP://{'H' * 40}/S/{'T' * 20} {'K' * 16}",  # over 77 characters: no version-3 code
    ],
)
def test_a_code_command_is_held_to_its_shape(line):
    with pytest.raises(CommandError):
        parse_command(with_crc(line).encode("ascii"))


def test_a_code_command_needs_its_crc_and_gives_the_game_the_base_and_the_token():
    with pytest.raises(CommandError, match="CRC"):
        parse_command(f"code 1 {BASE} {TOKEN}".encode("ascii"))
    command = parse_command(with_crc(f"code 12 {BASE} {TOKEN} {TOKEN_B}").encode("ascii"))
    assert (command.name, command.args) == ("code", (12, BASE, (TOKEN, TOKEN_B)))
    # a hall from before each side had its own token: its one token on both panels, as before
    command = parse_command(with_crc(f"code 12 {BASE} {TOKEN}").encode("ascii"))
    assert (command.name, command.args) == ("code", (12, BASE, (TOKEN, TOKEN)))


def test_the_longest_link_taken_still_fits_a_version_3_code_that_scans(tmp_path):
    base = f"HTTP://{'H' * 38}/S/{'T' * 7}"
    token = "K" * 16
    line = f"code 1 {base} {'J' * 16} {token}"
    assert len(with_crc(line)) <= 120
    _, base_, tokens_ = parse_command(with_crc(line).encode("ascii")).args
    assert len(code_matrix(f"{base_}/A/{tokens_[0]}")) == 29  # version 3: 58 of the panel's 64 rows

    class View:
        score_link = (base_, tokens_)

    path = tmp_path / "longest.png"
    draw_code(View(), Panel(faces="B")).save(path)
    assert scanned(path) == f"{base}/B/{token}"


def test_the_hall_sends_a_link_only_for_the_newest_games_end_with_its_round_and_table(tmp_path):
    from types import SimpleNamespace

    from tileclock.director.event.entries import ScoreBook
    from tileclock.director.event.score_links import ScoreLinks, phone_base

    sent = []
    links = ScoreLinks(
        ScoreBook(str(tmp_path)), phone_base("http://hall.local:8080/"), lambda *a: sent.append(a)
    )
    end = {"ev": "end", "seq": 40, "round": 3, "table": "7"}
    game = SimpleNamespace(seq=31, end=end)
    log = SimpleNamespace(game=game, board="9")
    assert links.stored("c1", {"ev": "switch", "seq": 39}, log) is None
    text = links.stored("c1", end, log)
    ((command, clock),) = sent
    assert (command, clock) == (text, "c1") and text.startswith("code 31 HTTP://HALL.LOCAL:8080/S/7 ")
    assert parse_command(with_crc(text).encode("ascii")).args[:2] == (31, "HTTP://HALL.LOCAL:8080/S/7")
    later = {**end, "seq": 44}  # a correction after the end: its summary again, the same link
    assert (
        links.stored("c1", later, SimpleNamespace(game=SimpleNamespace(seq=31, end=later), board="9")) == text
    )
    # an old game's end, replayed after a newer game opened: no link
    assert links.stored("c1", end, SimpleNamespace(game=SimpleNamespace(seq=50, end=None), board="9")) is None
    # no round on the clock: no link, and the hall says why
    assert links.stored("c2", {**end, "round": None}, log) is None
    assert "no round" in links.skipped[-1][1]
    with pytest.raises(ValueError, match="--phone-url"):
        phone_base("hall.local:8080")
