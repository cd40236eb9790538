"""Results into the tournament: pairings in, games matched to tables and players, the penalty sheet.

Round 3 of two sample TSH divisions is played on simulated clocks (tests/support/tournament.py): one game
with an overtime penalty, one with a correction and an out play that started the other clock, a
NASPA V.G.3 forfeit, an absence forfeit and a school late penalty.
"""

import csv
import os
import re
import tomllib

import pytest

from support.tournament import PAIRINGS_CSV, ROUND_3, TSH_FILES, play, play_round
from tileclock.cli import main
from tileclock.director.event.matching import match_round
from tileclock.director.event.pairings import (
    Player,
    csv_round,
    read_pairings_csv,
    read_tsh,
    tsh_round,
)
from tileclock.director.event.tfile import PairingsError
from tileclock.director.follow.store import RecordStore
from tileclock.director.records.facts import game_facts
from tileclock.director.records.gamefiles import load_games
from tileclock.director.records.history import read_records, split_games
from tileclock.wire.protocol import unframe

ROOT = os.path.dirname(os.path.dirname(__file__))


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Round 3 played on five clocks; the folder of records."""
    return play_round(str(tmp_path_factory.mktemp("round3")))


@pytest.fixture(scope="module")
def sheet(played, tmp_path_factory):
    """`tileclock sheet` run on round 3 with the TSH files: (rows by table, printed text, out folder)."""
    out = str(tmp_path_factory.mktemp("sheets"))
    printed = _run(["sheet", played, "--tsh", *TSH_FILES, "--round", "3", "--out", out, "--no-pictures"])
    with open(os.path.join(out, "round-3.csv"), newline="", encoding="utf-8") as file:
        rows = {row["table"]: row for row in csv.DictReader(file)}
    return rows, printed, out


def _run(argv):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


def _game(played, table):
    (game,) = split_games(read_records(os.path.join(played, f"board-{table}", "game-1.log")))
    return game.records


# --- pairings in


def test_tsh_round_three_pairs_each_table_with_who_goes_first():
    schedule = tsh_round([read_tsh(path) for path in TSH_FILES], 3)
    seen = {p.table: (p.first.name, p.second.name, p.first.division) for p in schedule.pairings}
    assert seen == {
        "1": ("Anderson, Ann", "Diaz, Dan", "A"),
        "2": ("Fox, Fay", "Brown, Bob", "A"),
        "3": ("Chen, Carol", "Evans, Eve", "A"),
        "4": ("Jones, Jo", "Garcia, Gil", "B"),
        "5": ("Khan, Kai", "Hill, Hana", "B"),
    }
    assert schedule.problems == []
    assert [(b.player.name, b.kind) for b in schedule.byes] == [("Ito, Ken", "bye")]


def test_tsh_byes_and_a_forfeit_entered_in_tsh_are_not_tables():
    divisions = [read_tsh(path) for path in TSH_FILES]
    round1, round2 = tsh_round(divisions, 1), tsh_round(divisions, 2)
    assert [(b.player.label(), b.kind, b.score) for b in round1.byes] == [("Khan, Kai (#5, B)", "bye", 50)]
    assert [(b.player.label(), b.kind, b.score) for b in round2.byes] == [
        ("Hill, Hana (#2, B)", "forfeit", -50)
    ]
    assert len(round1.pairings) == len(round2.pairings) == 5


def test_tsh_inconsistencies_are_listed_never_guessed(tmp_path):
    broken = tmp_path / "c.t"
    broken.write_text(
        "# division C\n"
        "Lee, Lou 1500 2 3; ; board 7 8; p12 1 1\n"
        "Moe, Max 1400 1 4; 400; board 7; p12 2 1\n"
        "Ng, Nat 1300 5 1; ; board 9 8; p12 1 1\n"  # round 1: #5 does not exist; round 2: both first
        "Oh, Ola 1200 3 2; ; ; p12 0 2\n"  # round 1: Ng does not pair with her; round 2: no board
        "\n"
    )
    division = read_tsh(str(broken))
    assert [p.name for p in division.players] == ["Lee, Lou", "Moe, Max", "Ng, Nat", "Oh, Ola"]
    round1, round2 = tsh_round([division], 1), tsh_round([division], 2)
    assert [(p.table, p.first.name) for p in round1.pairings] == [("7", "Lee, Lou")]
    assert any("with player #5, who is not in division C" in text for text in round1.problems)
    assert any(
        "Oh, Ola (#4, C) is paired in round 1 with #3 Ng, Nat, whose line pairs them with #5" in text
        for text in round1.problems
    )
    assert any(
        "Lee, Lou (#1, C) v Ng, Nat (#3, C) at table 8: TSH does not say who goes first (p12 1 and 1)" in text
        for text in round2.problems
    )
    assert any(
        "Moe, Max (#2, C) v Oh, Ola (#4, C): no board in the .t file" in text for text in round2.problems
    )
    assert [p.first_known for p in round2.pairings] == [False, True]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Lee, Lou; 400\n", "not a player line"),  # no rating
        ("Lee, Lou 1500 2 x; 400\n", "opponents must be whole numbers"),
        ("Lee, Lou 1500 2; four hundred\n", "scores must be whole numbers"),
    ],
)
def test_a_bad_tsh_line_names_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "d.t"
    path.write_text("Ok, Player 1500 0; 50\n" + text)
    with pytest.raises(PairingsError, match=rf"d\.t, line 2: {message}"):
        read_tsh(str(path))


def test_csv_pairings_read_like_tsh_ones():
    pairings = read_pairings_csv(PAIRINGS_CSV)
    tsh = tsh_round([read_tsh(path) for path in TSH_FILES], 3)
    assert [(p.table, p.first.name, p.second.name) for p in csv_round(pairings, 3).pairings] == [
        (p.table, p.first.name, p.second.name) for p in tsh.pairings
    ]
    assert csv_round(pairings, 2).pairings == []


def test_a_csv_without_the_columns_is_refused(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("round,board,first,second\n3,1,a,b\n")
    with pytest.raises(PairingsError, match="missing: table"):
        read_pairings_csv(str(path))


# --- games matched to tables and players


def test_the_first_player_is_the_side_whose_clock_ran_first_in_play(played):
    facts = {t: game_facts(_game(played, t)) for t in ROUND_3}
    assert {t: f.first_side for t, f in facts.items()} == {"1": "A", "2": "B", "3": "A", "4": None, "5": "B"}
    # Table 5: A's absence ran first (a late start), but B was the first to move in play.
    assert facts["5"].records[1]["ev"] == "late_start" and facts["5"].records[1]["player"] == "A"


def test_mismatches_are_listed_plainly(played, tmp_path):
    games = [game_facts(records, board=board) for _, records, board in load_games([played])[0]]
    # a second game at table 1, a game at a table with no pairing, and a pairing with no game
    extra = play(str(tmp_path), "1", "0 press B\n1:00 press A\n1:10 until\n")
    stray = play(str(tmp_path), "9", "0 press A\n1:00 until\n")
    games += [game_facts(r, board=b) for _, r, b in load_games([extra, stray])[0]]
    schedule = tsh_round([read_tsh(path) for path in TSH_FILES], 3)
    schedule.pairings.append(
        type(schedule.pairings[0])(3, "6", (Player("Oz, Olga"), Player("Pratt, Pip")), True, "test")
    )
    match = match_round(schedule, games)
    problems = "\n".join(match.problems)
    assert re.search(
        r"round 3, table 1: 2 games were recorded there \(board 1 \(clock \w+\), game 1, board 1 \(clock \w+\), game 1\)",
        problems,
    )
    assert re.search(
        r"board 9 \(clock \w+\), game 1 was played at table 9, which has no pairing in round 3", problems
    )
    assert "no game was recorded at table 6 (Oz, Olga v Pratt, Pip)" in problems
    assert re.search(r"board 4 \(clock \w+\), game 1: no clock ever ran in play", problems)
    table1 = [t for t in match.tables if t.table == "1"]
    assert len(table1) == 3 and not any(t.names for t in table1)  # nothing matched at table 1: not guessed


def test_a_games_round_and_table_come_only_from_the_set_records_that_applied_to_it(sim):
    """A `set` while nobody has pressed is for this game; one while it runs, or after it ended, is
    for the next (docs/protocol.md, "The time of day, the round and the table"): the next game's
    round never becomes this one's."""
    records = sim(
        "0 send set round=3 table=5\n1 press B\n2:00 send set round=4 table=6\n3:00 press A\n"
        "4:00 press STOP\n4:10 hold STOP 2.5\n4:13.5 press STOP\n"  # ended: round 3, table 5
        "4:20 hold STOP 2.5\n4:30 press A\n"  # the next game, round 4 at table 6, runs
        "5:00 send set round=5\n6:00 until\n"
    )
    sets = [(r["round"], r["applies"]) for r in records if r["ev"] == "set"]
    assert sets == [(3, "this"), (4, "next"), (5, "next")]
    first, second = (game_facts(game) for game in split_games(records))
    running_first = game_facts(records[: next(i for i, r in enumerate(records) if r["ev"] == "end")])
    assert (running_first.round, running_first.table, running_first.ended) == (3, "5", False)
    assert (first.round, first.table, first.ended) == (3, "5", True)
    assert (second.round, second.table, second.ended) == (4, "6", False)
    # a game with no round of its own, ended, then a set for the next game: still no round
    records = sim(
        "1 press B\n1:00 press STOP\n1:10 hold STOP 2.5\n1:13.5 press STOP\n2:00 send set round=4\n"
    )
    (ended,) = [game_facts(game) for game in split_games(records)]
    assert ended.ended and ended.round is None


def test_games_of_another_round_and_unstarted_games_are_left_out(played, tmp_path):
    games = [game_facts(r, board=b) for _, r, b in load_games([played])[0]]
    games[0].round = 2  # as if the director's link had said round 2
    fresh = play(str(tmp_path), "7", "0:05 until\n")
    games += [game_facts(r, board=b) for _, r, b in load_games([fresh])[0]]
    match = match_round(tsh_round([read_tsh(path) for path in TSH_FILES], 3), games)
    assert re.search(
        r"round 3, table 1: board 1 \(clock \w+\), game 1 at table 1 was recorded as round 2, not round 3: "
        r"it is not matched to round 3's pairing \(Anderson, Ann \(#1, A\) v Diaz, Dan \(#4, A\)\)",
        "\n".join(match.problems),
    )
    assert len(match.left_out) == 1
    assert re.fullmatch(
        r"board 7 \(clock \w+\), game 1: never started \(no press recorded\)", match.left_out[0]
    )


# --- the sheet


def _expected(records):
    """Each side's (overtime, late, total) penalty, worked out here from the game's records."""
    end = [r for r in records if r["ev"] == "end"][-1]
    figures = {}
    for side in "AB":
        late = 0
        previous = 0
        for record in records:
            if record["ev"] == "penalty" and record["kind"] == "late" and record["player"] == side:
                late += record[side]["pen"] - previous
            previous = record[side]["pen"]
        total = end["summary"][side]["pen"]
        figures[side] = (total - late, late, total)
    return figures


def test_the_sheets_numbers_are_the_games(played, sheet):
    rows, _, _ = sheet
    for table in ("1", "2", "3", "5"):
        row = rows[table]
        first = row["first_side"]
        second = "B" if first == "A" else "A"
        expected = _expected(_game(played, table))
        for place, side in (("first", first), ("second", second)):
            got = tuple(int(row[f"{place}_{kind}_pen"]) for kind in ("overtime", "late", "total"))
            assert got == expected[side], (table, place)
    # and the figures a director knows by heart
    assert (rows["1"]["first"], rows["1"]["first_overtime_pen"]) == ("Anderson, Ann (#1, A)", "20")
    assert (rows["2"]["second"], rows["2"]["second_total_pen"]) == ("Brown, Bob (#2, A)", "20")
    assert (rows["3"]["second"], rows["3"]["second_total_pen"], rows["3"]["first_total_pen"]) == (
        "Evans, Eve (#5, A)",
        "100",
        "10",
    )
    assert (rows["5"]["second"], rows["5"]["second_late_pen"], rows["5"]["second_overtime_pen"]) == (
        "Hill, Hana (#2, B)",
        "20",
        "0",
    )


def test_forfeits_are_spelled_out(sheet):
    rows, _, _ = sheet
    capped = rows["3"]["consequence"]
    assert rows["3"]["forfeit"] == "B overtime_limit"
    assert capped.startswith(
        "Evans, Eve (#5, A) exceeded 10 minutes of overtime and loses the game (NASPA V.G.3)"
    )
    assert "Deduct 100 from Evans, Eve (#5, A)'s score" in capped
    assert "Chen, Carol (#3, A)'s usual penalty stands (10)" in capped
    assert "raise Chen, Carol (#3, A)'s score to win by one point" in capped
    absent = rows["4"]["consequence"]
    assert rows["4"]["forfeit"] == "A absent"
    assert "did not arrive in time and forfeits (NASPA III.C)" in absent
    assert "+50 spread" in absent and "-50" in absent


def test_corrections_and_the_out_play_note_are_on_the_sheet(sheet):
    rows, _, _ = sheet
    assert rows["2"]["corrections"] == "Fox, Fay (#6, A) +1:00 at 10:05.6"
    note = rows["2"]["notes"]
    assert "NSA VII.J.2" in note
    assert "Brown, Bob (#2, A)'s penalty is 10 as of it, not the 20 the clock ended with" in note
    assert rows["1"]["notes"] == rows["1"]["corrections"] == ""


def test_the_printed_output_and_the_page_list_every_mismatch(sheet):
    rows, printed, out = sheet
    assert "round 3: 4 of 5 tables matched to players" in printed
    assert re.search(
        r"MISMATCH round 3, table 4: board 4 \(clock \w+\), game 1: no clock ever ran in play", printed
    )
    assert "no clock ever ran in play" in rows["4"]["problems"]
    page = open(os.path.join(out, "round-3.html"), encoding="utf-8").read()
    assert "Mismatches to settle before entering scores" in page
    assert "no clock ever ran in play" in page
    assert "Ito, Ken (#3, B): bye" in page
    assert "NASPA V.G.3" in page


def test_the_csv_pairings_give_the_same_sheet(played, sheet, tmp_path):
    rows, _, _ = sheet
    _run(
        ["sheet", played, "--pairings", PAIRINGS_CSV, "--round", "3", "--out", str(tmp_path), "--no-pictures"]
    )
    with open(tmp_path / "round-3.csv", newline="", encoding="utf-8") as file:
        from_csv = {row["table"]: row for row in csv.DictReader(file)}
    numbers = [f"{p}_{k}_pen" for p in ("first", "second") for k in ("overtime", "late", "total")]
    for table in rows:
        assert [from_csv[table][key] for key in numbers] == [rows[table][key] for key in numbers]
        assert from_csv[table]["first"].split(" (")[0] == rows[table]["first"].split(" (")[0]


def test_hostile_names_never_become_formulas_or_markup(played, tmp_path):
    pairings = tmp_path / "p.csv"
    pairings.write_text('round,table,first,second\n3,1,"=HYPERLINK(""x"")",<script>alert(1)</script>\n')
    _run(
        [
            "sheet",
            played,
            "--pairings",
            str(pairings),
            "--round",
            "3",
            "--out",
            str(tmp_path),
            "--no-pictures",
        ]
    )
    text = (tmp_path / "round-3.csv").read_text()
    assert "'=HYPERLINK" in text and ",=HYPERLINK" not in text
    page = (tmp_path / "round-3.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_a_game_file_that_cannot_be_read_is_reported_and_the_rest_still_read(played, tmp_path):
    records = os.path.dirname(os.path.dirname(play(str(tmp_path), "9", "0 press B\n1:00 until\n")))
    bad = tmp_path / "records" / "board-8"
    bad.mkdir()
    (bad / "game-1.log").write_text('{"seq":0,"ev":"new_game","crc":"00000000"}\nnot json\n')
    games, problems = load_games([played, records])
    assert len(games) == len(ROUND_3) + 1
    # named once, at the start, with the line and what is wrong with it
    assert problems == [f"{bad / 'game-1.log'}, line 1: integrity check failed"]


def _collected(tmp_path):
    """Table 1 of round 3 as `collect` keeps it: its lines through collect's own store, which also
    wrote a notice and a reject beside the board folders."""
    (tmp_path / "played").mkdir()
    with open(play(str(tmp_path / "played"), "1", ROUND_3["1"][2]), encoding="ascii") as file:
        lines = file.read().splitlines()
    store = RecordStore(str(tmp_path / "records"))
    for line in lines:
        store.add(unframe(line), line, "/dev/ttyUSB0")
    store.notice("port /dev/ttyUSB0: A=30:00 waits for a new game")
    store.reject({"seq": 99}, '{"seq":99,"ev":"bogus"}', "no such event", "/dev/ttyUSB0")
    return tmp_path / "records"


def test_the_sheet_reads_collects_games_and_not_its_notices_or_rejects(tmp_path, capsys):
    records = _collected(tmp_path)
    assert {"notices.log", "rejects.log", "results.csv"} <= set(os.listdir(records))
    argv = ["sheet", str(records), "--tsh", *TSH_FILES, "--round", "3", "--out", str(tmp_path / "sheets")]
    assert main([*argv, "--no-pictures"]) == 0
    printed = capsys.readouterr().out
    assert "left out" not in printed
    assert "round 3: 1 of 5 tables matched to players" in printed


@pytest.mark.parametrize("what", ["missing", "empty", "collect's files only"])
def test_a_records_path_with_no_game_is_an_error_naming_it(tmp_path, capsys, what):
    records = tmp_path / "collected"
    if what != "missing":
        records.mkdir()
    if what == "collect's files only":
        RecordStore(str(records)).notice("port /dev/ttyUSB0: no clock answers")
    good = os.path.dirname(os.path.dirname(play(str(tmp_path), "1", ROUND_3["1"][2])))
    sheets = tmp_path / "sheets"
    # a good path beside it does not hide the bad one
    argv = ["sheet", good, str(records), "--tsh", *TSH_FILES, "--round", "3"]
    assert main([*argv, "--out", str(sheets), "--no-pictures"]) == 2
    printed = capsys.readouterr()
    why = "no such file or folder" if what == "missing" else "no recorded game there"
    assert printed.err.startswith(f"tileclock: {records}: {why}") and printed.err.count("\n") == 1
    assert printed.out == "" and not sheets.exists()


def test_the_sheet_counts_tables_once_however_many_games_claim_one(tmp_path, capsys):
    for name in (1, 2):  # two games at table 1: neither is matched, and table 1 is one table
        records = play(str(tmp_path), "1", "0 press B\n1:00 press A\n1:10 until\n", game_seq_name=name)
    records = os.path.dirname(os.path.dirname(records))
    argv = ["sheet", records, "--tsh", *TSH_FILES, "--round", "3", "--out", str(tmp_path / "s")]
    assert main([*argv, "--no-pictures"]) == 0
    printed = capsys.readouterr().out
    assert "round 3: 0 of 5 tables matched to players\n" in printed
    assert "table 1: 2 games were recorded there" in printed


def test_without_round_a_game_that_names_none_is_left_out_not_put_in_another_round(tmp_path, capsys):
    """The round comes from the `set` records when --round is not given: a game whose records name
    no round is not guessed into the round the others name."""
    play(str(tmp_path), "2", "0 send set round=3 table=2\n1 press A\n1:00 press B\n1:10 until\n")
    records = os.path.dirname(os.path.dirname(play(str(tmp_path), "1", "0 press B\n1:00 press A\n")))
    out = tmp_path / "sheets"
    assert main(["sheet", records, "--tsh", *TSH_FILES, "--out", str(out), "--no-pictures"]) == 0
    printed = capsys.readouterr().out
    assert "round 3: 1 of 5 tables matched to players\n" in printed
    assert re.search(
        r"left out: board 1 \(clock \w+\), game 1: its records name no round, so it is not put in "
        r"round 3 \(if it was played in round 3, run the sheet with --round 3\)",
        printed,
    )
    with open(out / "round-3.csv", newline="", encoding="utf-8") as file:
        rows = {row["table"]: row for row in csv.DictReader(file)}
    assert rows["1"]["game"] == "" and rows["2"]["first"] == "Fox, Fay (#6, A)"
    # named by the director, the round takes in the games that name none
    assert (
        main(["sheet", records, "--tsh", *TSH_FILES, "--round", "3", "--out", str(out), "--no-pictures"]) == 0
    )
    assert "round 3: 2 of 5 tables matched to players\n" in capsys.readouterr().out


def test_sheet_without_a_round_says_how_to_name_it(played, tmp_path, capsys):
    assert main(["sheet", played, "--tsh", *TSH_FILES, "--out", str(tmp_path)]) == 2
    assert "name it with --round N (the pairings have rounds 1, 2, 3)" in capsys.readouterr().err


def test_the_picture_library_is_never_a_clock_dependency():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as file:
        project = tomllib.load(file)["project"]
    assert not any("matplotlib" in dep for dep in project["dependencies"])
    assert any("matplotlib" in dep for dep in project["optional-dependencies"]["director"])
