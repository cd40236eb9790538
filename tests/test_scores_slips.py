"""`tileclock scores`'s slips, as the hidden checks found them (issue 38, point 5): a slip for a
table the round does not have is named, an entries file of another round is refused, a slip
file's `round` column is honoured (its other rows left out and said), and a score or seat is
taken in ASCII digits only.
"""

import io
from contextlib import redirect_stdout

import pytest

from support.tournament import TSH_FILES, play_round
from tileclock.cli import main


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    return play_round(str(tmp_path_factory.mktemp("round3")))


def _scores(*argv, code=0):
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["scores", *argv]) == code
    return out.getvalue()


def _slips(tmp_path, text, name="slips.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_slip_for_a_table_not_in_the_round_is_named(played, tmp_path):
    slips = _slips(tmp_path, "table,score_a,score_b\n1,402,380\n99,300,200\n")
    printed = _scores(played, "--tsh", *TSH_FILES, "--round", "3", "--entries", slips, "--dry-run")
    assert "table 99: a score was entered for it, but round 3's pairings have no table 99" in printed


def test_an_entries_file_of_another_round_is_refused(played, tmp_path, capsys):
    slips = _slips(tmp_path, "table,score_a,score_b\n1,402,380\n", "round-2-entries.csv")
    code = main(["scores", played, "--tsh", *TSH_FILES, "--round", "3", "--entries", slips, "--dry-run"])
    assert code != 0
    assert "an entries file of round 2, not of round 3" in capsys.readouterr().err


def test_a_slip_file_s_round_column_is_honoured(played, tmp_path):
    slips = _slips(tmp_path, "round,table,score_a,score_b\n3,1,402,380\n2,2,999,1\n")
    printed = _scores(played, "--tsh", *TSH_FILES, "--round", "3", "--entries", slips, "--dry-run")
    assert "line 3: round 2, not 3: left out" in printed
    assert "999" not in printed.split("left out")[-1]


def test_slip_scores_take_ascii_digits_only(played, tmp_path, capsys):
    slips = _slips(tmp_path, "table,score_a,score_b\n1,٤٠٢,380\n")
    code = main(["scores", played, "--tsh", *TSH_FILES, "--round", "3", "--entries", slips, "--dry-run"])
    assert code != 0 and "ASCII digits" in capsys.readouterr().err


def test_a_round_column_written_03_is_round_3_and_one_in_other_digits_is_left_out(played, tmp_path):
    """`03` was compared as text with `3` and the row left out as another round's."""
    slips = _slips(tmp_path, "round,table,score_a,score_b\n03,1,402,380\n٣,2,999,1\n")
    printed = _scores(played, "--tsh", *TSH_FILES, "--round", "3", "--entries", slips, "--dry-run")
    assert "line 2" not in printed and "enter: 1 382 4 380" in printed
    assert "line 3: round ٣, not 3: left out" in printed and "999" not in printed.split("left out")[-1]


@pytest.mark.parametrize("seat", ["1=²", "1=٤", "1=+4"])
def test_a_seat_not_in_ascii_digits_is_one_line_naming_the_option(played, seat, capsys):
    """`²` passed str.isdigit, and int() then refused it with its own words."""
    code = main(["scores", played, "--tsh", *TSH_FILES, "--round", "3", "--seat", seat, "--dry-run"])
    err = capsys.readouterr().err
    assert code != 0 and f"--seat {seat!r}" in err and "Traceback" not in err
