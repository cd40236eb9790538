"""The score links' tokens kept on disk (OUT/scores/tokens.json, docs/hall.md "Scores at the board"),
and the phone's routes given what no honest phone sends: a restarted hall keeps every link, a file
that is not one the hall wrote is kept aside and named, never a crash."""

import os
import stat

import pytest

from support.feeds import Feed
from support.hall_helpers import game_ended, hall_page, page_json, page_post, page_request
from tileclock.director.event.entries import EntryRefused, ScoreBook
from tileclock.director.event.score_tokens import MAX_TOKENS


def _kept(folder):
    return os.path.join(folder, "tokens.json")


def test_tokens_are_kept_0600_replaced_whole_and_read_back_by_the_next_start(tmp_path):
    folder = str(tmp_path / "scores")
    book = ScoreBook(folder)
    first, second = book.issue(3, "12", "A"), book.issue(3, "a1", "B")
    again = book.issue(3, "12", "A")  # a new link for table 12's A: the first stops working, on disk too
    other = book.issue(3, "12", "B")
    book.spend(other)
    assert stat.S_IMODE(os.stat(_kept(folder)).st_mode) == 0o600
    assert sorted(os.listdir(folder)) == ["tokens.json"]  # no `.new` left beside it
    started = ScoreBook(folder)
    assert started.problem is None
    assert started.tokens == {second: (3, "a1", "B"), again: (3, "12", "A"), other: (3, "12", "B")}
    assert started.used == {other: 1}  # the entries a token made are kept with it
    assert started.grant_of("A1", "b", second).table == "a1"
    with pytest.raises(EntryRefused, match="no longer"):
        started.grant_of("12", "A", first)
    # a locked round's tokens leave the disk; the phone still hears that its round is locked
    started.issue(4, "12", "A")
    started.lock_round(3)
    with pytest.raises(EntryRefused, match="round 3 is locked"):
        started.grant_of("12", "A", again)
    assert {game for game in ScoreBook(folder).tokens.values()} == {(4, "12", "A")}


def test_a_table_or_round_no_link_can_name_is_refused_and_nothing_is_kept(tmp_path):
    book = ScoreBook(str(tmp_path))
    for round_number, table in (
        (0, "1"),
        (10_000, "1"),
        (3, "a b"),
        (3, '1"],"x'),
        (3, "x" * 33),
        ("3", "1"),
    ):
        with pytest.raises(EntryRefused):
            book.issue(round_number, table, "A")
    with pytest.raises(EntryRefused, match="side A or B"):
        book.issue(3, "1", "C")
    assert book.tokens == {} and not os.path.exists(_kept(str(tmp_path)))


def test_a_token_that_the_disk_refuses_is_never_given_out(tmp_path):
    book = ScoreBook(str(tmp_path))
    kept = book.issue(3, "1", "A")
    os.mkdir(_kept(str(tmp_path)) + ".new")  # where the new file goes: it cannot be made
    with pytest.raises(OSError):
        book.issue(3, "2", "A")
    with pytest.raises(OSError):
        book.spend(kept)
    assert (
        book.tokens == {kept: (3, "1", "A")} and book.used == {}
    )  # as before: nothing works that a restart would lose


HONEST = '{"version":2,"tokens":[\n{"token":"7Q4K2M9X","round":3,"table":"12","side":"A","entries":2}\n]}\n'
ONE = '{"token":"7Q4K2M9X","round":3,"table":"12","side":"A","entries":0}'
HOSTILE = {
    "cut short": HONEST[:30],
    "not JSON": "tokens: 7Q4K2M9X",
    "an array": "[]",
    "deep": "[" * 100_000 + "]" * 100_000,
    "too large": '{"version":2,"tokens":[' + ",".join([ONE] * 100_000) + "]}",
    "a long number": HONEST.replace('"round":3', '"round":' + "9" * 5000),
    "round 0": HONEST.replace('"round":3', '"round":0'),
    "lower case": HONEST.replace("7Q4K2M9X", "7q4k2m9x"),
    "an O": HONEST.replace("7Q4K2M9X", "7Q4K2MOX"),
    "nine letters": HONEST.replace("7Q4K2M9X", "7Q4K2M9XX"),
    "a path": HONEST.replace('"12"', '"../12"'),
    "a padded table": HONEST.replace('"12"', '"012"'),
    "no tokens": '{"version":2}',
    "twice": HONEST.replace("}\n]", "}," + ONE.replace('"12"', '"13"') + "\n]"),
    "two for a side": HONEST.replace("}\n]", "}," + ONE.replace("7Q4K", "8Q4K") + "\n]"),
    # a token a table, from before each side had its own: it opened both sides' forms
    "version 1": '{"version":1,"tokens":[\n{"token":"7Q4K2M9X","round":3,"table":"12"}\n]}\n',
    "no side": HONEST.replace('"side":"A",', ""),
    "side C": HONEST.replace('"side":"A"', '"side":"C"'),
    "entries -1": HONEST.replace('"entries":2', '"entries":-1'),
    "a BOM": "\ufeff" + HONEST,
}


@pytest.mark.parametrize("content", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_tokens_file_the_hall_did_not_write_is_kept_aside_and_named(tmp_path, content):
    folder = tmp_path / "scores"
    folder.mkdir()
    (folder / "tokens.json").write_text(content, encoding="utf-8")
    book = ScoreBook(str(folder), clock=lambda: 1_764_000_000)
    assert book.tokens == {}
    assert book.problem.startswith("tokens.json: not a tokens file the hall wrote (")
    assert "kept aside as tokens.json.bad-20251124T160000Z" in book.problem
    assert "make them again on the Scores page (New phone links)" in book.problem
    aside = folder / "tokens.json.bad-20251124T160000Z"
    assert aside.read_text(encoding="utf-8") == content and stat.S_IMODE(aside.stat().st_mode) == 0o600
    token = book.issue(3, "12", "B")  # the hall goes on: new links are kept as ever
    assert ScoreBook(str(folder)).tokens == {token: (3, "12", "B")}


def test_the_honest_file_above_is_one_the_book_reads(tmp_path):
    (tmp_path / "tokens.json").write_text(HONEST)
    book = ScoreBook(str(tmp_path))
    assert book.tokens == {"7Q4K2M9X": (3, "12", "A")} and book.used == {"7Q4K2M9X": 2}
    two = HONEST.replace("}\n]", "}," + ONE.replace("7Q4K", "8Q4K").replace('"A"', '"B"') + "\n]")
    (tmp_path / "tokens.json").write_text(two)  # the game's two sides, a token each
    assert len(ScoreBook(str(tmp_path)).tokens) == 2


@pytest.mark.parametrize("kind", ["not UTF-8", "a folder", "a link", "a pipe", "unreadable"])
def test_a_tokens_path_that_is_no_plain_file_is_kept_aside_too(tmp_path, kind):
    path = tmp_path / "tokens.json"
    if kind == "not UTF-8":
        path.write_bytes(b'{"tokens":[],"x":"\xff"}')
    elif kind == "a folder":
        path.mkdir()
    elif kind == "a link":  # planted to make the hall read (or write) another file
        (tmp_path / "elsewhere").write_text(HONEST)
        path.symlink_to(tmp_path / "elsewhere")
    elif kind == "a pipe":  # opened to read, a pipe with no writer would hang the hall's start
        os.mkfifo(path)
    else:
        path.write_text(HONEST)
        path.chmod(0)
        if os.access(path, os.R_OK):  # root reads it anyway: as good as honest
            pytest.skip("run as root: every file is readable")
    book = ScoreBook(str(tmp_path), clock=lambda: 1_764_000_000)
    assert book.tokens == {} and "kept aside as tokens.json.bad-" in book.problem
    assert not os.path.lexists(path)
    if kind == "a link":  # the file it named is left as it was, its mode too
        assert (tmp_path / "elsewhere").read_text() == HONEST
        assert stat.S_IMODE((tmp_path / "elsewhere").stat().st_mode) != 0o600
    book.issue(3, "1", "A")
    assert stat.S_ISREG(os.lstat(path).st_mode)  # a new plain file, not through the link


def test_the_open_links_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr("tileclock.director.event.entries.MAX_TOKENS", 3)
    book = ScoreBook(str(tmp_path))
    for table in "123":
        book.issue(1, table, "A")
    with pytest.raises(EntryRefused, match="3 links are open: lock the rounds that are over"):
        book.issue(2, "1", "A")
    book.lock_round(1)
    book.issue(2, "1", "A")  # the locked round's links let go for it
    assert MAX_TOKENS >= 99 * 500 // 1  # every round of a large event, if none is ever locked


@pytest.fixture
def hall(tmp_path):
    book = ScoreBook(str(tmp_path / "scores"))
    with hall_page(Feed(tmp_path), scores=book) as server:
        yield server, book


def _ask(server, method, path, body=b""):
    if method == "POST":
        return page_post(server, path, body.decode())
    return page_request(server, method, path)


def test_a_phone_route_given_hostile_input_refuses_it_in_words(hall):
    server, book = hall
    token = book.issue(3, "5", "A")
    other = book.issue(3, "6", "B")
    game_ended(server.feed.store.outdir, 3, "5")
    for shape in ("7Q4K2M9", token + "X", "%00" * 8, "%C3%A9" * 8, "A" * 4000, "..%2F..%2Fetc", other):
        status, text = _ask(server, "GET", f"/api/score/5/A/{shape}")
        assert status in (403, 404), (shape, status)
        status, text = _ask(server, "POST", f"/api/score/5/A/{shape}", b"score_a=1&score_b=2")
        assert status in (403, 404) and "Traceback" not in text, (shape, status)
    assert _ask(server, "GET", f"/api/score/5/C/{token}")[0] == 404
    assert _ask(server, "POST", f"/api/score/5/C/{token}", b"score_a=1&score_b=2")[0] == 404
    # a huge body is refused by its length, before it is read
    status, text = _ask(server, "POST", f"/api/score/5/A/{token}", b"score_a=1&score_b=2&x=" + b"9" * 100_000)
    assert status == 400 and "Content-Length" in text
    for scores in (
        b"score_a=1e9&score_b=2",
        b"score_a=99999&score_b=2",
        b"score_a=&score_b=2",
        b"score_a=1&score_b=%00",
        b"score_a[0][1]=1&score_b=2",  # nested: no such field
        b"score_a=score_a%3D1&score_b=2",
        b"score_a=1&score_a=402&score_b=2",  # sent twice: the first was taken, unseen
        b"score_a=402" + b"+" * 9 + b"9&score_b=380",  # junk past 12 characters: cut to 402, taken
        b"score_a=380&score_b=2&seat_a=1" + b"0" * 12,
    ):
        status, text = _ask(server, "POST", f"/api/score/5/A/{token}", scores)
        assert status == 400 and "a whole number as written on the slip" in text, scores
    # a link for table 6 opens table 6 only, whatever table the path names
    assert _ask(server, "POST", f"/api/score/5/B/{other}", b"score_a=1&score_b=2")[0] == 403
    assert book.state(3)["tables"] == []  # nothing entered by any of it
    assert _ask(server, "POST", f"/api/score/5/A/{token}", b"score_a=402&score_b=380")[0] == 200
    assert _ask(server, "POST", "/api/scores/a%2Cb/link", b"round=3")[0] in (400, 404)
    assert _ask(server, "POST", "/api/scores/a%2Cb", b"round=3&score_a=1&score_b=2")[0] in (400, 404)


def test_the_scores_page_names_a_tokens_file_kept_aside(tmp_path):
    (tmp_path / "scores").mkdir()
    (tmp_path / "scores" / "tokens.json").write_text("{")
    book = ScoreBook(str(tmp_path / "scores"))
    with hall_page(Feed(tmp_path), scores=book) as server:
        assert page_json(server, "/api/scores?round=1")["problem"] == book.problem
    assert "not a tokens file the hall wrote" in book.problem


def test_an_entries_file_a_power_cut_or_an_editor_spoiled_leaves_out_its_bad_lines_and_says_so(tmp_path):
    folder = tmp_path / "scores"
    book = ScoreBook(str(folder))
    book.enter(3, "1", "402", "380", "phone A")
    path = folder / "round-3-entries.csv"
    with open(path, "a", encoding="utf-8") as file:
        file.write("2,35")  # a power cut in the middle of the next line
    book.enter(3, "2", "355", "411", "director")  # not glued onto the torn line
    with open(path, "a", encoding="utf-8") as file:
        file.write("3,four hundred,380,,director,x\r\n4,1,2,,director,x,one too many\r\n,1,2,,director,x\r\n")
    book.enter(3, "5", "300", "310", "phone B")
    state = book.state(3)
    assert {t["table"]: t["scores"] for t in state["tables"]} == {
        "1": None,
        "2": {"A": 355, "B": 411},
        "5": None,
    }
    assert (
        state["unreadable"]
        == "round-3-entries.csv: lines 3, 5, 6, 7 are not entries: left out (see the file)"
    )
    with hall_page(Feed(tmp_path), scores=book) as server:
        assert page_json(server, "/api/scores?round=3")["problem"] == state["unreadable"]
    with open(path, "a", encoding="utf-8") as file:  # a field larger than the csv module takes
        file.write("6,1,2,,director," + "x" * 200_000 + "\r\n7,1,2,,director,x\r\n")
    assert [t["table"] for t in book.state(3)["tables"]] == ["1", "2", "5", "7"]
    assert book.state(3)["unreadable"].endswith(
        "lines 3, 5, 6, 7, 9 are not entries: left out (see the file)"
    )
