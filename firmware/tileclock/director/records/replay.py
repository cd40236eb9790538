"""`tileclock replay`: what both screens showed at any instant of a recorded game.

The view at an instant is `clock/history.py`'s: the game's state rebuilt from
its records up to then, as the clock itself rebuilds it after a restart.
"""

from ...clock.history import records_to, view_at
from ...clock.timecode import format_clock
from .actions import action_line, clock_actions
from .history import iter_games, iter_records, last_game_records, no_game_at

__all__ = ["describe", "load_game", "pick_game", "view_at", "within_the_game"]


def pick_game(records, game_seq=None):
    """The `Game` starting at `game_seq` (its `new_game` record's seq), or the last game; `records`
    may be a stream: only one game is held at a time."""
    last, starts = None, []
    for game in iter_games(records):
        if game_seq is None:
            last = game
        elif game.seq == game_seq:
            return game
        else:
            starts.append(game.seq)
    if last is not None:
        return last
    if game_seq is None:
        raise ValueError("no game in this log")
    raise ValueError(no_game_at(game_seq, starts))


def load_game(log, game_seq=None):
    """The game `game_seq` (default: the last) of a clock's journal or a game file, reading no
    more of a journal than it needs."""
    records = last_game_records(log) if game_seq is None else None
    return pick_game(records if records is not None else iter_records(log, from_seq=game_seq), game_seq)


def within_the_game(game, at_ms=None, after_seq=None):
    """(at_ms, after_seq, note): an instant past the game's last record becomes that record, and
    `note` says so, with the record the game ended with (and the log's last record, when a later
    one such as a `set` follows the end); the clock is not run on past what was recorded (no
    penalty or forfeit is guessed).
    """
    last, end = game.records[-1], ended_with(game)
    if after_seq is not None and after_seq > last["seq"]:
        past = f"record {after_seq} is past the end of this game"
    elif at_ms is not None and at_ms > last["t_ms"]:
        past = f"{format_clock(at_ms // 1000)} is past the end of this game"
    else:
        return at_ms, after_seq, None
    if end is None:
        where = f"its last record is {last['seq']}, at {instant(last['t_ms'])} (no end was recorded)"
    else:
        where = f"it ended at {instant(end['t_ms'])} (record {end['seq']})"
        if end is not last:
            where += f"; the log's last record is {last['seq']} ({last['ev']}), at {instant(last['t_ms'])}"
    return None, last["seq"], f"{past}: {where}"


def ended_with(game):
    """The `end` record the game ended with (its last, unless it was reopened after), or None."""
    for record in reversed(game.records):
        if record["ev"] in ("end", "reopen"):
            return record if record["ev"] == "end" else None
    return None


def instant(t_ms):
    """A game time to the millisecond: `0:09.005`."""
    return f"{format_clock(t_ms // 1000)}.{t_ms % 1000:03d}"


def describe(view, record, at_ms, game=None):
    """Plain text: the instant, the record it follows, and both sides as their screens showed them;
    with the `game`, also the board's open call and the director's actions up to that record, in
    place (each with the way it came and who asked)."""
    # a game a spare took over holds two clocks' records: a seq is named with its clock's id
    two = game is not None and len({r.get("clock") for r in game.records}) > 1
    whose = f"clock {record.get('clock')}'s " if two else ""
    lines = [
        f"at {instant(at_ms)} of the game, after {whose}record {record['seq']} "
        f"({record['ev']} at {record['t_ms']} ms): {view.state}"
    ]
    for side in "AB":
        mine = view.side(side)
        notes = [
            note
            for note, on in (("running", view.run == side), ("late", mine.late), ("lost on time", mine.lost))
            if on
        ]
        lines.append(
            f"  {side}: {mine.shown:>7}  penalty {mine.pen:3d}  used {mine.used_ms} ms  {' '.join(notes)}"
        )
    if view.call:
        lines.append("  a call to the director is open" + (": taken" if view.call == "taken" else ""))
    actions = clock_actions(records_to(game.records, record) if game else [])
    if actions:
        lines.append("the director's actions and calls so far:")
        lines.extend(f"  {action_line(action)}" for action in actions)
    return "\n".join(lines)
