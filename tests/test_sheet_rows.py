"""The penalty sheet's rows and cells from one table, as a director reads them in the CSV and on the page.

The round's own tests (test_results.py, test_scores.py) play a round on simulated clocks; these take
one table at a time, built here, for the cases a round does not have: a double forfeit, a slip with
one score missing, a reason already listed as a mismatch, a cell a spreadsheet would run.
"""

import csv
from types import SimpleNamespace

import pytest

from tileclock.director.event.sheet import consequence, sheet_rows, write_csv, write_page, write_sheet

NAMES = {"A": "Ann", "B": "Bob"}


def table(forfeit=None, problems=(), first_side="A", rules="naspa", name_a="Ann"):
    names = dict(NAMES, A=name_a)
    sides = {
        "A": SimpleNamespace(overtime_pen=0, late_pen=0, total_pen=0),
        "B": SimpleNamespace(overtime_pen=10, late_pen=0, total_pen=10),
    }
    game = SimpleNamespace(
        first_side=first_side, sides=sides, forfeit=forfeit, corrections=[], notes=[], board="7",
        game_seq=3, rules=rules,
    )  # fmt: skip  # the game's fields in two short lines
    return SimpleNamespace(
        table=4, pairing=None, game=game, names=names, player=names.get, problems=list(problems)
    )


def settled(entered, reasons=(), steps=()):
    return SimpleNamespace(
        entered=entered, final={}, forfeit_spread={}, steps=list(steps), reasons=list(reasons)
    )


def csv_of(tmp_path, rows):
    path = tmp_path / "round.csv"
    write_csv(path, rows)
    return csv_of_file(path)


def csv_of_file(path):
    with open(path, newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def test_a_game_with_no_forfeit_has_no_consequence():
    assert consequence(table()) == ""
    assert consequence(SimpleNamespace(game=None)) == ""


def test_a_double_forfeit_is_spelled_out():
    assert consequence(table(forfeit=("both", "absent"))) == (
        "Both players absent: a double forfeit. Both lose; record -50 spread for each."
    )


def test_a_score_missing_from_the_slip_is_an_empty_cell_not_a_word(tmp_path):
    match = SimpleNamespace(round=3, tables=[table()])
    rows = sheet_rows(match, settled={4: settled({"A": 402})})
    [row] = csv_of(tmp_path, rows)
    assert (row["first"], row["first_entered"]) == ("Ann", "402")
    assert (row["second"], row["second_entered"]) == ("Bob", "")


def test_a_reason_already_listed_as_a_mismatch_is_not_said_again_in_the_steps():
    match = SimpleNamespace(round=3, tables=[table(problems=["no slip for table 4"])])
    result = settled({}, reasons=["no slip for table 4", "Bob's score is missing"], steps=["as entered"])
    [row] = sheet_rows(match, settled={4: result})
    assert row["problems"] == "no slip for table 4"
    assert row["steps"] == "as entered; not entered: Bob's score is missing"


def test_a_name_a_spreadsheet_would_run_is_plain_text_but_a_negative_number_stays_a_number(tmp_path):
    match = SimpleNamespace(round=3, tables=[table(name_a="-X12")])
    [row] = sheet_rows(match)
    row["second_overtime_pen"] = -10
    [read] = csv_of(tmp_path, [row])
    assert read["first"] == "'-X12"  # -X12 is a formula (minus cell X12) to a spreadsheet
    assert read["second_overtime_pen"] == "-10"


def test_the_page_shows_the_table_and_its_details(tmp_path):
    match = SimpleNamespace(round=3, tables=[table(forfeit=("both", "absent"))], problems=[], left_out=[])
    rows = sheet_rows(match)
    path = tmp_path / "round.html"
    write_page(path, match, rows)
    page = path.read_text()
    assert "<td>4</td><td>Ann</td>" in page
    assert '<td class="n total">10</td>' in page  # Bob's total to deduct, in bold
    assert "board 7, game 3" in page
    assert "<b>Forfeit:</b> Both players absent" in page


@pytest.mark.parametrize(
    ("forfeit", "said"),
    [
        (("C", ""), "Forfeit (no reason given): check the game record."),
        (("C", "typo"), "Forfeit (typo): check the game record."),
        (("A", ""), "Ann forfeits (no reason given); Bob wins. Check the game record."),
        (("B", "resigned"), "Bob forfeits (resigned); Ann wins. Check the game record."),
    ],
)
def test_a_forfeit_the_sheet_has_no_rule_for_says_so_plainly(forfeit, said):
    assert consequence(table(forfeit=forfeit)) == said


@pytest.mark.parametrize(
    ("rules", "rule"), [("naspa", "NASPA III.C"), ("school", "school rule 25"), ("", "absence")]
)
def test_an_absence_forfeit_names_the_rule_and_that_the_clock_s_penalties_do_not_apply(rules, rule):
    assert consequence(table(forfeit=("A", "absent"), rules=rules)) == (
        f"Ann did not arrive in time and forfeits ({rule}). Bob wins by forfeit: record +50 spread for Bob "
        "and -50 for Ann. No game was played: the clock's penalties do not apply."
    )


def test_write_sheet_makes_its_folder_and_writes_the_round_s_csv_and_page_with_their_title(tmp_path):
    game_table = table()
    match = SimpleNamespace(round=3, tables=[game_table], problems=[], left_out=[])
    out = tmp_path / "sheets" / "round 3"
    paths = write_sheet(
        str(out), match, pictures={id(game_table.game): "t4.png"}, title="Spring Open, round 3"
    )
    assert paths == [str(out / "round-3.csv"), str(out / "round-3.html")]
    [row] = csv_of_file(out / "round-3.csv")
    assert (row["round"], row["table"], row["picture"]) == ("3", "4", "t4.png")
    page = (out / "round-3.html").read_text()
    assert "<title>Spring Open, round 3</title>" in page and '<a href="t4.png">picture</a>' in page


def test_a_sheet_without_a_title_is_named_after_its_round(tmp_path):
    match = SimpleNamespace(round=5, tables=[table()], problems=[], left_out=[])
    write_sheet(str(tmp_path), match)
    assert "<title>Round 5: penalty sheet</title>" in (tmp_path / "round-5.html").read_text()


def pairing(division="A"):
    players = [
        SimpleNamespace(division=division, label=lambda: "Ito, Ken (#3, A)"),
        SimpleNamespace(division=division, label=lambda: "Lee, Max (#8, A)"),
    ]
    return SimpleNamespace(players=players)


def test_a_paired_table_with_no_game_still_has_its_row_with_the_pairings_names(tmp_path):
    empty = SimpleNamespace(table=None, pairing=pairing("B"), game=None, names={}, problems=["no game"])
    [row] = csv_of(tmp_path, sheet_rows(SimpleNamespace(round=3, tables=[empty])))
    assert (row["round"], row["table"], row["division"]) == ("3", "", "B")
    assert (row["first"], row["second"]) == ("Ito, Ken (#3, A)", "Lee, Max (#8, A)")
    assert (row["board"], row["game"], row["picture"], row["problems"]) == ("", "", "", "no game")


def test_a_game_s_lists_are_joined_for_reading_and_blanks_stay_blank(tmp_path):
    one = table(problems=["round 2 on the clock", "table 5 on the clock"])
    one.game.first_side = None  # nobody moved: A then B, and the sheet does not claim A went first
    one.game.board = None
    one.game.notes = ["A's penalty is 10 as of it", "check B's rack"]
    one.game.corrections = [
        SimpleNamespace(player="A", text=lambda name: f"{name} +1:00"),
        SimpleNamespace(player="B", text=lambda name: f"{name} -0:30"),
    ]
    [row] = csv_of(tmp_path, sheet_rows(SimpleNamespace(round=3, tables=[one])))
    assert (row["first"], row["first_side"], row["board"], row["picture"]) == ("Ann", "", "", "")
    assert row["corrections"] == "Ann +1:00; Bob -0:30"
    assert row["notes"] == "Ann's penalty is 10 as of it; check Bob's rack"
    assert row["problems"] == "round 2 on the clock; table 5 on the clock"


def page_of(tmp_path, match, schedule=None, title="", pictures=None):
    path = tmp_path / "round.html"
    titled = [title] if title else []  # no title given: the page's own
    write_page(path, match, sheet_rows(match, pictures), schedule, *titled)
    return path.read_text()


def a_round():
    """Two tables (one with a game, a forfeit, corrections, notes and a mismatch; one without a
    game), a mismatch for the round, a bye and a game left out."""
    played = table(forfeit=("both", "absent"), problems=["round 2 on the clock"])
    played.game.notes = ["check A's rack"]
    played.game.corrections = [SimpleNamespace(player="B", text=lambda name: f"{name} +1:00")]
    empty = SimpleNamespace(table=5, pairing=pairing(), game=None, names={}, problems=[])
    return SimpleNamespace(
        round=3,
        tables=[played, empty],
        problems=["table 9: no pairing"],
        left_out=["board 8, game 2: round 1"],
    )


GOLDEN_PAGE = """\
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Round 3: penalty sheet</title>
<style>{style}</style></head><body>
<h1>Round 3: penalty sheet</h1>
<p>Penalties are points to deduct from each player's score. The first player is the one whose clock ran first in play.</p>
<div class="problems"><h2>Mismatches to settle before entering scores</h2><ul>
<li>table 9: no pairing</li>
</ul></div>
<table><thead><tr><th rowspan=2>Table</th><th rowspan=2>First</th><th colspan=3>First: deduct</th>\
<th rowspan=2>Second</th><th colspan=3>Second: deduct</th><th rowspan=2>Game</th></tr>\
<tr><th>overtime</th><th>late</th><th>total</th><th>overtime</th><th>late</th><th>total</th></tr></thead><tbody>
<tr><td>4</td><td>Ann</td><td class="n">0</td><td class="n">0</td><td class="n total">0</td><td>Bob</td>\
<td class="n">10</td><td class="n">0</td><td class="n total">10</td><td>board 7, game 3 <a href="t4.png">picture</a></td></tr>
<tr class="detail"><td></td><td colspan=9 class="consequence"><b>Forfeit:</b> Both players absent: a double forfeit. \
Both lose; record -50 spread for each.</td></tr>
<tr class="detail"><td></td><td colspan=9 class=""><b>Corrections:</b> Bob +1:00</td></tr>
<tr class="detail"><td></td><td colspan=9 class=""><b>Check:</b> check Ann&#x27;s rack</td></tr>
<tr class="detail"><td></td><td colspan=9 class=""><b>Mismatch:</b> round 2 on the clock</td></tr>
<tr><td>5</td><td>Ito, Ken (#3, A)</td><td class="n"></td><td class="n"></td><td class="n total"></td>\
<td>Lee, Max (#8, A)</td><td class="n"></td><td class="n"></td><td class="n total"></td><td>no game</td></tr>
</tbody></table>
<div class="left"><h2>No opponent this round (from the pairings)</h2><ul>
<li>Ito, Ken (#3, A): bye, +50</li>
<li>Lee, Max (#8, A): forfeit</li>
</ul></div>
<div class="left"><h2>Left out</h2><ul>
<li>board 8, game 2: round 1</li>
</ul></div>
</body></html>
"""


def test_the_printed_page_reads_exactly_as_the_director_sees_it(tmp_path):
    """The whole page for a small round, byte for byte: a change to it is a change on purpose."""
    from tileclock.director.event.sheet import PAGE_STYLE

    match = a_round()
    byes = SimpleNamespace(
        byes=[
            SimpleNamespace(player=pairing().players[0], kind="bye", score=50),
            SimpleNamespace(player=pairing().players[1], kind="forfeit", score=None),
        ]
    )
    pictures = {id(match.tables[0].game): "t4.png"}
    assert page_of(tmp_path, match, byes, pictures=pictures) == GOLDEN_PAGE.format(style=PAGE_STYLE)


def test_a_game_s_text_is_escaped_on_the_page_and_its_picture_linked_only_when_there_is_one(tmp_path):
    match = a_round()
    match.tables[0].game.board = "<7>"
    page = page_of(tmp_path, match, title="Open & <Spring>")
    assert "<title>Open &amp; &lt;Spring&gt;</title>" in page and "<h1>Open &amp; &lt;Spring&gt;</h1>" in page
    assert "<td>board &lt;7&gt;, game 3</td>" in page and "picture" not in page


@pytest.mark.parametrize("name", ["=1+1", "+1", "-A1", "@SUM(A1)", "\tx", "\rx"])
def test_a_name_starting_a_formula_is_quoted_in_the_csv(tmp_path, name):
    [row] = sheet_rows(SimpleNamespace(round=3, tables=[table(name_a=name)]))
    [read] = csv_of(tmp_path, [row])
    assert read["first"] == "'" + name


def test_on_a_laptop_whose_defaults_are_not_utf8_and_lf_the_files_are_still_utf8_one_crlf_a_row(
    tmp_path, monkeypatch
):
    """A director's laptop may default to a Latin-1 locale and CRLF line ends (Windows): the sheet
    names its encoding and line ends itself, so the CSV a spreadsheet opens is the same everywhere."""
    import builtins

    def windows_open(file, mode="r", encoding=None, newline=None, **kwargs):
        return builtins.open(
            file,
            mode,
            encoding=encoding or "latin-1",
            newline="\r\n" if newline is None else newline,
            **kwargs,
        )

    monkeypatch.setattr("tileclock.director.event.sheet.open", windows_open, raising=False)
    match = SimpleNamespace(round=3, tables=[table(name_a="Zoë Őry")], problems=[], left_out=[])
    csv_path, page_path = write_sheet(str(tmp_path), match)
    data = open(csv_path, "rb").read()
    assert "Zoë Őry".encode() in data and data.count(b"\r\n") == 2 and b"\r\r" not in data
    assert "Zoë Őry".encode() in open(page_path, "rb").read()


def test_the_scores_entered_show_as_a_detail_row_of_their_table(tmp_path):
    match = SimpleNamespace(round=3, tables=[table()], problems=[], left_out=[])
    rows = sheet_rows(
        match, settled={4: settled({"A": 402, "B": 380}, steps=["as entered: Ann 402, Bob 380"])}
    )
    path = tmp_path / "round.html"
    write_page(path, match, rows)
    assert (
        '<tr class="detail"><td></td><td colspan=9 class=""><b>Scores:</b> as entered: Ann 402, Bob 380</td></tr>'
        in path.read_text()
    )
