"""The score link from the hall to the clock and on to a phone (issue 29, docs/hall.md "Scores at
the board"): a real mosquitto, a simulated clock on it, the hall's feed and page. The game ends, the
hall sends the clock its link, the player at A presses A, and the QR code on A's panel, read back by
zbarimg, opens side A's score form of that table's game on the page."""

import json

from conftest import tap
from support.hall_helpers import page_request, wait_for
from support.halls import Clocks, director, settle
from support.qr_codes import scanned
from tileclock.clock.timecode import NS_PER_S
from tileclock.director.event.entries import ScoreBook
from tileclock.director.event.score_links import ScoreLinks, phone_base
from tileclock.director.pages.web import HallPage
from tileclock.wire.protocol import with_crc

S = NS_PER_S


def test_an_ended_games_link_goes_to_its_clock_and_its_code_opens_that_sides_form(broker, tmp_path):
    clocks = Clocks(broker, tmp_path, ids=("c1",))
    sim = clocks.sims["c1"]
    feed = director(broker, tmp_path / "records")
    book = ScoreBook(str(tmp_path / "scores"))
    page = HallPage(feed, port=0, scores=book).start()
    try:
        # as `tileclock hall --phone-url` wires it (cli/hall.py)
        links = ScoreLinks(book, phone_base(f"http://127.0.0.1:{page.port}"), feed.command)
        sent = []
        feed.subscribe(lambda clock, record, log: sent.append(links.stored(clock, record, log)))
        sim.send(with_crc("set round=3 table=12"), 1 * S)  # the page's Start round, and the table
        clocks.t["c1"] = 1
        clocks.play(4)
        settle(feed, clocks, "the game under way")
        assert not any(sent)  # nothing before the end
        clocks.end_game("c1")
        settle(feed, clocks, "the game's end")
        (command,) = [text for text in sent if text]
        tokens = dict(zip("AB", command.split()[-2:], strict=True))  # a token a side
        token = tokens["A"]
        assert tokens["A"] != tokens["B"]

        def taken():
            clocks.pump()
            return sim.daemon.commands.score_code.link is not None

        wait_for(taken, what="the link on the clock")
        path = tmp_path / "panel-A.png"
        sim.daemon.frames["A"].save(path)
        assert scanned(path) is None  # the final screen first
        tap(sim, "A", clocks.t["c1"] + 2)  # the player at A asks for the code
        sim.daemon.frames["A"].save(path)
        link = scanned(path)
        assert link == f"HTTP://127.0.0.1:{page.port}/S/12/A/{token}"
        assert sim.daemon.frames["B"].tobytes() != sim.daemon.frames["A"].tobytes()
        # the phone's browser opens it (a browser asks for the path as the link has it)
        path_ = link.split(f":{page.port}", 1)[1]
        status, body = page_request(page, "GET", path_)
        assert status == 200 and "<form" in body.lower()
        status, body = page_request(page, "GET", path_.replace("/S/", "/api/score/", 1))
        game = json.loads(body)
        assert (status, game["round"], game["table"], game["side"]) == (200, 3, "12", "A")
        # a later `end` (a correction after the game) keeps the same link
        assert book.tokens_for(3, "12") == tokens
    finally:
        page.close()
        feed.close()
        clocks.close()
