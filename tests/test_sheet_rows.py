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
