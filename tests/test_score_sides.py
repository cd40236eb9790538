"""A code for each side (issue 37, docs/hall.md "A code for each side"): the attacks a player on the
hall's Wi-Fi tried with a phone, each through the real server, a real mosquitto and a simulated
clock on it, the links read off the clock's panels with zbarimg, as a phone's camera reads them.

Each failed before its fix: one token a table opened both sides' forms (so one player alone made a
table agreed), an entry was taken for a game still in play or none at all, a token made entries
without end, a new link for one side replaced the other's, and an `https://` phone address made
every entry 403.
"""

import json
from types import SimpleNamespace

import pytest

from conftest import tap
from support.hall_helpers import page_post, page_request, wait_for
from support.halls import Clocks, director, settle
from support.qr_codes import scanned
from tileclock.clock.timecode import NS_PER_S
from tileclock.director.event import entries
from tileclock.director.event.entries import ScoreBook
from tileclock.director.event.score_links import ScoreLinks, phone_base
from tileclock.director.pages.web import COMMAND_HEADER, HallPage
from tileclock.wire.protocol import with_crc

S = NS_PER_S
#: the entries one token may make (8 since issue 37)
MAX_ENTRIES = getattr(entries, "MAX_ENTRIES", 8)


class Hall:
    """The hall's feed, score book, page and links as `tileclock hall --phone-url` wires them
    (cli/hall.py), the phones' address `scheme`://127.0.0.1:PORT (https: behind the director's TLS
    proxy, which passes the Host on)."""

    def __init__(self, broker, tmp_path, scheme="http"):
        self.feed = director(broker, tmp_path / "records")
        self.book = ScoreBook(str(tmp_path / "records" / "scores"))
        self.page = HallPage(self.feed, port=0, scores=self.book).start()
        self.scheme = scheme
        base = phone_base(f"{scheme}://127.0.0.1:{self.page.port}")
        self.links = self.page.links = ScoreLinks(self.book, base, self.feed.command)
        self.feed.subscribe(lambda clock, record, log: self.links.stored(clock, record, log))

    def get(self, path):
        return page_request(self.page, "GET", path)

    def post(self, path, form):
        """POST `form` as a phone's form (or the director's page) sends it, from the address the
        phone has (`scheme`): its Origin is that address."""
        return page_post(self.page, path, form, scheme=self.scheme)

    def close(self):
        self.page.close()
        self.feed.close()


def _play(broker, tmp_path, hall, end=True):
    """Clock c1 at table 12 of round 3 plays (and ends, with `end`) its game."""
    clocks = Clocks(broker, tmp_path, ids=("c1",))
    clocks.sims["c1"].send(with_crc("set round=3 table=12"), 1 * S)  # the page's Start round
    clocks.t["c1"] = 1
    clocks.play(4)
    if end:
        clocks.end_game("c1")
    settle(hall.feed, clocks, "the game's records")
    return clocks


def _panels(clocks, tmp_path, held=None):
    """{side: the link its panel shows}, read off each panel as a phone's camera reads it, once
    the clock holds a link (other than `held`): each player presses their own button once."""
    sim = clocks.sims["c1"]

    def holds():
        clocks.pump()
        link = sim.daemon.commands.score_code.link
        return link is not None and link != held

    wait_for(holds, what="the clock to hold the score links")
    shown = {}
    for side in "AB":
        tap(sim, side, clocks.t["c1"] + 2)
        clocks.t["c1"] += 3
        path = tmp_path / f"panel-{side}.png"
        sim.daemon.frames[side].save(path)
        shown[side] = scanned(path)
        tap(sim, side, clocks.t["c1"] + 2)  # and back to the final screen
        clocks.t["c1"] += 3
    return shown, sim.daemon.commands.score_code.link


def _api(link):
    """The form's data and entry route of the link `link` (`HTTP://HOST:PORT/S/12/A/TOKEN`)."""
    return "/api/score/" + link.split("/S/", 1)[1]


def _swapped(link, side):
    """`link`'s token at side `side`'s form of the same table."""
    head, _, token = link.rpartition("/")
    return f"{head[:-1]}{side}/{token}"


@pytest.fixture
def hall(broker, tmp_path):
    made = SimpleNamespace(hall=None, clocks=None)
    try:
        made.hall = Hall(broker, tmp_path)
        yield made
    finally:
        if made.clocks:
            made.clocks.close()
        made.hall.close()


def test_side_as_code_cannot_open_or_post_side_bs_form(hall, broker, tmp_path):
    hall.clocks = _play(broker, tmp_path, hall.hall)
    shown, _ = _panels(hall.clocks, tmp_path)
    stolen = _swapped(shown["A"], "B")  # the player at A, at B's form with A's code
    assert hall.hall.get(stolen.split(f":{hall.hall.page.port}", 1)[1])[0] == 200  # (the page itself)
    assert hall.hall.get(_api(stolen))[0] == 403
    assert hall.hall.post(_api(stolen), "score_a=500&score_b=300")[0] == 403
    assert hall.hall.book.state(3)["tables"] == []
    assert shown["A"].rsplit("/", 1)[1] != shown["B"].rsplit("/", 1)[1]  # a token a side
    assert hall.hall.get(_api(shown["B"]))[0] == 200  # B's own code opens B's form


def test_one_side_alone_never_makes_the_table_agreed(hall, broker, tmp_path):
    hall.clocks = _play(broker, tmp_path, hall.hall)
    shown, _ = _panels(hall.clocks, tmp_path)
    # the player at A enters, then again as B with A's code: the table waits for B
    assert hall.hall.post(_api(shown["A"]), "score_a=500&score_b=300")[0] == 200
    hall.hall.post(_api(_swapped(shown["A"], "B")), "score_a=500&score_b=300")
    (table,) = hall.hall.book.state(3)["tables"]
    assert table["status"] == "waiting" and [h["by"] for h in table["history"]] == ["phone A"]
    # B's own entry agreeing makes the table agreed
    status, text = hall.hall.post(_api(shown["B"]), "score_a=500&score_b=300")
    assert status == 200 and json.loads(text)["status"] == "agreed"


@pytest.mark.parametrize(
    ("table", "round_number", "why"),
    [
        ("12", 3, "has not ended on the clock"),  # the game in play
        ("12", 4, "no game of round 4 has ended at table 12"),  # a round the table has not played
        ("13", 3, "no game of round 3 has ended at table 13"),  # a table no clock plays at
    ],
    ids=["not ended", "wrong round", "no game"],
)
def test_an_entry_for_a_game_not_ended_a_wrong_round_or_no_game_is_refused(
    hall, broker, tmp_path, table, round_number, why
):
    hall.clocks = _play(broker, tmp_path, hall.hall, end=False)  # table 12's game still in play
    status, text = hall.hall.post(f"/api/scores/{table}/link", f"round={round_number}")
    assert status == 200, text  # the director's links, which any table and round may have
    status, text = hall.hall.post(_api(json.loads(text)["A"]), "score_a=400&score_b=380")
    assert status == 409 and why in text, (status, text)
    assert hall.hall.book.state(round_number)["tables"] == []
    # once the game ends, its own round's link is taken
    hall.clocks.end_game("c1")
    settle(hall.hall.feed, hall.clocks, "the game's end")
    shown, _ = _panels(hall.clocks, tmp_path)
    assert hall.hall.post(_api(shown["A"]), "score_a=400&score_b=380")[0] == 200


def test_a_token_makes_its_bounded_entries_and_no_more(hall, broker, tmp_path):
    hall.clocks = _play(broker, tmp_path, hall.hall)
    shown, _ = _panels(hall.clocks, tmp_path)
    for number in range(MAX_ENTRIES):
        status, text = hall.hall.post(_api(shown["A"]), f"score_a={400 + number}&score_b=380")
        assert status == 200, (number, text)
    status, text = hall.hall.post(_api(shown["A"]), "score_a=1&score_b=2")
    assert status == 429 and "ask the director" in text
    (table,) = hall.hall.book.state(3)["tables"]
    assert len(table["history"]) == MAX_ENTRIES
    # the other side's token has its own entries; the director's entry is never bounded
    assert hall.hall.post(_api(shown["B"]), "score_a=407&score_b=380")[0] == 200
    assert hall.hall.post("/api/scores/12", "round=3&score_a=407&score_b=380")[0] == 200


def test_a_new_link_for_side_a_leaves_side_bs_code_working(hall, broker, tmp_path):
    hall.clocks = _play(broker, tmp_path, hall.hall)
    shown, held = _panels(hall.clocks, tmp_path)
    status, text = hall.hall.post("/api/scores/12/link", "round=3&side=A")  # A's phone leaked its code
    assert status == 200
    made = json.loads(text)
    assert made["A"] != shown["A"] and made["B"] == shown["B"]
    assert "side A's old link no longer works (side B's still does)" in made["told"]
    again, _ = _panels(hall.clocks, tmp_path, held)  # the clock shows A's new code, B's as it was
    assert again == {"A": made["A"], "B": shown["B"]}
    assert hall.hall.get(_api(shown["A"]))[0] == 403
    assert hall.hall.get(_api(shown["B"]))[0] == 200
    assert hall.hall.post(_api(shown["B"]), "score_a=400&score_b=380")[0] == 200
    status, text = hall.hall.post(_api(made["A"]), "score_a=400&score_b=380")
    assert status == 200 and json.loads(text)["status"] == "agreed"


def test_phones_reaching_the_page_by_an_https_address_enter_their_scores(broker, tmp_path):
    """`--phone-url https://...` (a TLS proxy in front of the page): the phones' Origin is
    `https://` + the Host. It was refused (403) on every entry: the check wanted `http://`."""
    hall = Hall(broker, tmp_path, scheme="https")
    clocks = _play(broker, tmp_path, hall)
    try:
        shown, _ = _panels(clocks, tmp_path)
        assert shown["A"].startswith(f"HTTPS://127.0.0.1:{hall.page.port}/S/12/A/")
        status, text = hall.post(_api(shown["A"]), "score_a=400&score_b=380")
        assert status == 200, text
        # another site's page is still refused, whatever its scheme
        host = f"127.0.0.1:{hall.page.port}"
        for origin in ("https://evil.example", f"https://{host}.evil.example", f"ftp://{host}"):
            headers = {
                "Host": host,
                "Origin": origin,
                COMMAND_HEADER: "1",
                "Content-Type": "application/x-www-form-urlencoded",
                "Content-Length": "21",
            }
            body = b"score_a=1&score_b=222"
            assert page_request(hall.page, "POST", _api(shown["B"]), headers, body)[0] == 403, origin
    finally:
        clocks.close()
        hall.close()
