"""Calls to the director: raised at the board, answered from the director's page (docs/hall.md).

A call belongs to the board, not to a game: a call still open when a new game starts is carried
into it (its `new_game` record names it), and one open on a dead clock whose game a spare takes
over is carried to the spare (its `takeover` record names it: clock/spare.py), so a restart that takes up only the last game still knows
it. A call's id is the seq of its `call` record; its `wall_ms`, the time of day it was raised (by
the clock's wall clock, when it knows one), is carried with it (`call_wall_ms`), so its waiting
time counts from the raise whatever restarts or games come between. One call is open at a time;
the director answers it `taken` (on the way) and then `done`, or `done` at once. Nothing here touches the game: a call
and its answers never change a side's time or the game's state.
"""

from dataclasses import dataclass

from ..wire.records import is_time_of_day

#: what a director may answer a call, in the order it may answer
ANSWERS = ("taken", "done")


@dataclass(frozen=True)
class OpenCall:
    """The call the board waits on: its `call` record's seq, whether the director has taken it, and
    the time of day it was raised (ms since 1970, UTC), if the clock knew one."""

    seq: int
    taken: bool = False
    wall_ms: int | None = None


class Calls:
    """The board's open call, if any, kept from the records that raise and answer it."""

    def __init__(self):
        self.open = None

    def raised(self, seq, wall_ms=None):
        """A call was raised with record `seq`, at time of day `wall_ms` (or unknown)."""
        self.open = OpenCall(seq, False, _time_of_day(wall_ms))

    def refusal(self, call, answer):
        """Why `answer` to call `call` may not be recorded now (it names no open call, or says
        nothing new), or None: the clock refuses it with that (`play.Refused`)."""
        if answer not in ANSWERS:
            return f"call: {answer!r} is no answer (taken, done)"
        if self.open is None or self.open.seq != call:
            now = f"call {self.open.seq} is" if self.open else "no call is"
            return f"call {call} is not open ({now})"
        if answer == "taken" and self.open.taken:
            return f"call {call} is already taken"
        return None

    def answered(self, answer):
        """The open call was answered `answer` (checked)."""
        self.open = OpenCall(self.open.seq, True, self.open.wall_ms) if answer == "taken" else None

    def shown(self):
        """What the panels mark: `called` (waiting), `taken` (the director is on the way), or None."""
        if self.open is None:
            return None
        return "taken" if self.open.taken else "called"

    def carried(self):
        """The fields a `new_game` record carries of a call still open."""
        if self.open is None:
            return {}
        raised = {} if self.open.wall_ms is None else {"call_wall_ms": self.open.wall_ms}
        return {"call": self.open.seq, "call_taken": self.open.taken, **raised}

    def take(self, record):
        """Take one record of the journal up again (after a restart), oldest first."""
        ev = record.get("ev")
        if ev == "call":
            self.raised(record["seq"], record.get("wall_ms"))
        elif ev == "call_answer" and self.open is not None and record.get("call") == self.open.seq:
            self.answered(record.get("answer"))
        elif ev == "takeover" and isinstance(record.get("call"), int):  # the dead clock's open call
            taken, raised = bool(record.get("call_taken")), record.get("call_wall_ms")
            self.carry(OpenCall(record["call"], taken, raised))
        elif ev == "new_game":
            call = record.get("call")
            taken, raised = bool(record.get("call_taken")), _time_of_day(record.get("call_wall_ms"))
            self.open = OpenCall(call, taken, raised) if isinstance(call, int) else None

    def carry(self, call):
        """`call` (an `OpenCall`, a dead clock's a spare takes over) is the board's open call now."""
        self.open = OpenCall(call.seq, call.taken, _time_of_day(call.wall_ms))

    def rebuild(self, records):
        """The open call as `records` (the journal's, oldest first) leave it."""
        self.open = None
        for record in records:
            self.take(record)


def _time_of_day(wall_ms):
    """`wall_ms` if it is a time of day (2020 to 2100, as the decoder holds it), else None: never a
    wrong one."""
    return wall_ms if is_time_of_day(wall_ms) else None
