"""Scores entered at the board and on the director's page, kept with who and when, until the round
is locked; then `tileclock scores` makes the TSH lines from them.

The browser part runs Debian's chromium under Playwright (as tests/test_hall_page.py does): two
phone-sized pages enter a table's scores with the game's token, the director's page shows the
table agreed, corrects another, makes a table new phone links (after a confirmation), locks the
round; the entries file then gives the lines for TSH.
"""

import io
import json
import os
import re
from contextlib import redirect_stdout

import pytest

from support.feeds import Feed
from support.hall_helpers import game_ended, hall_page, page_json, page_post, pages_question
from support.phones import PHONE
from support.tournament import TSH_FILES, play_round
from tileclock.cli import main
from tileclock.director.event.entries import (
    TOKEN_ALPHABET,
    TOKEN_LENGTH,
    EntryRefused,
    ScoreBook,
    read_entries,
)
from tileclock.director.hall.audit_read import read


class Clock:
    """Wall time for the book, stepped by the test."""

    def __init__(self):
        self.now = 1_764_000_000

    def __call__(self):
        self.now += 7
        return self.now


@pytest.fixture
def book(tmp_path):
    return ScoreBook(str(tmp_path / "scores"), clock=Clock())


def test_a_token_is_for_one_tables_game_and_ends_with_the_round(book):
    token = book.issue(3, "12", "A")
    assert len(token) == TOKEN_LENGTH and set(token) <= set(TOKEN_ALPHABET)
    assert book.grant_of("12", "A", token).round == 3 and book.grant_of("12", "a", token.lower()).round == 3
    with pytest.raises(EntryRefused, match="not \\(or no longer\\) valid for this table"):
        book.grant_of("11", "A", token)
    again = book.issue(3, "12", "A")  # a new game at the table: the old token stops working
    with pytest.raises(EntryRefused):
        book.grant_of("12", "A", token)
    book.lock_round(3)
    with pytest.raises(EntryRefused, match="round 3 is locked"):
        book.grant_of("12", "A", again)


def test_entries_are_kept_with_who_and_when_and_agree_or_are_flagged(book):
    book.enter(3, "1", "402", "380", "phone A")
    assert book.state(3)["tables"][0]["status"] == "waiting"
    book.enter(3, "1", "402", "380", "phone B")
    book.enter(3, "2", "355", "411", "phone A")
    book.enter(3, "2", "355", "414", "phone B")
    state = {t["table"]: t for t in book.state(3)["tables"]}
    assert (state["1"]["status"], state["1"]["scores"]) == ("agreed", {"A": 402, "B": 380})
    assert (
        state["2"]["status"] == "disagree"
        and "phone A: A 355 B 411; phone B: A 355 B 414" in state["2"]["why"]
    )
    book.enter(3, "2", "355", "411", "director")
    state = {t["table"]: t for t in book.state(3)["tables"]}
    assert (state["2"]["status"], state["2"]["scores"]) == ("settled", {"A": 355, "B": 411})
    assert [(h["by"], h["at"]) for h in state["2"]["history"]] == [
        ("phone A", "2025-11-24T16:00:21Z"),
        ("phone B", "2025-11-24T16:00:28Z"),
        ("director", "2025-11-24T16:00:35Z"),
    ]
    with pytest.raises(EntryRefused, match="side B's score: a whole number"):
        book.enter(3, "3", "400", "four hundred", "director")
    book.lock_round(3)
    with pytest.raises(EntryRefused, match="round 3 is locked"):
        book.enter(3, "3", "400", "380", "director")
    # the file is what `tileclock scores --entries` reads, in the order made
    entries = read_entries(book._path(3, "entries"))
    assert [(e.table, e.by, e.scores) for e in entries][-1] == ("2", "director", {"A": 355, "B": 411})


def test_a_line_a_power_cut_left_short_is_no_entry_for_the_hall_nor_for_tileclock_scores(book):
    """One reader for both: a director's 400-380 cut off at `12,400,38` was read by `tileclock
    scores` as the director's entry of 400 to 38, which settles the table."""
    book.enter(3, "12", "400", "380", "phone A")
    path = book._path(3, "entries")
    with open(path, "a", encoding="utf-8") as file:
        file.write("12,400,38")
    book.enter(3, "12", "400", "380", "phone B")  # on a line of its own after the cut one
    state = book.state(3)
    assert [(t["table"], t["status"], t["scores"]) for t in state["tables"]] == [
        ("12", "agreed", {"A": 400, "B": 380})
    ]
    assert state["unreadable"].endswith("line 3 is not an entry: left out (see the file)")
    with pytest.raises(ValueError, match=r"entries\.csv, line 3: not as many fields as the header names"):
        read_entries(path)


@pytest.fixture
def hall(book):
    feed = Feed()
    for table in "1234567":  # the round's games have ended: the phones' entries are taken
        game_ended(feed.store.outdir, 3, table)
    with hall_page(feed, scores=book, phones=("127.0.0.1", 0)) as server:
        yield server, book


def test_a_phone_enters_with_its_token_and_nothing_else_gets_in(hall):
    server, book = hall
    token = book.issue(3, "5", "A")
    assert page_post(server, f"/api/score/5/A/{token}", "score_a=366&score_b=372")[0] == 200
    status, text = page_post(server, "/api/score/5/A/AAAAAAAA", "score_a=1&score_b=2")
    assert status == 403 and "not (or no longer) valid" in text
    status, text = page_post(server, f"/api/score/4/A/{token}", "score_a=1&score_b=2")
    assert status == 403 and "not (or no longer) valid" in text
    assert page_post(server, f"/api/score/5/A/{token}", "score_a=366&score_b=372", own=False)[0] == 403
    assert page_post(server, "/api/scores/5", "round=3&score_a=1&score_b=2", own=False)[0] == 403
    assert page_post(server, "/api/round/lock", "round=3")[0] == 200
    status, text = page_post(server, f"/api/score/5/A/{token}", "score_a=366&score_b=372")
    assert status == 403 and "round 3 is locked" in text
    status, text = page_post(server, "/api/scores/5", "round=3&score_a=366&score_b=372")
    assert status == 400 and "round 3 is locked" in text
    (table,) = book.state(3)["tables"]
    assert [(h["by"], h["A"], h["B"]) for h in table["history"]] == [("phone A", 366, 372)]
    # every entry on the audit trail, the phone's named by its table's link, and what became of it
    # (a link no longer valid enters nothing: no entry to audit)
    trail = [(e["action"], e["by"], e.get("table"), e["outcomes"]) for e in read(server.feed.store.outdir)]
    assert [(action, by, table) for action, by, table, _ in trail] == [
        ("score", "phone-5-A", "5"),
        ("lock", "page", None),
        ("score", "page", "5"),
    ]
    said = [outcomes.get(None, {}).get("outcome") for *_, outcomes in trail]
    assert said == ["applied", None, "refused"]
    assert trail[2][3][None]["reason"] == "round 3 is locked: ask the director"
    assert "token" not in json.dumps(trail).lower() and token not in json.dumps(trail)


def test_no_entry_and_no_lock_without_its_line_on_the_audit_trail(hall):
    server, book = hall
    token = book.issue(3, "5", "A")
    os.mkdir(os.path.join(server.feed.store.outdir, "audit.log"))  # the trail cannot be written
    for path, form in ((f"/api/score/5/A/{token}", "score_a=366&score_b=372"),
                       ("/api/scores/5", "round=3&score_a=366&score_b=372")):  # fmt: skip  # a phone's and the director's, one a line
        status, text = page_post(server, path, form)
        assert status == 503 and "audit trail cannot be written" in text
    status, text = page_post(server, "/api/round/lock", "round=3")
    assert status == 503 and "not locked" in text
    assert book.state(3)["tables"] == [] and not book.locked(3)


def test_the_directors_page_makes_a_tables_phone_links(hall):
    server, book = hall
    status, text = page_post(server, "/api/scores/7/link", "round=3")
    assert status == 200
    links = json.loads(text)
    assert re.fullmatch(
        rf"HTTP://127\.0\.0\.1:{server.phones.port}/S/7/A/[{TOKEN_ALPHABET}]{{8}}", links["A"]
    )
    assert re.fullmatch(
        rf"HTTP://127\.0\.0\.1:{server.phones.port}/S/7/B/[{TOKEN_ALPHABET}]{{8}}", links["B"]
    )
    tokens = {side: links[side].rsplit("/", 1)[1] for side in "AB"}
    assert tokens["A"] != tokens["B"]  # a token a side
    game = page_json(server, f"/api/score/7/B/{tokens['B']}")
    assert (game["round"], game["table"], game["side"]) == (3, "7", "B")
    assert game["penalties"] == [
        "No game from this table's clock has reached the hall yet: the director applies its penalties."
    ]
    assert page_post(server, "/api/scores/7/link", "round=3", own=False)[0] == 403


def test_phones_and_the_director_enter_a_round_and_tsh_gets_its_lines(hall, browser, tmp_path):
    server, book = hall
    base = server.address.rstrip("/")
    phones = server.phone_address.rstrip("/")  # the players' door: the form and nothing else
    tokens = {table: book.tokens_for(3, table) for table in ("1", "2", "3")}

    def phone(table, side, a, b):
        context = browser.new_context(**PHONE)
        page = context.new_page()
        page.goto(f"{phones}/S/{table}/{side}/{tokens[table][side]}")  # as the QR code spells it: upper case
        page.locator("#title").filter(has_text=f"Table {table}, round 3").wait_for()
        assert "as written on the slip" in page.inner_text("body")
        page.fill("#score_a", str(a))
        page.fill("#score_b", str(b))
        page.click("button[type=submit]")
        page.locator("#answer").filter(has_text="Entered").wait_for()
        answer = page.inner_text("#answer")
        context.close()
        return answer

    assert "Waiting for the other side's entry" in phone("1", "A", 402, 380)
    assert "Both sides agree" in phone("1", "B", 402, 380)
    phone("2", "A", 355, 411)
    assert "disagree" in phone("2", "B", 355, 414)

    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{base}/scores")
    page.fill("#round", "3")
    page.click("#show")
    row = page.locator("tr[data-table='1']")
    row.filter(has_text="agreed").wait_for()
    assert "phone A at " in row.inner_text() and "phone B at " in row.inner_text()
    page.locator("tr[data-table='2']").filter(has_text="disagree").wait_for()
    # the director settles table 2 and enters table 3 from the slip
    form = page.locator("form[data-table='2']")
    form.locator("input[name=score_a]").fill("355")
    form.locator("input[name=score_b]").fill("411")
    form.locator("button.enter").click()
    page.locator("tr[data-table='2']").filter(has_text="settled").wait_for()
    page.fill("#new-table", "3")
    page.click("#add")
    form = page.locator("form[data-table='3']")
    form.locator("input[name=score_a]").fill("420")
    form.locator("input[name=score_b]").fill("385")
    form.locator("button.enter").click()
    page.locator("tr[data-table='3']").filter(has_text="settled").wait_for()
    # New phone links for table 1 asks first: dismissed, the links stay as they were
    page.locator("form[data-table='1'] button.links").click()
    assert (
        "The old links stop working" in pages_question(page, yes=False)
        and book.tokens_for(3, "1") == tokens["1"]
    )
    page.locator("form[data-table='1'] button.links").click()
    pages_question(page)
    shown = page.locator("form[data-table='1'] .phone-links")
    shown.filter(has_text="No clock shows a code").wait_for()  # this hall has no --phone-url
    token = book.token_for(3, "1", "A")
    assert token != tokens["1"]["A"] and f"A: {phones.upper()}/S/1/A/{token}" in shown.inner_text()
    assert book.token_for(3, "1", "B") != tokens["1"]["B"]  # the button makes both sides' anew
    # New link B for table 2 (B's phone leaked its code): B's link anew, A's still works
    page.locator("form[data-table='2'] button.link-B").click()
    assert "Side B's old link stops working (the other side's still works)" in pages_question(page)
    page.locator("form[data-table='2'] .phone-links").filter(has_text="No clock shows a code").wait_for()
    assert book.token_for(3, "2", "A") == tokens["2"]["A"] and book.token_for(3, "2", "B") != tokens["2"]["B"]
    page.click("#lock")
    assert "Lock round 3?" in pages_question(page)
    page.locator("#state").filter(has_text="Round 3 is locked").wait_for()
    assert page.locator("form[data-table='1'] button.enter").is_disabled()
    # the session is the server's, named by the tab's cookie (which no script of the page can read)
    (cookie,) = context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert page.evaluate("document.cookie") == ""
    session = server.sessions.label(cookie["value"])
    context.close()
    # the director's entries, links and lock name the scores page's session on the audit trail
    directors = [
        (e["action"], e["by"]) for e in read(server.feed.store.outdir) if not e["by"].startswith("phone")
    ]
    assert directors == [
        ("score", session), ("score", session), ("link", session), ("link", session), ("lock", session)
    ]  # fmt: skip  # in the order made
    assert re.fullmatch(r"page-[0-9a-f]{8}", session)

    # the round's entries give the lines for TSH
    records = play_round(str(tmp_path))
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["scores", records, "--tsh", TSH_FILES[0], "--round", "3",
                     "--entries", book._path(3, "entries"), "--out", str(tmp_path / "tsh")])  # fmt: skip  # as typed
    assert code == 0
    assert (
        tmp_path / "tsh" / "round-3-A.tsh"
    ).read_text() == "a 3 A\n1 382 4 380\n6 411 2 335\n3 410 5 285\n\n"
    assert re.search(r"table 2: slip A Brown, Bob 355, B Fox, Fay 411", out.getvalue())


@pytest.mark.parametrize(
    "form",
    [
        "score_a=366&score_b=372&seat_a=%C2%B2",  # a superscript two: isdigit, and int() raises
        "score_a=%C2%B2&score_b=372",
        "score_a=%D9%A3%D9%A6%D9%A6&score_b=372",  # Arabic-Indic 366: not as the slip's TSH reads it
    ],
)
def test_a_score_or_seat_not_in_ascii_digits_is_refused_before_the_trail_and_the_book(hall, form):
    """It used to write the CSV row and then fail (a 500, an audit line with no outcome, and an
    entry the book then reads as unreadable)."""
    server, book = hall
    token = book.issue(3, "5", "A")
    status, text = page_post(server, f"/api/score/5/A/{token}", form)
    assert status == 400 and ("score" in text or "seat_a" in text), text
    assert not os.path.exists(book._path(3, "entries")) and book.state(3)["tables"] == []
    assert read(server.feed.store.outdir) == []  # nothing asked, nothing on the trail
    with pytest.raises(EntryRefused, match="seat_a"):
        book.enter(3, "5", "366", "372", "director", "²")
    assert not os.path.exists(book._path(3, "entries"))


@pytest.mark.parametrize(
    "fault", [OSError(28, "No space left on device"), RuntimeError("a fault in the book")]
)
def test_an_entry_the_book_cannot_make_is_answered_503_and_its_line_gets_its_outcome(
    hall, monkeypatch, fault
):
    server, book = hall
    token = book.issue(3, "5", "A")

    def broken(*_args):
        raise fault

    monkeypatch.setattr(book, "enter", broken)
    status, text = page_post(server, f"/api/score/5/A/{token}", "score_a=366&score_b=372")
    assert status == 503 and text.startswith("not entered: the score book cannot take it"), text
    (line,) = read(server.feed.store.outdir)
    said = line["outcomes"][None]
    assert said["outcome"] == "refused" and said["reason"] == text  # the trail says it was not made
