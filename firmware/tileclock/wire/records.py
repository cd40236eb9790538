"""The clock's records: every event and its fields, declared once, and their one encoder and decoder.

Every consumer (journal, serial link, simulator output, tests, director tools)
writes records through `encode` and reads them back through `decode` (the
framed form through `protocol.unframe`, which ends in `decode`), so a record
has one text form and one check: the decoder's limits (`decoder.py`), then
this module's schema of its event (`schema.py`).
"""

import json
import re
from dataclasses import dataclass, field

from .decoder import LIMITS, Reason, WireError, load
from .labels import is_label
from .schema import BASIC, ListOf, Nullable, Obj, check_fields, integer, natural

SIDES = ("A", "B")
#: a director's settings per side (`set speech=`, `set large=`): each "A", "B", "AB" or "" in a
#: record, held from then on through new games and restarts (clock/scene.py)
SIDE_SETTINGS = ("speech", "large")
BUTTONS = ("A", "B", "STOP")
STATES = ("ready", "running", "paused", "ended")
#: what a panel shows of a side's time: `25:00`, `0:07`, `-1:23` (docs/screens.md)
DISPLAY_TIME = re.compile(r"-?\d{1,4}:\d\d")


class RecordError(WireError):
    """A line that is JSON but not a record this clock could have written: `reason` (a
    `decoder.Reason`) says which check failed, the message says why."""


# --- field kinds: each a name for messages and a test of a decoded JSON value

_integer, _natural = integer, natural

#: A time of day a clock or a director may give (ms since 1970, UTC): 2020 to 2100. Outside it, a
#: wall clock is unset or the number forged, and a call's wait counted from it would be years off.
TIME_OF_DAY_MS = (1_577_836_800_000, 4_102_444_800_000)


def is_time_of_day(value):
    """Whether `value` is a time of day in `TIME_OF_DAY_MS` (an integer, not a bool)."""
    return _integer(value) and TIME_OF_DAY_MS[0] <= value <= TIME_OF_DAY_MS[1]


KINDS = {
    **BASIC,
    "label": is_label,
    "display_time": lambda value: isinstance(value, str) and DISPLAY_TIME.fullmatch(value) is not None,
    "side": lambda value: value in SIDES,
    "side_or_both": lambda value: value in SIDES or value == "both",
    "speech_sides": lambda value: value in ("", "A", "B", "AB"),
    "button": lambda value: value in BUTTONS,
    "sides_ms": lambda value: isinstance(value, dict) and all(_natural(value.get(side)) for side in SIDES),
    "some_sides_ms": lambda value: (
        isinstance(value, dict) and value and all(side in SIDES and _natural(v) for side, v in value.items())
    ),
    "state": lambda value: value in STATES,
    "run": lambda value: value is None or value in SIDES,
    "call_answer": lambda value: value in ("taken", "done"),
    "selftest_result": lambda value: value in ("pass", "fail", "cancelled"),
    "time_of_day_2020_to_2100": is_time_of_day,
    "seqs": lambda value: isinstance(value, list) and len(value) == 2 and all(map(_natural, value)),
}

#: One side in an `end` record's summary (docs/protocol.md): what the director's tools rely on,
#: then what a newer clock adds (an older clock's summary may lack those).
_SUMMARY_SIDE = Obj(
    {
        "used_ms": "int",
        "pen": "int",
        "shown": "display_time",
        "overtime_s": "int",
        "turns": "int",
        "lost_on_time": "bool",
    },
    {
        "start_ms": "int",
        "corrections_ms": "int",
        "overtime_pen": "int",
        "late_pen": "int",
        "absent_ms": "int",
        "lost_absent": "bool",
    },
)
#: An `end` record's summary: the game's result, as `clock/accounting.py` makes it.
SUMMARY = Obj(
    {
        "A": _SUMMARY_SIDE,
        "B": _SUMMARY_SIDE,
        "stopped_ms": "int",
        "corrections": ListOf(Obj({"player": "side", "delta_ms": "int", "t_ms": "int"})),
    },
    {
        "reason": "str_or_null",
        "forfeit": Nullable(Obj({"player": "side_or_both", "reason": "str"})),
        "first": Nullable("side"),
        "shared_ms": "int",
        "round": "natural_or_null",
        "table": "str_or_null",
        "wall_start_ms": "natural_or_null",
        "wall_end_ms": "natural_or_null",
    },
)


@dataclass(frozen=True)
class Event:
    """One kind of record: its name, the fields it always carries and those it may carry (name -> kind)."""

    name: str
    fields: dict = field(default_factory=dict)
    optional: dict = field(default_factory=dict)


def _events(*events):
    return {event.name: event for event in events}


_SELFTEST_BUTTON = Obj({"answer_ms": "natural_or_null", "held_ms": "natural_or_null", "chatter": "natural"})
#: A `selftest` record's buttons: what each answered.
SELFTEST_BUTTONS = Obj(dict.fromkeys(BUTTONS, _SELFTEST_BUTTON))

#: Where a game sits in the tournament (scene.py): on `new_game`, `end` and `set` records.
_SCENE = {"round": "natural_or_null", "table": "str_or_null", "wall_ms": "natural_or_null"}

#: Who asked for a director's request (a page session, a tool: a label), on the record it made.
_BY = {"by": "label"}

#: Every event a clock writes, with its own fields (docs/protocol.md). `at_ns` (the exact instant, in
#: ns since the game's start) is on every record that starts or stops a clock: see `TRANSITIONS`.
EVENTS = _events(
    Event(
        "boot",
        {},
        # `hw_id`: the id the Pi's serial makes, where the config names the clock otherwise
        {
            "board": "str",
            "firmware": "str",
            "rules": "str",
            "protocol": "int",
            "boot_id": "str",
            "hw_id": "str",
        },
    ),
    Event(
        "new_game",
        {"rules": "str", "time_ms": "sides_ms"},
        # `call`, `call_taken`, `call_wall_ms`: the board's call to the director still open as the game opens
        {
            "mono_ns": "int",
            "boot_id": "str",
            "rules_set": "dict",
            "call": "natural",
            "call_taken": "bool",
            "call_wall_ms": "time_of_day_2020_to_2100",
            **_SCENE,
            # who hears the clock, who has large digits, while a director's `set` holds (clock/scene.py)
            "speech": "speech_sides",
            "large": "speech_sides",
            "source": "str",  # a director's `new game`: the way it came, and who asked
            **_BY,
        },
    ),
    # a side's press runs the other side: the side pressed and the side that runs are each A or B
    Event("start", {"button": "side", "run": "side"}),
    Event("switch", {"button": "side", "run": "side"}, {"arrived": "side"}),
    Event("resume", {"button": "side", "run": "side"}),
    Event("pause", {"button": "button"}, {"arrived": "side"}),
    Event("late_start", {"player": "side_or_both"}, {"button": "button", "source": "str", **_BY}),
    Event("arrived", {"player": "side", "button": "button"}),
    Event("ignored", {"button": "button", "reason": "str"}),
    Event("overtime", {"player": "side"}),
    Event("penalty", {"player": "side", "kind": "str"}),
    Event("forfeit", {"player": "side_or_both", "reason": "str"}),
    Event("adjust", {"player": "side", "delta_ms": "int"}, {"source": "str", **_BY}),
    Event("end", {"reason": "str", "summary": SUMMARY}, {"supersedes": "natural", **_SCENE, **_BY}),
    Event("reopen", {"source": "str"}, {"reopens": "natural", **_BY}),
    # a spare took over a dead clock's game (clock/spare.py): the clock, its newest record's seq
    # the game continues from, `from_game` (its `new_game`'s seq there), each side's limit
    Event(
        "takeover",
        {"from": "label", "from_seq": "natural", "from_game": "natural", "limit_ms": "sides_ms"},
        {
            "first": "run",
            "was_running": "run",
            "source": "str",
            "call": "natural",
            "call_taken": "bool",
            "call_wall_ms": "time_of_day_2020_to_2100",
            **_BY,
        },  # fmt: skip  # one field a line, as the other records' tables
    ),
    # the hall told this clock its game `game_seq` (its `new_game`'s seq) moved to the spare `to`
    # (a `moved` command, after a takeover): the game ends here, no side's time runs on it again
    Event("moved", {"game_seq": "natural", "to": "label"}, {"source": "str", **_BY}),
    # the board calls the director (its id: this record's seq), and the director's answers to it
    # `wall_ms`: the time of day of the call (when the clock knows one): its waiting time counts from
    # it, so one outside 2020-2100 (forged, or an unset wall clock's) refuses the record
    Event("call", {"button": "button"}, {"wall_ms": "time_of_day_2020_to_2100"}),
    Event("call_answer", {"call": "natural", "answer": "call_answer", "source": "str"}, _BY),
    Event(  # a `set` carries only what was set: never a null round, table or time of day
        "set",
        {"applies": "str"},
        {
            "round": "natural",
            "table": "str",
            "wall_ms": "natural",
            "wall_mono_ns": "int",
            "start_wall_ms": "natural_or_null",
            "time_ms": "some_sides_ms",
            # who hears the clock from now on (docs/director-guide.md#speech): "A", "B", "AB" or ""
            "speech": "speech_sides",
            "large": "speech_sides",  # whose panel shows the large-digits face from now on
            # the round's start as a time of day, its instant in the game, how late the command came
            "start_ms": "natural",
            "start_at_ns": "natural",
            "late_ms": "natural",
            "source": "str",
            **_BY,
        },
    ),
    # the round started (a director's `set start=`), at the instant set: `start_ms` its time of day
    Event("round_start", {"start_ms": "natural"}, {"late_ms": "natural"}),
    Event("status"),
    Event("checkpoint"),
    Event(
        "recovered",
        {"reason": "str", "was_running": "run"},
        {"mono_ns": "int", "down_ms": "int", "uncertain_ms": "natural_or_null"},
    ),
    # `holds`: on a refused resend, the seqs the journal still holds (first, last); `refused`, a
    # sealed command refused for its time (`stale`, `before_game`, `unsynchronised`), made at
    # `made_ms`: a word (a label), which the audit trail matches, never a sentence or a page of text
    Event(
        "error",
        {"detail": "str"},
        {
            "line": "str",
            "dropped": "natural",
            "holds": "seqs",
            "refused": "label",
            "made_ms": "natural",
            **_BY,
        },
    ),
    Event("fault", {"part": "str", "detail": "str"}, {"skipped": "seqs", "lost": "seqs", "pruned": "seqs"}),
    Event("fault_cleared", {"part": "str"}),
    # the self-test before a round (clock/selftest.py): `result` `pass`, `fail` or `cancelled`; per
    # button its answer and contact time (null: none) and the chatter seen; `failed`, what failed
    Event(
        "selftest",
        {"result": "selftest_result", "buttons": SELFTEST_BUTTONS, "failed": ListOf("str", 10)},
        {"source": "str", **_BY},
    ),
)

#: Records that start or stop a clock carry `at_ns`, their exact instant, so a restart can rebuild
#: the game to the nanosecond from the journal.
TRANSITIONS = (
    "new_game", "start", "switch", "resume", "pause", "late_start", "arrived", "forfeit", "end", "reopen", "recovered",
    "round_start", "takeover", "moved",
)  # fmt: skip  # one line reads as the list it is

#: Instants a record may carry (`at_ns` on `TRANSITIONS`, `mono_ns` on a game's origin), checked on any record.
_INSTANTS = {"at_ns": "natural", "mono_ns": "int"}
#: The fields every record carries, after its event's own (the order `encode` writes them in).
_COMMON = {"seq": "natural", "ev": "str", "t_ms": "int", "state": "state", "run": "run"}
#: Each side's state, on every record.
_SIDE = Obj({"used_ms": "natural", "shown": "display_time", "pen": "natural"}, {"late_pen": "natural"})
#: Each side's state, and the instants a record may carry (the common fields are checked first, alone).
_RECORD = Obj({"A": _SIDE, "B": _SIDE}, {"clock": "label", **_INSTANTS})
#: The schemas `decode` checks, made once (not once a record)
_COMMON_OBJ = Obj(_COMMON)
_EVENT_OBJ = {name: Obj(event.fields, event.optional) for name, event in EVENTS.items()}


@dataclass(frozen=True)
class SideState:
    """One side as a record reports it."""

    used_ms: int
    shown: str
    #: the whole penalty, and the part of it that is the late penalty
    pen: int
    late_pen: int = 0

    def as_dict(self):
        return {"used_ms": self.used_ms, "shown": self.shown, "pen": self.pen, "late_pen": self.late_pen}


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


def decode(line, limits=LIMITS):
    """The record (a dict) one line of `encode` output stands for, its fields checked.

    `line` may also be an already parsed JSON value. RecordError (a `decoder.WireError`) says what
    is wrong: too large or deep, not JSON, a number out of range, a common field missing or of the
    wrong kind, or a field of a known event missing or wrong. An unknown `ev` (a newer clock's
    event) passes with its common fields checked.
    """
    try:
        record = load(line, limits) if isinstance(line, str | bytes) else line
        if not isinstance(record, dict):
            raise RecordError(Reason.NOT_OBJECT, "not a record (a JSON object)")
        ev = record.get("ev")
        check_fields(record, _COMMON_OBJ, KINDS, ev if isinstance(ev, str) and len(ev) <= 20 else "record")
        where = record["ev"]
        event = _EVENT_OBJ.get(where)
        if event is not None:
            check_fields(record, event, KINDS, where)
        check_fields(record, _RECORD, KINDS, where)
    except RecordError:
        raise
    except WireError as error:
        raise RecordError(error.reason, error.detail, error.field) from None
    return record
