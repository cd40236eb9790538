"""TSH's `tourney.js` as a source of pairings (issue 38, point 4): the sample
tests/data/tsh/tourney.js holds a.t's and b.t's divisions as TSH writes them for its web pages, so
every round read from it must be the round read from the `.t` files; `sheet`, `scores` and the hall
take it with `--tsh`; and a file that is not TSH's tourney.js is one line naming it, never a
traceback."""

import io
import json
import os
import re
from contextlib import redirect_stdout

import pytest

from support.tournament import DATA, TSH_FILES, play_round
from tileclock.cli import main
from tileclock.director.event import tourney_js
from tileclock.director.event.hall_pairings import HallPairings
from tileclock.director.event.pairings import read_tsh, tsh_round
from tileclock.director.event.tfile import PairingsError
from tileclock.director.event.tourney_js import MAX_BYTES, MAX_DEPTH, read_tourney_js

SAMPLE = os.path.join(DATA, "tsh", "tourney.js")
ENTRIES = os.path.join(DATA, "scores", "round-3-slips.csv")


def _event():
    """The sample's object, to change and write again."""
    with open(SAMPLE, encoding="utf-8") as file:
        text = file.read()
    return json.loads(text[len("newt=") :].rstrip().rstrip(";").replace("undefined", "null"))


def _write(tmp_path, content, name="tourney.js"):
    path = tmp_path / name
    if isinstance(content, dict):
        content = "newt=" + json.dumps(content) + ";\n"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(path)


def _seen(round_):
    return (
        [(p.table, p.names(), p.first_known, p.why_unknown) for p in round_.pairings],
        [(b.player, b.score, b.kind) for b in round_.byes],
    )


def test_the_sample_has_tsh_s_shape_and_every_round_is_the_t_files():
    divisions = read_tourney_js(SAMPLE)
    assert [d.name for d in divisions] == ["A", "B"]
    assert [p.name for p in divisions[0].players] == [
        "Anderson, Ann", "Brown, Bob", "Chen, Carol", "Diaz, Dan", "Evans, Eve", "Fox, Fay",
    ]  # fmt: skip  # laid out by hand, the way it reads best
    assert [p.number for p in divisions[1].players] == [1, 2, 3, 4, 5]
    from_t = [read_tsh(path) for path in TSH_FILES]
    for number in (1, 2, 3):
        mine, theirs = tsh_round(divisions, number), tsh_round(from_t, number)
        assert _seen(mine) == _seen(theirs) and mine.problems == theirs.problems == []


def test_undefined_is_not_yet_and_a_name_saying_undefined_is_kept(tmp_path):
    ito = read_tourney_js(SAMPLE)[1].players[2]
    assert ito.name == "Ito, Ken" and ito.scores == [340, 300, None]  # `undefined` in the sample
    event = _event()
    event["divisions"][0]["players"][1]["name"] = "Undefined, Una"
    text = "newt=" + json.dumps(event).replace('"scores": [420, 388]', '"scores": [420, undefined]')
    ann = read_tourney_js(_write(tmp_path, text))[0].players[0]
    assert ann.name == "Undefined, Una" and ann.scores == [420, None]


def test_player_0_must_be_null(tmp_path):
    event = _event()
    event["divisions"][1]["players"][0] = event["divisions"][1]["players"][1]
    with pytest.raises(PairingsError, match=r"tourney.js division B: players\[0\] should be null"):
        read_tourney_js(_write(tmp_path, event))


def test_a_player_whose_id_is_not_their_place_is_refused(tmp_path):
    event = _event()
    event["divisions"][0]["players"][2]["id"] = 7
    with pytest.raises(PairingsError, match="division A, player 2: its id is '7', not 2"):
        read_tourney_js(_write(tmp_path, event))


def test_byes_and_forfeits_come_out_as_from_the_t_files():
    divisions = read_tourney_js(SAMPLE)
    (bye,) = tsh_round(divisions, 3).byes
    assert (bye.player.name, bye.score, bye.kind) == ("Ito, Ken", None, "bye")
    byes = {b.player.name: (b.score, b.kind) for b in tsh_round(divisions, 2).byes}
    assert byes == {"Hill, Hana": (-50, "forfeit")}
    assert {b.player.name: b.kind for b in tsh_round(divisions, 1).byes} == {"Khan, Kai": "bye"}


def test_boards_are_the_tables_and_p12_says_who_went_first(tmp_path):
    pairings = {p.table: p for p in tsh_round(read_tourney_js(SAMPLE), 3).pairings}
    assert sorted(pairings) == ["1", "2", "3", "4", "5"]
    assert pairings["2"].first.name == "Fox, Fay" and pairings["2"].second.name == "Brown, Bob"
    assert pairings["1"].first.name == "Anderson, Ann"
    event = _event()
    for player in event["divisions"][0]["players"][1:]:
        if player["etc"]["board"][2] == 1:
            player["etc"]["p12"][2] = 3  # must draw for first
    event["divisions"][1]["players"][1]["etc"]["board"][2] = 9  # Garcia and Jones: two boards
    found = tsh_round(read_tourney_js(_write(tmp_path, event)), 3)
    problems = "\n".join(found.problems)
    assert "division A, player 1: round 3, Anderson, Ann (#1, A) v Diaz, Dan (#4, A) at table 1" in problems
    assert "they must draw for first (p12 3)" in problems
    assert (
        "division B, player 1: round 3, Garcia, Gil (#1, B) v Jones, Jo (#4, B): TSH gives two boards"
        in problems
    )


@pytest.mark.parametrize(
    "content, said",
    [
        (b"var newt = {};", "not TSH's tourney.js (it begins 'var newt = {};', not `newt=`)"),
        (b"", "not `newt=`"),
        (b"newt={\"divisions\": [}", "not TSH's tourney.js (Expecting value at line 1, column 21)"),
        (b"newt=" + b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), f"nested more than {MAX_DEPTH} deep"),
        (b"newt=" + b"[" * 200_000, f"nested more than {MAX_DEPTH} deep"),
        (b"newt={\"a\": \"" + b"\\\"" * 300_000, "not TSH's tourney.js (Unterminated string"),
        (b"newt={\"divisions\": NaN}", "NaN is no number TSH writes"),
        (b"newt=" + b"9" * 5000, "not TSH's tourney.js"),
        (b"newt=[1, 2]", "newt is not an object"),
        (b"newt={};alert(1)", "more after newt's object: 'alert(1)'"),
        (b"newt={}", "the event has no divisions list"),
        (b"newt={\"divisions\": []}", "no divisions in it"),
        (b"newt={\"divisions\": [{\"name\": \"A\", \"players\": [null, 7]}]}", "division A, player 1: not a player"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a binary file (a NUL byte at byte 8)"),
    ],
    ids=[
        "not-newt", "empty", "bad-json", "deep", "deeper", "unterminated", "nan", "long-number",
        "not-object", "trailing", "no-divisions", "empty-divisions", "player-not-object", "binary",
    ],
)  # fmt: skip  # laid out by hand, the way it reads best
def test_what_is_not_tsh_s_tourney_js_is_one_line_naming_the_file(tmp_path, content, said):
    path = _write(tmp_path, content)
    with pytest.raises(PairingsError) as raised:
        read_tourney_js(path)
    message = str(raised.value)
    assert message.startswith(path) and said in message and "\n" not in message


def test_a_player_s_lists_must_be_numbers_and_words(tmp_path):
    for change, said in (
        (lambda p: p.update(pairings=[2, "two"]), "pairings must be whole numbers: 'two'"),
        (lambda p: p.update(scores=[True]), "scores must be whole numbers: 'True'"),
        (lambda p: p["etc"].update(board=[[1]]), "etc.board holds lists, not TSH's words"),
        (lambda p: p.update(name=""), "no name"),
    ):
        event = _event()
        change(event["divisions"][0]["players"][1])
        with pytest.raises(PairingsError, match="division A, player 1: " + re.escape(said)):
            read_tourney_js(_write(tmp_path, event))


def test_a_huge_file_is_refused_unread(tmp_path):
    path = tmp_path / "tourney.js"
    with open(path, "wb") as file:
        file.write(b'newt={"divisions": [' + b" " * MAX_BYTES + b"]}")
    with pytest.raises(PairingsError, match=f"over the {MAX_BYTES:,}-byte limit"):
        read_tourney_js(str(path))


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    return play_round(str(tmp_path_factory.mktemp("round3")))


def _scores(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["scores", *argv]) == 0
    return out.getvalue()


def test_the_commands_say_a_bad_tourney_js_in_one_line(played, tmp_path, capsys):
    path = _write(tmp_path, 'newt={"divisions": [{"name": "A", "players": [{}]}]};')
    for argv in (["sheet", played, "--tsh", path], ["scores", played, "--tsh", path, "--round", "3"]):
        assert main([*argv, "--out", str(tmp_path / "out")]) != 0
        printed = capsys.readouterr()
        lines = printed.err.strip().splitlines()
        assert "Traceback" not in printed.err and len(lines) == 1, printed.err
        assert f"{path} division A: players[0] should be null" in lines[0]


def test_scores_from_tourney_js_are_the_scores_from_the_t_files(played, tmp_path):
    common = ["--round", "3", "--entries", ENTRIES, "--dry-run"]
    from_js = _scores(played, "--tsh", SAMPLE, *common)
    from_t = _scores(played, "--tsh", *TSH_FILES, *common)
    assert "enter: 1 382 4 380" in from_js and "TSH gives Ito, Ken the bye (+50)" in from_js
    assert from_js == from_t


def test_the_hall_names_players_from_tourney_js():
    pairings = HallPairings(tsh=[SAMPLE])
    try:
        assert pairings.names(3, "2") == "Fox, Fay (#6, A) v Brown, Bob (#2, A)"
        assert pairings.names(3, "5") == "Khan, Kai (#5, B) v Hill, Hana (#2, B)"
        assert pairings.problem is None
    finally:
        pairings.close()


def test_a_tourney_js_beside_t_files_adds_its_divisions(tmp_path):
    event = _event()
    event["divisions"] = [event["divisions"][1]]
    event["divisions"][0]["name"] = "c"
    divisions = tourney_js.read_tourney_js(_write(tmp_path, event))
    from tileclock.director.event.inputs import read_divisions

    both = read_divisions([TSH_FILES[0], _write(tmp_path, event, "web.JS")], tables=["C=11-15"])
    assert [d.name for d in both] == ["A", "C"] and divisions[0].name == "C"
    tables = {p.table for p in tsh_round(both, 3).pairings}
    assert tables == {"1", "2", "3", "14", "15"}


def test_a_division_given_twice_is_refused_naming_both_files(played, tmp_path, capsys):
    # a tourney.js beside its own .t files: before, each of round 3's tables held two games
    from tileclock.director.event.inputs import read_divisions

    with pytest.raises(
        PairingsError, match=r"a\.t: division A is also in .*tourney\.js division A: give each division once"
    ):
        read_divisions([SAMPLE, TSH_FILES[0]])
    assert main(["sheet", played, "--tsh", SAMPLE, TSH_FILES[0], "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "give each division once" in err
