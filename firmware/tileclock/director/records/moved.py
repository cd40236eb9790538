"""A game a spare took over, read as one with the dead clock's part (issue 40; docs/director-guide.md,
"A spare clock"): for the game's picture.

The spare's game file holds its part only: its `new_game`, then its `takeover` (naming the dead
clock, that clock's game and the seq of its newest record the spare continued from), then the
rest of the game. In the records folder the dead clock's game file is beside it
(`board-*/game-GAME-CLOCK.log`); `joined` reads the dead clock's records up to that seq, then the
spare's from its `takeover` on, placed in time right after them (the spare stood exactly where
they end), so the game reads from its first press to its end on one time line.

A dead clock may have made records the hall never heard before the move (its link down, not the
clock): they reach the hall when it comes back, kept apart and never counted. `late_time` says
what its presses among them add to each side's time used beyond where the spare took the game
up: time the spare does not know, the director's to give (or not) with a correction.
"""

import glob
import os
from dataclasses import dataclass

from ...clock.history import Game, split_games
from ...clock.timecode import format_clock
from .history import read_records


def takeover_of(game):
    """The `takeover` record of `game` (a `Game`), or None: a game no spare took over."""
    return next((r for r in game.records if r["ev"] == "takeover"), None)


def dead_part(folder, taken):
    """The dead clock's records of the game `taken` (a `takeover` record) names, up to the seq the
    spare continued from, from its game file under `folder` (collect's or the hall's records
    folder); None where that file is not there, cannot be read whole (a torn line after a power
    cut: the spare's part is then drawn alone, never an error) or holds no such game."""
    name = f"game-{taken['from_game']}-{taken['from']}.log"
    for path in sorted(glob.glob(os.path.join(glob.escape(folder), "board-*", name))):
        try:
            games = split_games(read_records(path))
        except (OSError, ValueError):
            continue
        for game in games:
            if game.seq == taken["from_game"]:
                return [r for r in game.records if r["seq"] <= taken["from_seq"]]
    return None


def joined(game, folder):
    """`game` with the dead clock's part before its `takeover` (from `folder`), as one `Game`:
    the dead part, then the spare's records from its `takeover` on, their instants moved on to
    follow it; `game` itself when no spare took it over or the dead part is not in `folder`."""
    taken = takeover_of(game)
    dead = dead_part(folder, taken) if taken is not None and folder else None
    if not dead:
        return game
    shift_ms = dead[-1]["t_ms"] - taken["t_ms"]
    later = game.records[game.records.index(taken) :]
    moved = [_shifted(record, shift_ms) for record in later]
    return Game(dead + moved, lead=[], opened_in=None)


def parts_line(game):
    """A line naming the two parts of `game`, a joined one (`joined`): which clock played to which
    seq, and which took it up from which record on."""
    taken = takeover_of(game)
    return (
        f"a moved game: clock {taken['from']}'s records from its game {taken['from_game']} to seq "
        f"{taken['from_seq']}, then clock {taken.get('clock') or 'the spare'}'s from its takeover "
        f"(seq {taken['seq']}) on, as one game"
    )


def records_folder(path):
    """The records folder a game file in it (`FOLDER/board-B/game-....log`) belongs to, or None."""
    board = os.path.dirname(os.path.abspath(path))
    return os.path.dirname(board) if os.path.basename(board).startswith("board-") else None


def _shifted(record, shift_ms):
    """`record` with its instant moved on by `shift_ms` (its `at_ns` too, where it has one)."""
    moved = dict(record, t_ms=record["t_ms"] + shift_ms)
    if "at_ns" in record:
        moved["at_ns"] = record["at_ns"] + shift_ms * 1_000_000
    return moved


#: the records a player's press makes (the clock's time changes hands or stops, or starts again)
PRESSES = ("start", "switch", "pause", "resume")


@dataclass(frozen=True)
class LateTime:
    """What a dead clock's late records add beyond the move: `seq` and `t_ms` of its last press
    there, and per side `more_ms` ({side: ms}, each side's time used then less its time used where
    the spare took the game up; negative only for a record that makes no sense)."""

    seq: int
    t_ms: int
    more_ms: dict

    def words(self):
        """Each side that used more, in words: `A used 0:12 more` (`and` between two)."""
        said = [f"{side} used {_duration(ms)} more" for side, ms in sorted(self.more_ms.items()) if ms]
        return " and ".join(said)


def late_time(records, from_seq):
    """A `LateTime`, or None: what the presses among a dead clock's records of its moved game
    (`records`, its game's from `new_game` on, in seq order, with those it sent after the move)
    made after record `from_seq` (the one the spare continued from) add to each side's time used.

    Only records made before the clock learnt of the move count: those before its `moved` record,
    and before it started again (a `boot`): a press after a restart was made on a clock whose game
    the players had left. The time counts to its last press: what ran on after it (a clock left
    running on a table no one sat at) is not a player's act. None when no press adds a millisecond.
    """
    base = next((r for r in records if r["seq"] == from_seq), None)
    if base is None:
        return None
    last = None
    for record in records:
        if record["seq"] <= from_seq:
            continue
        if record["ev"] in ("boot", "moved"):
            break
        if record["ev"] in PRESSES:
            last = record
    if last is None:
        return None
    more = {side: last[side]["used_ms"] - base[side]["used_ms"] for side in ("A", "B")}
    return LateTime(last["seq"], last["t_ms"], more) if any(more.values()) else None


def _duration(ms):
    """A length of time to the nearest second, as the page shows one (`0:12`)."""
    seconds = round(abs(ms) / 1000)
    return ("-" if ms < 0 else "") + format_clock(seconds)
