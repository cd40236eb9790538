"""The players' names on the score form and the director's Scores page (issue 29): `tileclock hall`
is given the same TSH pairings as `sheet` and `scores` (`--tsh`, `--config`, `--tables`), reads them
again when TSH writes them, and names each table's players, by side where the pairings say who went
first and the clock says which side moved first."""

import os
import shutil

import pytest

from support.hall_helpers import game_ended, hall_page, page_json
from support.table_one import ANN, DAN, GAME, BoardFeed
from support.tournament import TSH_FILES
from tileclock.cli import main
from tileclock.clock.history import last_game
from tileclock.director.event.entries import ScoreBook
from tileclock.director.event.hall_pairings import HallPairings


@pytest.fixture
def named(sim, tmp_path):
    game = last_game(sim(GAME))
    book = ScoreBook(str(tmp_path / "scores"))
    with hall_page(BoardFeed(game), scores=book, pairings=HallPairings(tsh=TSH_FILES)) as server:
        yield server, book


def test_the_form_names_both_players_each_at_the_side_they_sat(named):
    server, book = named
    token = book.issue(3, "1", "A")
    form = page_json(server, f"/api/score/1/A/{token}")
    assert form["players"] == {"A": DAN, "B": ANN}
    assert form["names"] == [ANN, DAN]
    # a table whose clock has not run: both names, and why the sides are not known
    other = page_json(server, f"/api/score/2/B/{book.issue(3, '2', 'B')}")
    assert other["names"] == ["Fox, Fay (#6, A)", "Brown, Bob (#2, A)"] and "players" not in other
    assert "no clock has run" in other["sides"]


def test_the_scores_page_lists_every_paired_table_with_its_players(named):
    server, book = named
    book.enter(3, "2", "355", "411", "director")
    tables = {t["table"]: t for t in page_json(server, "/api/scores?round=3")["tables"]}
    assert sorted(tables) == ["1", "2", "3", "4", "5"]  # a.t's three tables and b.t's two
    assert tables["1"]["players"] == {"A": DAN, "B": ANN} and tables["1"]["status"] == "none"
    assert tables["2"]["status"] == "settled" and tables["2"]["names"][1] == "Brown, Bob (#2, A)"
    assert tables["4"]["names"] == ["Jones, Jo (#4, B)", "Garcia, Gil (#1, B)"]


def test_pairings_written_by_tsh_during_the_day_are_read_again(tmp_path):
    path = tmp_path / "a.t"
    shutil.copy(TSH_FILES[0], path)
    pairings = HallPairings(tsh=[str(path)])
    assert pairings.players(3, "1")["names"] == [ANN, DAN]
    path.write_text(path.read_text(encoding="utf-8").replace("Diaz, Dan", "Diaz, Dana"), encoding="utf-8")
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))
    assert pairings.wait_fresh(5)  # read in the pairings' own thread, never a request's
    assert pairings.players(3, "1")["names"] == [ANN, "Diaz, Dana (#4, A)"]


def test_hall_refuses_pairings_it_cannot_read_before_it_starts(tmp_path, capsys):
    missing = str(tmp_path / "nowhere.t")
    assert main(["hall", "--broker", "127.0.0.1", "--tsh", missing]) == 2
    assert "--tsh" in capsys.readouterr().err
    assert main(["hall", "--broker", "127.0.0.1", "--tables", "A=1-3"]) == 2
    assert "--tables" in capsys.readouterr().err


def test_a_phone_sees_the_players_names_on_its_form(named, browser):
    server, book = named
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(f"{server.address.rstrip('/')}/S/1/A/{book.issue(3, '1', 'A')}")
    page.locator("#label_a").filter(has_text="Diaz").wait_for()
    # the side first, then who plays it: division A never reads as side A (it read `(#4, A) (side A)`)
    assert page.inner_text("#label_a") == "Side A's score: Diaz, Dan (#4, division A) (yours)"
    assert page.inner_text("#label_b") == "Side B's score: Anderson, Ann (#1, division A)"
    context.close()


def test_where_the_sides_are_not_known_the_phone_says_who_sat_at_a(named, browser):
    server, book = named
    token = book.issue(3, "2", "A")
    game_ended(server.feed.store.outdir, 3, "2")  # the entry below is taken once the game has ended
    assert page_json(server, f"/api/score/2/A/{token}")["seats"] == [
        {"number": 6, "name": "Fox, Fay (#6, A)"},
        {"number": 2, "name": "Brown, Bob (#2, A)"},
    ]
    assert "seats" not in page_json(
        server, f"/api/score/1/A/{book.issue(3, '1', 'A')}"
    )  # table 1's sides are known
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(f"{server.address.rstrip('/')}/S/2/A/{token}")
    page.locator("#seat").filter(has_text="Who sat at side A?").wait_for()
    page.select_option("#seat_a", "2")
    page.fill("#score_a", "355")
    page.fill("#score_b", "411")
    page.click("button[type=submit]")
    page.locator("#answer").filter(has_text="Entered").wait_for()
    context.close()
    ((entry,),) = book.entries(3).values()
    assert (entry.by, entry.scores, entry.seat_a) == ("phone A", {"A": 355, "B": 411}, 2)
