"""A user's mistake is one line (exit 2); a bug shows its traceback and asks for a report (exit 70).

The command line used to say every ValueError and OSError as the user's mistake, so a bug (a
`zip(..., strict=True)` of unequal lengths, a KeyError) never showed where it happened.
"""

import pytest

from support.command_line import run
from tileclock.cli.errors import BUG, MISTAKE, UsageError, given_by_the_user
from tileclock.director.event.tfile import PairingsError

SHEET = ["sheet", "games", "--tsh", "a.t"]
BUG_LINE = "a bug in tileclock"


def raising(error):
    """A runner (`run_sheets`' place) that raises `error`."""

    def runner(args, out):
        raise error

    return runner


@pytest.mark.parametrize("error", [ValueError("boom"), KeyError("side"), TypeError("boom")])
def test_a_bug_prints_its_traceback_and_asks_for_a_report(monkeypatch, error):
    monkeypatch.setattr("tileclock.cli.sheet.run_sheets", raising(error))
    code, out, err = run(SHEET)
    assert code == BUG == 70 and out == ""
    assert err.startswith("Traceback (most recent call last):")
    assert f"{type(error).__name__}: " in err and "in runner" in err  # where it happened
    assert err.splitlines()[-1].startswith(f"tileclock: {BUG_LINE}") and "report it" in err


@pytest.mark.parametrize(
    "error",
    [UsageError("--round 9: the pairings stop at round 8"), PairingsError("a.t, line 3: not a player")],
)
def test_the_users_mistake_is_one_line(monkeypatch, error):
    monkeypatch.setattr("tileclock.cli.sheet.run_sheets", raising(error))
    code, out, err = run(SHEET)
    assert (code, out, err) == (MISTAKE, "", f"tileclock: {error}\n")


def test_a_missing_file_the_user_named_is_one_line_and_any_other_is_a_bug(monkeypatch, tmp_path):
    named = tmp_path / "games"

    def opens(path):
        def runner(args, out):
            open(path, encoding="utf-8")

        return runner

    monkeypatch.setattr("tileclock.cli.sheet.run_sheets", opens(named / "board-1" / "game.log"))
    code, _, err = run(["sheet", str(named), "--tsh", "a.t"])
    assert (
        code == MISTAKE and err == f"tileclock: {named / 'board-1' / 'game.log'}: No such file or directory\n"
    )
    monkeypatch.setattr("tileclock.cli.sheet.run_sheets", opens(tmp_path / "elsewhere.log"))
    code, _, err = run(["sheet", str(named), "--tsh", "a.t"])
    assert code == BUG and "FileNotFoundError" in err and BUG_LINE in err


def test_a_readers_value_error_is_the_users_and_keeps_its_words():
    with pytest.raises(UsageError, match="^not a time: 'soon'"), given_by_the_user():
        raise ValueError("not a time: 'soon'")
    with pytest.raises(PairingsError), given_by_the_user():  # already the user's: as it was
        raise PairingsError("a.t, line 3")
    with pytest.raises(KeyError), given_by_the_user():  # not a ValueError: a bug, untouched
        raise KeyError("side")
