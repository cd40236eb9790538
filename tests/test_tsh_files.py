"""TSH's files read as TSH reads them (its TFile.pm and config reader): encodings, comments, escapes.

`tests/data/tsh/event/` is a sample event as TSH keeps it: `config.tsh` naming divisions B and C,
and `c.t` written the way TSH writes a division (Latin-1, CRLF, long lines with `class`, `newr`
and `rtime` fields) with the cases real files have: accented names, a withdrawn player (`off`),
a bye, a forfeit already entered, a must-draw table (`p12 3`), a decimal rating, an escaped `;`
in a field, and a player not yet paired (`00`).
"""

import csv
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from support.tournament import DATA, END, play
from tileclock.cli import main
from tileclock.director.event.pairings import (
    parse_table_ranges,
    read_tsh,
    read_tsh_config,
    tsh_round,
    with_tables,
)
from tileclock.director.event.tfile import PairingsError, decode, parse_line, read_config

EVENT = os.path.join(DATA, "tsh", "event")
C_T = os.path.join(EVENT, "c.t")
NAMES = ["Núñez, José", "Østergaard, Åse", "Lefèvre, Chloé", "Smith, Jo", "Brown-Ng, Al", "Withers, Vi"]


def _c_text():
    with open(C_T, "rb") as file:
        return file.read().decode("latin-1")


def test_a_division_as_tsh_writes_it_reads_whole():
    division = read_tsh(C_T)
    assert division.name == "C"
    assert [p.name for p in division.players] == NAMES
    first, second, third, *_ = division.players
    assert first.rating == "1846.5" and first.opponents == [2, 3, 5] and first.scores == [402, 388]
    assert first.fields["board"] == ["1", "2", "1"] and first.fields["rtime"] == ["1676683776", "1676687732"]
    assert second.opponents == [1, 4, None]  # `00`: round 3 not paired yet
    assert third.fields["note"] == ["late;", "phoned", "ahead"]  # `\;` is inside the field
    assert third.fields["p12"] == ["1", "1", "2"] and third.fields["newr"] == ["1700", "1701"]
    assert [p.active for p in division.players] == [True] * 5 + [False]


# (bytes of the file, what is done to them): each must read exactly as the plain file does
VARIANTS = {
    "utf-8": lambda text: text.encode("utf-8"),
    "latin-1": lambda text: text.encode("latin-1"),
    "utf-8 with a BOM": lambda text: b"\xef\xbb\xbf" + text.encode("utf-8"),
    "a BOM, then the first name": lambda text: b"\xef\xbb\xbf" + _players_only(text).encode("utf-8"),
    "a BOM, then a blank line": lambda text: b"\xef\xbb\xbf\n" + text.encode("utf-8"),
    "LF line ends": lambda text: text.replace("\r\n", "\n").encode("latin-1"),
    "CR line ends": lambda text: text.replace("\r\n", "\r").encode("utf-8"),
    "blank lines and comments between players": lambda text: text.replace(
        "\r\n", "\r\n\r\n   \r\n  # a note from the director\r\n"
    ).encode("utf-8"),
    "no final line end": lambda text: text.rstrip().encode("latin-1"),
}


def _players_only(text):
    return "\n".join(line for line in text.splitlines() if line.strip() and not line.startswith("#"))


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_encoding_and_layout_tsh_accepts_reads_the_same(tmp_path, variant):
    path = tmp_path / "c.t"
    path.write_bytes(VARIANTS[variant](_c_text()))
    plain = read_tsh(C_T)
    division = read_tsh(str(path))
    assert [p.name for p in division.players] == NAMES
    assert [(p.rating, p.opponents, p.scores, p.fields) for p in division.players] == [
        (p.rating, p.opponents, p.scores, p.fields) for p in plain.players
    ]


def test_text_is_utf8_when_it_is_valid_utf8_else_latin1():
    assert decode("Núñez".encode()) == "Núñez"
    assert decode("Núñez".encode("latin-1")) == "Núñez"
    assert decode(b"\xef\xbb\xbfN\xc3\xba") == "Nú"  # the BOM is dropped, never part of a name


@pytest.mark.parametrize(
    ("line", "name", "rating", "opponents", "scores"),
    [
        ("Smith, Jo 1500 2 3; 400 380", "Smith, Jo", "1500", [2, 3], [400, 380]),
        ("Smith, Jo 1500", "Smith, Jo", "1500", [], []),  # TSH adds the missing `;`
        ("Smith, Jo 1500 2 00; 400 00", "Smith, Jo", "1500", [2, None], [400, None]),
        ("Smith, Jo 1500 2; 400; # 7", "Smith, Jo", "1500", [2], [400]),
        ("van der Berg, Jan  1612.25  4 0 ;412 50", "van der Berg, Jan", "1612.25", [4, 0], [412, 50]),
        ("Team 7 1500 2; 400", "Team", "7", [1500, 2], [400]),  # as TSH: the shortest name wins
        ("A 1 1500 2;", "A 1", "1500", [2], []),  # TSH's names have two characters at least
        ("O'Neil; Pat 1500 2; 400", "O'Neil; Pat", "1500", [2], [400]),  # a `;` that cannot end the name
    ],
)
def test_player_lines_split_as_tsh_splits_them(line, name, rating, opponents, scores):
    player = parse_line(line, "x.t", 1, 1)
    assert (player.name, player.rating, player.opponents, player.scores) == (name, rating, opponents, scores)


def test_escapes_in_fields_follow_tsh():
    player = parse_line(r"Lee, Lou 1500 2; 400; board 3; note a\;b c\\; p12 1", "x.t", 1, 1)
    assert player.fields == {"board": ["3"], "note": ["a;b", "c\\"], "p12": ["1"]}
    # before the fix, `\;` split the field and a second `board` was invented
    player = parse_line(r"Lee, Lou 1500 2; 400; note x\; board 9; board 3", "x.t", 1, 1)
    assert player.fields["board"] == ["3"] and player.fields["note"] == ["x;", "board", "9"]


# TSH's own pattern (TFile.pm), the oracle for the property test below
TSH_LINE = re.compile(r"^(.+?\S)\s+(\d+(?:[.+]\d+)*)\s*([\d\s]*);\s*([-\d\s]*)((?:;[^;]*)*)$")


@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(
        st.sampled_from(["Lee", ",", " ", "  ", "1", "15", "00", ".", "+", "5.5", ";", "-", "x1"]),
        max_size=14,
    )
)
def test_any_line_is_a_player_exactly_when_tsh_says_so(words):
    text = "".join(words).strip()
    if not text or text.startswith("#"):
        return
    match = TSH_LINE.match(re.sub(r"; # \d+\s*$", ";", text if ";" in text else text + ";"))
    try:
        player = parse_line(text, "x.t", 1, 1)
    except PairingsError:
        player = None
    if match is None:
        assert player is None
        return
    numbers = match.group(3).split() + match.group(4).split()
    if not all(re.fullmatch(r"-?\d+", word) for word in numbers):
        return  # TSH would read `4-5` as 4 with a warning: refused here, in words
    assert player is not None
    assert (player.name, player.rating) == (match.group(1), match.group(2))
    assert player.opponents == [None if w == "00" else int(w) for w in match.group(3).split()]


def test_a_hostile_line_is_refused_quickly_in_words():
    with pytest.raises(PairingsError, match="opponents must be whole numbers"):
        parse_line("x " + "1 " * 40_000 + "x", "x.t", 3, 1)
    with pytest.raises(PairingsError, match="not a player line"):
        parse_line("Lee; Lou; " * 5_000, "x.t", 3, 1)


def test_round_three_names_the_must_draw_table_the_bye_the_withdrawn_and_the_unpaired():
    schedule = tsh_round([read_tsh(C_T)], 3)
    assert [(p.table, p.first_known, p.why_unknown) for p in schedule.pairings] == [
        ("1", False, "they must draw for first (p12 3)"),
        ("2", True, ""),
    ]
    assert [(b.player.name, b.kind) for b in schedule.byes] == [("Withers, Vi", "withdrawn")]
    problems = "\n".join(schedule.problems)
    assert (
        "Núñez, José (#1, C) v Brown-Ng, Al (#5, C) at table 1: they must draw for first (p12 3)" in problems
    )
    assert "Østergaard, Åse (#2, C) has no pairing in round 3 yet" in problems
    assert "Withers" not in problems
    round2 = tsh_round([read_tsh(C_T)], 2)
    assert [(b.player.name, b.kind, b.score) for b in round2.byes] == [
        ("Brown-Ng, Al", "forfeit", -50),
        ("Withers, Vi", "withdrawn", -50),
    ]


def test_config_tsh_names_the_divisions_and_their_files():
    config = read_config(os.path.join(EVENT, "config.tsh"))
    assert [name for name, _ in config.divisions] == ["B", "C"]
    assert config.divisions[0][1].endswith(os.path.join("event", "..", "b.t"))
    assert config.flag("track_firsts") and config.number("max_rounds", 0) == 7
    divisions = read_tsh_config(os.path.join(EVENT, "config.tsh"))
    assert [(d.name, len(d.players)) for d in divisions] == [("B", 5), ("C", 6)]


def test_a_config_without_divisions_is_refused(tmp_path):
    path = tmp_path / "config.tsh"
    path.write_text("config event_name = 'x'\n")
    with pytest.raises(PairingsError, match="no `division NAME FILE` line"):
        read_config(str(path))


def test_two_divisions_on_the_same_boards_are_never_mixed(tmp_path):
    one = tmp_path / "one.t"
    two = tmp_path / "two.t"
    one.write_text("Ada, A 1500 2; ; board 1; p12 1\nBea, B 1400 1; ; board 1; p12 2\n")
    two.write_text("Cy, C 1500 2; ; board 1; p12 2\nDi, D 1400 1; ; board 1; p12 1\n")
    divisions = [read_tsh(str(one)), read_tsh(str(two))]
    mixed = tsh_round(divisions, 1)
    assert any(
        "table 1: divisions ONE and TWO both play at board 1: give each division its tables" in text
        for text in mixed.problems
    )
    with_tables(divisions, parse_table_ranges(["one=1-10", "TWO=11-20"]))
    apart = tsh_round(divisions, 1)
    assert [(p.table, p.first.name) for p in apart.pairings] == [("1", "Ada, A"), ("11", "Di, D")]
    assert apart.problems == []


@pytest.mark.parametrize(
    ("ranges", "message"),
    [
        (["A=5"], "give a division and its tables"),
        (["A=9-2"], "give a division and its tables"),
        (["Z=1-4"], "--tables names Z"),
        (["B=1-5", "C=5-9"], "overlap"),
    ],
)
def test_table_ranges_that_cannot_be_right_are_refused(ranges, message):
    divisions = read_tsh_config(os.path.join(EVENT, "config.tsh"))
    with pytest.raises(ValueError, match=message):
        with_tables(divisions, parse_table_ranges(ranges))


def test_the_sheet_reads_config_tsh_and_table_ranges_and_a_seat_settles_a_must_draw(tmp_path, capsys):
    """Division C's board 1 is the hall's table 21; its must-draw game is named once the score entry
    says who sat at side A (`--seat`)."""
    play(
        str(tmp_path),
        "21",
        "0 press B\n26:30 press A\n27:00 press STOP\n" + END.format(t="27:10", t2="27:13.5"),
    )
    out = tmp_path / "sheets"
    argv = ["sheet", str(tmp_path / "records"), "--config", os.path.join(EVENT, "config.tsh"),
            "--tables", "C=21-30", "--round", "3", "--out", str(out), "--no-pictures"]  # fmt: skip  # the command line as typed
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert re.search(
        r"round 3, table 21: they must draw for first \(p12 3\), so the clock's sides cannot", printed
    )
    assert main([*argv, "--seat", "21=5"]) == 0
    with open(out / "round-3.csv", newline="", encoding="utf-8") as file:
        row = next(r for r in csv.DictReader(file) if r["table"] == "21")
    assert (row["first"], row["second"], row["first_side"]) == (
        "Brown-Ng, Al (#5, C)",
        "Núñez, José (#1, C)",
        "A",
    )
    assert (row["first_overtime_pen"], row["problems"]) == ("20", "")
