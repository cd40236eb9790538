"""The clock's records and their one encoder.

Every consumer (serial link, simulator output, tests, director tools) reads and
writes records through `encode` and `decode`, so a record has one text form.
"""

import json
from dataclasses import dataclass, field

SIDES = ("A", "B")
BUTTONS = ("A", "B", "STOP")


@dataclass(frozen=True)
class SideState:
    """One side as a record reports it."""

    used_ms: int
    shown: str
    pen: int

    def as_dict(self):
        return {"used_ms": self.used_ms, "shown": self.shown, "pen": self.pen}


@dataclass(frozen=True)
class Record:
    """Something that happened on the clock, at an exact instant of its game."""

    seq: int
    ev: str
    t_ms: int
    state: str
    run: str | None
    A: SideState
    B: SideState
    extra: dict = field(default_factory=dict)
    #: the id of the clock that made it (the device stamps it; the core knows no identity)
    clock: str | None = None

    def as_dict(self):
        """The record's fields in their documented order."""
        body = {"seq": self.seq} if self.clock is None else {"seq": self.seq, "clock": self.clock}
        body.update(ev=self.ev, t_ms=self.t_ms)
        body.update(self.extra)
        body.update(state=self.state, run=self.run, A=self.A.as_dict(), B=self.B.as_dict())
        return body


def encode(record):
    """One line of compact JSON, without the line ending."""
    return json.dumps(record.as_dict(), separators=(",", ":"))


def decode(line):
    """The dict a line of `encode` output stands for."""
    return json.loads(line)
