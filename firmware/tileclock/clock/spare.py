"""A spare clock takes over a dead clock's game (issue 40): two pure halves.

`handover(records, rules)`, at the hall: from its copy of the dead clock's records (oldest first),
what its last game stands at as of the newest record (`Handover`): each side's time used (exact
to the ms the records carry), its limit (its starting time and every correction), its late-start
penalty, who played first, whose clock ran. It fits one `takeover` command (wire/protocol.py).

`take_over(game, t_ns, handover)`, at the spare: its fresh game is made to stand exactly there,
stopped (as after a STOP press: the next press resumes). The time the dead clock was down is
given to no one: the director gives it back with the usual correction, never silently.
"""

from dataclasses import dataclass

from ..wire.records import SIDES
from .history import last_game, rebuild, record_instant_ns
from .play import Refused
from .state import State
from .timecode import NS_PER_MS, ms


@dataclass(frozen=True)
class Handover:
    """A game as the hall hands it to a spare: `clock` and `seq` (the dead clock and its newest
    record's seq the game continues from), `game` (the seq of its `new_game`), and per side
    `used_ms`, `limit_ms` and `late_pen` ({side: int}), `first` and `run` (a side or None)."""

    clock: str
    seq: int
    game: int
    used_ms: dict
    limit_ms: dict
    late_pen: dict
    first: str | None = None
    run: str | None = None


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
    return f"takeover {taken.clock} {taken.seq} {taken.game} {sides}{picks}"


def record_fields(taken):
    """The `takeover` record's own fields for `taken` (a `Handover`)."""
    return {
        "from": taken.clock,
        "from_seq": taken.seq,
        "from_game": taken.game,
        "limit_ms": dict(taken.limit_ms),
        "first": taken.first,
        "was_running": taken.run,
    }
