"""Scores to TSH: every penalty applied by rule, each step shown, and lines TSH takes as they are.

Round 3 of the sample divisions is played on simulated clocks (tests/support/tournament.py) and its slips
entered from `tests/data/scores/round-3-slips.csv`. The expected lines are worked out here by hand from
the scripts and the rulebooks, not by the code under test; and every written file is pasted into
`FakeTsh`, a small model of TSH's score entry built from its Addscore.pm and Division.pm (the
checks it makes, the bye it gives by itself), which refuses what TSH refuses.
"""

import csv
import io
import os
import shutil
from contextlib import redirect_stdout

import pytest

from support.tournament import DATA, TSH_FILES, play, play_round
from tileclock.cli import main
from tileclock.director.event.tfile import read_players

ENTRIES = os.path.join(DATA, "scores", "round-3-slips.csv")


class Refused(AssertionError):
    """A line TSH would refuse."""


class FakeTsh:
    """TSH's score entry as far as these files use it: `pair A B R D`, `a R D`, entry lines."""

    def __init__(self, paths):
        self.players = {}
        for path in paths:
            name = os.path.splitext(os.path.basename(path))[0].upper()
            self.players[name] = {p.number: p for p in read_players(path)}
        self.mode = None

    def paste(self, text):
        for line in text.split("\n")[:-1]:
            self.line(line.strip())

    def line(self, text):
        words = text.split()
        if self.mode is None:
            if words[0] == "pair":
                self._pair(*map(int, words[1:4]), words[4])
            elif words[0] == "a":
                self._enter(int(words[1]), words[2])
            else:
                raise Refused(f"not a command: {text!r}")
            return
        if not words:
            self.mode = None
            return
        round0, division = self.mode
        self._bye_by_itself(round0, division)
        players = self.players[division]
        if len(words) == 2:
            pn, spread = map(int, words)
            player = players[pn]
            if self._opp(player, round0) != 0:
                raise Refused(f"{text!r}: #{pn} is not paired with 0 (enotabye)")
            if self._score(player, round0):
                raise Refused(f"{text!r}: #{pn} already has a score (ehass/whass)")
            self._set_score(player, round0, spread)
            return
        if len(words) != 4:
            raise Refused(f"{text!r}: not 4 words (eahuh)")
        pn1, ps1, pn2, ps2 = map(int, words)
        one, two = players[pn1], players[pn2]
        if self._opp(one, round0) != pn2 or self._opp(two, round0) != pn1:
            raise Refused(f"{text!r}: not paired with each other (eanotopp)")
        if sorted((ps1, ps2)) == [0, 50]:
            raise Refused(f"{text!r}: enter that as a bye (eabbye)")
        for player, score in ((one, ps1), (two, ps2)):
            if not -149 <= score <= 1499:
                raise Refused(f"{text!r}: bad score (ebadscore)")
            if self._score(player, round0) is not None:
                raise Refused(f"{text!r}: already has a score (ehass)")
        self._set_score(one, round0, ps1)
        self._set_score(two, round0, ps2)

    def _enter(self, round_number, division):
        active = [p for p in self.players[division].values() if p.active]
        least = min(len([s for s in p.scores if s is not None]) for p in active)
        if round_number - 1 != least:
            raise Refused(f"a {round_number} {division}: round {least + 1} is the one to enter")
        self.mode = (round_number - 1, division)

    def _pair(self, pn1, pn2, round_number, division):
        round0, players = round_number - 1, self.players[division]
        for pn, other in ((pn1, pn2), (pn2, pn1)):
            if not pn:
                continue
            old = self._opp(players[pn], round0)
            if old and old != other:
                players[old].opponents[round0] = None  # TSH pops the old opponent's pairing
            players[pn].opponents[round0] = other

    def _bye_by_itself(self, round0, division):
        """Addscore's ScoreBye: one unpaired active player, an odd number unscored: TSH scores it."""
        active = [p for p in self.players[division].values() if p.active]
        left = [p for p in active if self._score(p, round0) is None]
        unpaired = [p for p in active if not self._opp(p, round0)]
        needing = [p for p in left if not self._opp(p, round0)]
        if len(left) % 2 and len(unpaired) == 1 and len(needing) == 1:
            self._set_score(needing[0], round0, 50)

    @staticmethod
    def _opp(player, round0):
        return player.opponents[round0] if round0 < len(player.opponents) else None

    @staticmethod
    def _score(player, round0):
        return player.scores[round0] if round0 < len(player.scores) else None

    @staticmethod
    def _set_score(player, round0, score):
        player.scores.extend([None] * (round0 + 1 - len(player.scores)))
        player.scores[round0] = score

    def complete(self, round_number):
        return all(
            self._score(p, round_number - 1) is not None
            for players in self.players.values()
            for p in players.values()
            if p.active
        )


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    return play_round(str(tmp_path_factory.mktemp("round3")))


def _scores(*argv):
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["scores", *argv])
    assert code == 0
    return out.getvalue()


def _read(path):
    with open(path, encoding="utf-8") as file:
        return file.read()


def _rows(path):
    """A round's CSV (the scores, the sheet) as table -> row."""
    with open(path, newline="", encoding="utf-8") as file:
        return {row["table"]: row for row in csv.DictReader(file)}


# Worked out by hand from tests/support/tournament.py and the slips (first player first, as TSH tracks it):
# table 1 Anderson (#1, first) 402 - 20 overtime (-1:30) = 382, Diaz (#4) 380.
# table 2 Fox (#6, first, side B) 411; Brown (#2, side A) 355 - 20 (-1:39) = 335.
# table 3 Chen (#3, first) 420 - 10 (-1:00) = 410; Evans (#5) passed 10 minutes: 385 - 100 = 285.
# table 5 Khan (#5 of B, first, side B) 372; Hill (#2, side A) 366 - 20 late (6:30 absent) = 346.
# table 4 Jones (#4 of B, side A, seat given) absent: -50; Garcia (#1) +50, after both are unpaired.
# Ito (#3 of B) has the bye: TSH scores it by itself (five unscored, one unpaired).
PASTE_A = "a 3 A\n1 382 4 380\n6 411 2 335\n3 410 5 285\n\n"
PASTE_B = "a 3 B\n5 372 2 346\n\n"
FORFEITS_B = "pair 4 0 3 B\npair 1 0 3 B\na 3 B\n4 -50\n1 50\n\n"


def test_round_three_comes_out_as_tsh_lines_and_tsh_takes_every_one(played, tmp_path):
    before = [_read(path) for path in TSH_FILES]
    printed = _scores(
        played, "--tsh", *TSH_FILES, "--round", "3", "--entries", ENTRIES, "--out", str(tmp_path)
    )
    assert _read(tmp_path / "round-3-A.tsh") == PASTE_A
    assert _read(tmp_path / "round-3-B.tsh") == PASTE_B
    assert _read(tmp_path / "round-3-B-forfeits.tsh") == FORFEITS_B
    assert [_read(path) for path in TSH_FILES] == before  # never written into
    tsh = FakeTsh(TSH_FILES)
    for name in ("round-3-A.tsh", "round-3-B.tsh", "round-3-B-forfeits.tsh"):
        tsh.paste(_read(tmp_path / name))
    assert tsh.complete(3)
    assert "Evans, Eve passed 10 minutes of overtime and loses (NASPA V.G.3): -100" in printed
    assert "TSH gives Ito, Ken the bye (+50) itself at the prompt" in printed
    rows = _rows(tmp_path / "round-3-scores.csv")
    assert (rows["2"]["first_name"], rows["2"]["first_entered"], rows["2"]["first_final"]) == (
        "Fox, Fay",
        "411",
        "411",
    )
    assert (rows["2"]["second_entered"], rows["2"]["second_final"]) == ("355", "335")
    assert rows["2"]["steps"] == (
        "as entered: Fox, Fay 411, Brown, Bob 355; Brown, Bob -20 overtime (-1:39 on the clock) = 335"
    )
    assert rows["1"]["entries"].startswith("phone A@2026-11-25T14:05:10Z: A 402 B 380; phone B@")
    assert rows["4"]["status"] == "forfeit" and rows["4"]["tsh_line"] == "4 -50 / 1 50"


def test_a_dry_run_shows_the_slip_beside_what_is_entered_and_writes_nothing(played, tmp_path):
    printed = _scores(
        played,
        "--tsh",
        *TSH_FILES,
        "--round",
        "3",
        "--entries",
        ENTRIES,
        "--out",
        str(tmp_path / "x"),
        "--dry-run",
    )
    assert not os.path.exists(tmp_path / "x")
    assert "  table 1: slip A Anderson, Ann 402, B Diaz, Dan 380\n" in printed
    assert "    Anderson, Ann -20 overtime (-1:30 on the clock) = 382\n    enter: 1 382 4 380\n" in printed


def _entries(tmp_path, text):
    path = tmp_path / "entries.csv"
    path.write_text("table,score_a,score_b,seat_a,by,at\n" + text)
    return str(path)


@pytest.mark.parametrize(
    ("a", "b", "line", "step"),
    [
        # Chen (A, first) 300 - 10 = 290; Evans (B) 420 - 100 = 320 still leads: Chen raised to 321
        (300, 420, "3 321 5 320", "Evans, Eve still has 320 to Chen, Carol's 290: Chen, Carol's score is raised to 321"),
        (400, 390, "3 390 5 290", "Chen, Carol wins (390 to 290)"),
        # a tie after the deduction is still the offender's loss
        (300, 390, "3 291 5 290", "Evans, Eve still has 290 to Chen, Carol's 290: Chen, Carol's score is raised to 291"),
        (300, 400, "3 301 5 300", "Evans, Eve still has 300 to Chen, Carol's 290"),
    ],
)  # fmt: skip  # a case a line
def test_naspa_v_g_3_the_offender_loses_whatever_the_slip_says(played, tmp_path, a, b, line, step):
    entries = _entries(tmp_path, f"3,{a},{b},,director,\n")
    printed = _scores(
        played, "--tsh", *TSH_FILES, "--round", "3", "--entries", entries, "--out", str(tmp_path)
    )
    assert f"\n3 {line.split(' ', 1)[1]}\n" in _read(tmp_path / "round-3-A.tsh")
    assert step in printed


def test_entries_that_disagree_flag_the_table_until_the_director_settles_it(played, tmp_path):
    entries = _entries(tmp_path, "1,402,380,,phone A,t1\n1,402,308,,phone B,t2\n")
    printed = _scores(
        played, "--tsh", *TSH_FILES, "--round", "3", "--entries", entries, "--out", str(tmp_path)
    )
    assert "NOT ENTERED: the score entries disagree: phone A: A 402 B 380; phone B: A 402 B 308" in printed
    assert not os.path.exists(tmp_path / "round-3-A.tsh")  # no table of A is ready: no file to paste
    entries = _entries(tmp_path, "1,402,380,,phone A,t1\n1,402,308,,phone B,t2\n1,402,380,,director,t3\n")
    _scores(played, "--tsh", *TSH_FILES, "--round", "3", "--entries", entries, "--out", str(tmp_path))
    assert _read(tmp_path / "round-3-A.tsh") == "a 3 A\n1 382 4 380\n\n"


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ("1,-140,380", "Anderson, Ann's final score -160 is outside what TSH takes (-149 to 1499)"),
        ("1,20,50", "TSH refuses 0 50 as a game (it is a bye's spread)"),
        ("1,402,", "the entry needs both sides' scores"),
    ],
)
def test_a_line_tsh_would_refuse_is_never_written(played, tmp_path, entry, reason):
    printed = _scores(
        played, "--tsh", *TSH_FILES, "--round", "3", "--entries", _entries(tmp_path, entry + ",,director,\n"),
        "--out", str(tmp_path),
    )  # fmt: skip  # the command line as typed
    assert f"NOT ENTERED: {reason}" in printed
    assert not os.path.exists(tmp_path / "round-3-A.tsh")


def test_a_round_tsh_would_not_take_is_refused_for_the_whole_division(played, tmp_path, capsys):
    printed = _scores(
        played, "--tsh", *TSH_FILES, "--round", "2", "--entries", ENTRIES, "--out", str(tmp_path)
    )
    assert "NOTHING ENTERED: round 2 is already complete in TSH (every player has a score for it)" in printed
    folder = tmp_path / "tsh"
    folder.mkdir()
    for path in TSH_FILES:
        shutil.copy(path, folder)
    text = (
        (folder / "a.t")
        .read_text()
        .replace("Anderson, Ann 1820 2 3 4; 420 388;", "Anderson, Ann 1820 2 3 4; 420;")
    )
    (folder / "a.t").write_text(text)
    # a round TSH is not on yet is refused whole, with both numbers (issue 38): tests/test_tsh_round.py
    argv = ["scores", played, "--tsh", str(folder / "a.t"), "--round", "3", "--entries", ENTRIES]
    code = main([*argv, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert (
        code == 2 and "--round 3, but TSH is on round 2 in division A (Anderson, Ann #1 has 1 score in" in err
    )


def test_scores_already_in_tsh_are_not_entered_twice(played, tmp_path):
    folder = tmp_path / "tsh"
    folder.mkdir()
    text = _read(TSH_FILES[0])
    text = text.replace("420 388;", "420 388 382;").replace("390 365;", "390 365 380;")  # table 1 as ours
    text = text.replace("377 411;", "377 411 400;").replace("401 380;", "401 380 300;")  # table 3 otherwise
    (folder / "a.t").write_text(text)
    printed = _scores(
        played, "--tsh", str(folder / "a.t"), "--round", "3", "--entries", ENTRIES, "--out", str(tmp_path)
    )
    assert "  table 1: slip A Anderson, Ann 402, B Diaz, Dan 380\n" in printed
    assert "already in TSH as these scores: nothing to enter" in printed
    assert "TSH already has Chen, Carol 400 and Evans, Eve 300 for round 3; these are 410 and 285" in printed
    assert _read(tmp_path / "round-3-A.tsh") == "a 3 A\n6 411 2 335\n\n"


def test_a_double_forfeit_unpairs_both_and_gives_both_minus_50(tmp_path):
    play(str(tmp_path), "4", "0 send late both\n26:00 until\n")
    records = str(tmp_path / "records")
    printed = _scores(records, "--tsh", TSH_FILES[1], "--round", "3", "--out", str(tmp_path))
    assert "both players absent: a double forfeit, -50 spread each" in printed
    assert _read(tmp_path / "round-3-B-forfeits.tsh") == "pair 4 0 3 B\npair 1 0 3 B\na 3 B\n4 -50\n1 -50\n\n"
    tsh = FakeTsh([TSH_FILES[1]])
    tsh.paste(_read(tmp_path / "round-3-B-forfeits.tsh"))


def test_a_bye_tsh_does_not_give_by_itself_is_a_line(played, tmp_path):
    """Two players paired with 0 in round 3: TSH gives neither a bye by itself, so each is a line."""
    folder = tmp_path / "tsh"
    folder.mkdir()
    text = _read(TSH_FILES[1]).replace("Jones, Jo 1250 3 5 1;", "Jones, Jo 1250 3 5 0;")
    (folder / "b.t").write_text(text.replace("Garcia, Gil 1400 2 3 4;", "Garcia, Gil 1400 2 3 0;"))
    printed = _scores(
        played, "--tsh", str(folder / "b.t"), "--round", "3", "--entries", ENTRIES, "--out", str(tmp_path)
    )
    assert _read(tmp_path / "round-3-B.tsh") == "a 3 B\n5 372 2 346\n1 50\n3 50\n4 50\n\n"
    assert "board 4 (clock" in printed and "which has no pairing in round 3" in printed
    tsh = FakeTsh([str(folder / "b.t")])
    tsh.paste(_read(tmp_path / "round-3-B.tsh"))
    assert tsh.complete(3)


def test_the_sheet_shows_each_tables_scores_step_by_step(played, tmp_path):
    argv = ["sheet", played, "--tsh", *TSH_FILES, "--round", "3", "--entries", ENTRIES, "--out", str(tmp_path),
            "--no-pictures"]  # fmt: skip  # the command line as typed
    with redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    rows = _rows(tmp_path / "round-3.csv")
    assert (rows["1"]["first_entered"], rows["1"]["first_final"], rows["1"]["second_final"]) == (
        "402",
        "382",
        "380",
    )
    assert rows["3"]["steps"].endswith("Chen, Carol wins (410 to 285) (NASPA V.G.3)")
    assert (rows["4"]["first_final"], rows["4"]["second_final"]) == ("-50", "50")  # a forfeit's spread
    assert "Jones, Jo did not arrive in time and forfeits: Garcia, Gil +50 spread" in rows["4"]["steps"]
    assert "<b>Scores:</b> as entered: Anderson, Ann 402, Diaz, Dan 380" in _read(tmp_path / "round-3.html")
