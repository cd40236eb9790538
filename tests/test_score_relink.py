"""New phone links from the director's Scores page reach the table's clock, and a restarted hall
keeps every link it made (docs/hall.md, "Scores at the board"): a real mosquitto, a simulated clock
on it, the hall's feed, page and score links as `tileclock hall --phone-url` wires them; the QR
code on the clock's panel is read back with zbarimg."""

import json
import os
import stat
from types import SimpleNamespace

import pytest

from conftest import tap
from support.hall_helpers import game_ended, page_post, page_request, wait_for
from support.halls import Clocks, director, kill_director, settle
from support.qr_codes import scanned
from tileclock.clock.timecode import NS_PER_S
from tileclock.director.event.entries import ScoreBook
from tileclock.director.event.score_links import ScoreLinks, phone_base
from tileclock.director.hall.audit_read import read
from tileclock.director.pages.web import HallPage
from tileclock.wire.protocol import with_crc

S = NS_PER_S


class Hall:
    """The hall's feed, score book, page and links on `tmp_path`'s records folder, as cli/hall.py
    wires them; started again on the same folder, it is the hall after a restart."""

    def __init__(self, broker, tmp_path, port=0):
        self.feed = director(broker, tmp_path / "records")
        self.book = ScoreBook(str(tmp_path / "records" / "scores"))
        self.page = HallPage(self.feed, port=port, scores=self.book).start()
        self.links = self.page.links = ScoreLinks(
            self.book, phone_base(f"http://127.0.0.1:{self.page.port}"), self.feed.command
        )
        self.sent = []
        self.feed.subscribe(
            lambda clock, record, log: self.sent.append(self.links.stored(clock, record, log))
        )

    def request(self, method, path, body=None):
        """A GET as a phone's browser asks, or a POST as the page's (or the form's) own script."""
        if method == "POST":
            return page_post(self.page, path, body)
        return page_request(self.page, method, path)

    def close(self, killed=False):
        self.page.close()
        kill_director(self.feed) if killed else self.feed.close()


def _ended_game(broker, tmp_path, hall):
    """Clock c1 at table 12 of round 3 plays and ends its game; the hall sends it its links (their
    tokens: {side: token})."""
    clocks = Clocks(broker, tmp_path, ids=("c1",))
    clocks.sims["c1"].send(with_crc("set round=3 table=12"), 1 * S)  # the page's Start round
    clocks.t["c1"] = 1
    clocks.play(4)
    clocks.end_game("c1")
    settle(hall.feed, clocks, "the game's end")
    (command,) = [text for text in hall.sent if text]
    return clocks, dict(zip("AB", command.split()[-2:], strict=True))


@pytest.fixture
def ended(broker, tmp_path):
    """The hall, and clock c1 whose game at table 12 of round 3 ended and was sent its link:
    `.hall`, `.clocks`, `.tokens` ({side: token}). A test may replace `.hall` (a restart): the one left is closed."""
    board = SimpleNamespace(hall=Hall(broker, tmp_path), clocks=None)
    try:
        board.clocks, board.tokens = _ended_game(broker, tmp_path, board.hall)
        yield board
    finally:
        board.hall.close()
        if board.clocks:
            board.clocks.close()


def _shown(clocks, tmp_path, tokens, side="A"):
    """The link panel `side` shows once the clock holds `tokens` ({side: token}) and the player
    at `side` presses their button (a second press turns the panel back: one press a test)."""
    sim = clocks.sims["c1"]

    def holds():
        clocks.pump()
        return (sim.daemon.commands.score_code.link or (None, None))[1] == (tokens["A"], tokens["B"])

    wait_for(holds, what=f"the clock to hold the links {tokens}")
    tap(sim, side, clocks.t["c1"] + 2)
    clocks.t["c1"] += 3
    sim.daemon.frames[side].save(tmp_path / f"panel-{side}.png")
    return scanned(tmp_path / f"panel-{side}.png")


def test_new_phone_links_go_to_the_tables_clock_and_the_old_ones_stop(ended, tmp_path):
    hall, clocks, firsts = ended.hall, ended.clocks, ended.tokens
    first = firsts["A"]
    base = f"HTTP://127.0.0.1:{hall.page.port}/S/12"
    assert _shown(clocks, tmp_path, firsts) == f"{base}/A/{first}"

    # the director asks the Scores page for new links for table 12 (a phone leaked the old one)
    status, text = hall.request("POST", "/api/scores/12/link", "round=3")
    assert status == 200
    made = json.loads(text)
    tokens = {side: made[side].rsplit("/", 1)[1] for side in "AB"}
    token = tokens["A"]
    assert (
        token != first
        and tokens["B"] != firsts["B"]
        and made
        == {
            "A": f"{base}/A/{token}",
            "B": f"{base}/B/{tokens['B']}",
            "new": ["A", "B"],
            "told": made["told"],
        }
    )
    assert made["told"].startswith("Sent to c1: ") and "the old links no longer work" in made["told"]
    # the clock shows the new link: what the director reads out and the QR code agree
    assert _shown(clocks, tmp_path, tokens) == made["A"]
    assert hall.request("GET", f"/api/score/12/A/{first}")[0] == 403
    status, text = hall.request("POST", f"/api/score/12/A/{first}", "score_a=400&score_b=380")
    assert status == 403 and "no longer" in text
    status, text = hall.request("POST", f"/api/score/12/A/{token}", "score_a=400&score_b=380")
    assert status == 200 and json.loads(text)["status"] == "waiting"
    # audited as every director's command, with the page session; the token is nowhere on it
    (line,) = [entry for entry in read(str(tmp_path / "records")) if entry["action"] == "link"]
    game = hall.feed.store.log_of("c1").game.seq
    assert (line["clock"], line["table"], line["round"], line["changed"]) == (
        "c1", "12", 3, {"table": "12", "round": 3, "sides": "AB"}
    )  # fmt: skip  # one comparison
    assert line["command"] == f"code {game} {base} ******** ********" and line["by"] == "page"
    trail = (tmp_path / "records" / "audit.log").read_text()
    assert token not in trail and tokens["B"] not in trail
    # a later `end` of the game (a correction after it) keeps the new links
    assert hall.book.tokens_for(3, "12") == tokens

    # a table whose clock ended no game there: links made, no clock told, said so
    status, text = hall.request("POST", "/api/scores/13/link", "round=3")
    assert status == 200 and json.loads(text)["told"].startswith("No clock's last game ended at table 13")


def test_links_made_before_a_restart_of_the_hall_still_work_after_it(ended, broker, tmp_path):
    hall, clocks, tokens = ended.hall, ended.clocks, ended.tokens
    status, text = hall.request("POST", "/api/scores/5/link", "round=3")  # one read out, no clock
    typed = json.loads(text)["B"].rsplit("/", 1)[1]
    kept = tmp_path / "records" / "scores" / "tokens.json"
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600  # a token is a credential
    port = hall.page.port
    hall.close(killed=True)  # the hall's laptop loses power mid-round

    hall = ended.hall = Hall(broker, tmp_path, port)  # `tileclock hall` started again: its folder, --web
    assert hall.book.problem is None
    link = _shown(clocks, tmp_path, tokens)  # the code the clock has shown all along
    path = link.split(f":{hall.page.port}", 1)[1]
    assert hall.request("GET", path)[0] == 200
    status, text = hall.request("GET", path.replace("/S/", "/api/score/", 1))
    assert status == 200 and (json.loads(text)["round"], json.loads(text)["table"]) == (3, "12")
    assert hall.request("POST", path.replace("/S/", "/api/score/", 1), "score_a=400&score_b=380")[0] == 200
    assert hall.request("POST", f"/api/score/5/B/{typed}", "score_a=311&score_b=402")[0] == 409
    game_ended(tmp_path / "records", 3, "5")  # table 5's game ended on a clock the hall has on file
    assert hall.request("POST", f"/api/score/5/B/{typed}", "score_a=311&score_b=402")[0] == 200
    assert hall.book.tokens_for(3, "12") == tokens  # a later `end` sends the same links again


def test_a_clock_restarted_after_its_games_end_is_sent_the_same_link_again(ended, tmp_path):
    hall, clocks, tokens = ended.hall, ended.clocks, ended.tokens
    link = _shown(clocks, tmp_path, tokens)
    settle(hall.feed, clocks, "every record acknowledged")  # (else the clock sends its end again)
    clocks.sims["c1"].close()  # switched off and on: it starts again on its ended game, no link
    clocks.sims["c1"] = clocks.start("c1")
    assert clocks.sims["c1"].daemon.commands.score_code.link is None
    settle(hall.feed, clocks, "the clock's boot")
    assert _shown(clocks, tmp_path, tokens) == link  # the same links, the same tokens
    assert hall.book.tokens == {tokens["A"]: (3, "12", "A"), tokens["B"]: (3, "12", "B")}
    errors = [r for r in hall.feed.store.log_of("c1").game.records if r["ev"] == "error"]
    assert errors == []  # no code for a game the clock is not on
