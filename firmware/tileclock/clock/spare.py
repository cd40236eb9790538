"""A spare clock takes over a dead clock's game (issue 40): two pure halves.

`handover(records, rules)`, at the hall: from its copy of the dead clock's records (oldest first),
what its last game stands at as of the newest record (`Handover`): each side's time used (exact
to the ms the records carry), its limit (its starting time and every correction), its late-start
penalty, who played first, whose clock ran, and the board's call to the director still open
there (if any). It fits one `takeover` command (wire/protocol.py).

`take_over(game, t_ns, handover)`, at the spare: its fresh game is made to stand exactly there,
stopped (as after a STOP press: the next press resumes), the open call still open on it (its
id the dead clock's `call` seq, so the page answers it on the spare). The time the dead clock was down is
given to no one: the director gives it back with the usual correction, never silently.
"""

from dataclasses import dataclass

from ..wire.records import SIDES
from .calls import Calls, OpenCall
from .history import last_game, rebuild, record_instant_ns
from .play import Refused
from .state import State
from .timecode import NS_PER_MS, ms


@dataclass(frozen=True)
class Handover:
    """A game as the hall hands it to a spare: `clock` and `seq` (the dead clock and its newest
    record's seq the game continues from), `game` (the seq of its `new_game`), and per side
    `used_ms`, `limit_ms` and `late_pen` ({side: int}), `first` and `run` (a side or None), and
    `call`: the board's open call (a `calls.OpenCall`) or None."""

    clock: str
    seq: int
    game: int
    used_ms: dict
    limit_ms: dict
    late_pen: dict
    first: str | None = None
    run: str | None = None
    call: OpenCall | None = None


class NoGame(ValueError):
    """Records that hold no game a spare can take up (none, or one that has ended)."""


def handover(clock, records, rules):
    """The last game of `clock`'s `records` (dicts, oldest first) as a `Handover`; NoGame if the
    records hold none, or it has ended (there is nothing left to play)."""
    game = last_game(records)
    if game is None:
        raise NoGame(f"{clock}: no game in its records")
    state = rebuild(game.records, 0, rules)
    if state.state == State.ENDED:
        raise NoGame(f"{clock}: its game (seq {game.seq}) has ended")
    newest = game.records[-1]
    calls = Calls()
    calls.rebuild(game.records)  # a call open as the game opened is carried in its `new_game`
    at_ns = record_instant_ns(newest)
    return Handover(
        clock,
        newest["seq"],
        game.seq,
        {side: ms(state.used_ns(side, at_ns)) for side in SIDES},
        {side: ms(state.allowance_ns[side]) for side in SIDES},
        {side: state.late_pen[side] for side in SIDES},
        state.first,
        state.run,
        calls.open,
    )


def take_over(game, t_ns, taken):
    """Make `game` (a fresh `GameState`) stand where `taken` (a `Handover`) ends, stopped, at
    `t_ns`; Refused unless the game is fresh (nobody has pressed, no late start)."""
    if game.state != State.READY or game.absent or game.round_start_ns is not None:
        raise Refused(f"takeover only on a fresh game ({game.state}): start a new game first")
    used = {side: taken.used_ms[side] * NS_PER_MS for side in SIDES}
    limits = {side: taken.limit_ms[side] * NS_PER_MS for side in SIDES}
    game.take_over(t_ns, used, limits, taken.late_pen, taken.first)


def command(taken):
    """The director's `takeover` command for `taken` (without its CRC; wire/protocol.py)."""
    sides = " ".join(
        f"{side}={taken.used_ms[side]}:{taken.limit_ms[side]}:{taken.late_pen[side]}" for side in SIDES
    )
    picks = "".join(f" {key}={value}" for key, value in (("first", taken.first), ("run", taken.run)) if value)
    if taken.call is not None:  # its seq and state: the time of day it was raised would not fit the line
        picks += f" call={taken.call.seq}:{'taken' if taken.call.taken else 'called'}"
    return f"takeover {taken.clock} {taken.seq} {taken.game} {sides}{picks}"


def record_fields(taken):
    """The `takeover` record's own fields for `taken` (a `Handover`), with its open call's as a
    `new_game` carries them (calls.py)."""
    call = taken.call
    carried = {} if call is None else {"call": call.seq, "call_taken": call.taken}
    if call is not None and call.wall_ms is not None:
        carried["call_wall_ms"] = call.wall_ms
    return {
        "from": taken.clock,
        "from_seq": taken.seq,
        "from_game": taken.game,
        "limit_ms": dict(taken.limit_ms),
        "first": taken.first,
        "was_running": taken.run,
        **carried,
    }
