"""The director's own files: the names of those beside the board folders under `--out`, and, read
back, the audit trail's lines (`audit.log`) and the round the page started (`round.json`), both in
the hall's records folder (docs/hall.md).

They are the director's own writing, but a folder on a laptop is anyone's to edit, copy from
another event or damage in a power cut, so they are read as everything from outside is: by the
one decoder (`decoder.load`: size, text, nesting, numbers), then held to a schema here. A refusal
is a `WireError` with its reason; what to do with it is the reader's (a line skipped, a file kept
aside).
"""

import re

from .decoder import Limits, Reason, WireError, load_object
from .labels import is_label
from .schema import BASIC, ListOf, Nullable, Obj, check_fields

#: the actions an audit line may name (the page's and the tools')
#: the files beside the board folders under `--out` that hold no game (readers of the folder leave
#: them alone)
REJECTS, NOTICES, RESULTS = "rejects.log", "notices.log", "results.csv"
#: the director's audit trail, in the hall's records folder (director/hall/audit.py)
AUDIT = "audit.log"
SIDE_FILES = (REJECTS, NOTICES, RESULTS, AUDIT)

ACTIONS = (
    "adjust",
    "late",
    "reopen",
    "round_over",
    "set",
    "round_start",
    "call",
    "clear",
    "score",
    "lock",
    "unlock",
    "link",
    "new_game",
    "outcome",
    "move",  # a dead clock's game moved to a spare (director/hall/spare.py)
    "speech",  # who hears a clock: its `set speech=` (director/pages/board_routes.py)
    "large",  # whose panel shows the large-digits face: its `set large=` (likewise)
    "selftest",  # the panels' and buttons' check before a round, on one board or every board
    "moved",  # the hall tells the dead clock, heard again, that its game moved (hall/spare.py)
    "late_records",  # the hall's: a dead clock's late presses, time the spare does not know (likewise)
    "tsh_queue",  # the hall's own: a game put into TSH's remote queue, or the queue's failure
    # an action sent again with a one-time value already used: refused, not done (pages/once.py;
    # a hall older than this one skips the line)
    "replay",
)
#: what became of an action (an `outcome` line): the clock (or the score book) did it, or refused
#: it, or it never reached the game it was for (the clock was offline when it was sent, or refused
#: it as stale: a hall older than this one skips such a line, reading the action as unanswered)
OUTCOMES = ("applied", "refused", "not_delivered")
#: one audit line: an honest one is under 600 bytes, nested 3 deep (`changed` holds a table's scores)
AUDIT_LIMITS = Limits(max_bytes=8 * 1024, max_depth=4, max_int_digits=16)
#: the saved round: a few hundred boards' names at most
ROUND_LIMITS = Limits(max_bytes=64 * 1024, max_depth=2, max_int_digits=16)
#: the most boards a round names (a large hall has a few hundred)
MAX_BOARDS = 1000
#: the saved round's format; another is refused (kept aside), never guessed at
ROUND_VERSION = 1
_TIME_OF_DAY = re.compile(r"\d\d:\d\d:\d\d")
_AT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?(\+00:00|Z)?")


def _short(limit):
    return lambda value: isinstance(value, str) and len(value) <= limit


KINDS = {
    **BASIC,
    "label": is_label,
    "label_or_null": lambda value: value is None or is_label(value),
    "where": lambda value: value is None or is_label(value) or (BASIC["natural"](value) and value <= 9999),
    "clock_or_all": lambda value: value is None or is_label(value),  # "all" is a label too
    "action": lambda value: value in ACTIONS,
    "at": lambda value: isinstance(value, str) and _AT.fullmatch(value) is not None,
    "addr_or_null": lambda value: value is None or _short(64)(value),
    "command_or_null": lambda value: value is None or _short(1000)(value),
    "shown_or_null": lambda value: value is None or _short(16)(value),  # as the page showed it
    "round": lambda value: BASIC["natural"](value) and 1 <= value <= 99,
    "time_of_day": lambda value: isinstance(value, str) and _TIME_OF_DAY.fullmatch(value) is not None,
    "ms": lambda value: BASIC["natural"](value) and value < 10**14,
    "outcome": lambda value: value in OUTCOMES,
    "ev_or_null": lambda value: value is None or _short(16)(value),
    "reason_or_null": lambda value: value is None or _short(300)(value),
}
_SIDES_SHOWN = Obj({}, {"A": "shown_or_null", "B": "shown_or_null"})

AUDIT_LINE = Obj(
    {
        "at": "at",
        "wall_ms": "ms",
        "by": "label",
        "action": "action",
        "changed": "dict",
    },
    {
        "addr": "addr_or_null",
        "command": "command_or_null",
        "clock": "clock_or_all",
        "board": "where",
        "table": "where",
        "round": Nullable("natural"),
        "before": _SIDES_SHOWN,
        # the action's id (`by`, the hall's run and a count), sent as the command's `by=`; whether its
        # clock was heard online when it was sent (a command to an offline clock is lost)
        "id": "label",
        "online": "bool",
        # an `outcome` line: what became of the action `of` at `clock`, as its record (`seq`, `ev`)
        # or its refusal (`reason`) says; `after`: both times as that record has them
        "of": "label",
        "outcome": "outcome",
        "seq": "natural",
        "ev": "ev_or_null",
        "reason": "reason_or_null",
        "after": _SIDES_SHOWN,
    },
)

ROUND_FILE = Obj(
    {
        "v": "natural",
        "round": "round",
        "start_ms": "ms",
        "start": "time_of_day",
        "boards": ListOf("label", MAX_BOARDS),
        "clocks": ListOf("label", MAX_BOARDS),
    },
    {"over_ms": "ms"},
)


def decode_audit_line(line):
    """One line of `audit.log` (text or bytes), its fields checked: a dict, or WireError."""
    entry = load_object(line, AUDIT_LIMITS)
    check_fields(entry, AUDIT_LINE, KINDS, "audit")
    return entry


def decode_round(data):
    """The saved round (`round.json`'s bytes): a dict of its fields only (its format `v` checked,
    and left out), or WireError."""
    saved = load_object(data, ROUND_LIMITS)
    check_fields(saved, ROUND_FILE, KINDS, "round")
    if saved["v"] != ROUND_VERSION:
        raise WireError(
            Reason.WRONG_KIND, f"round: format {saved['v']} (this hall reads {ROUND_VERSION})", "round.v"
        )
    if len(saved["boards"]) != len(saved["clocks"]) or not saved["boards"]:
        raise WireError(
            Reason.WRONG_KIND, "round: its boards and their clocks do not pair up", "round.boards"
        )
    names = (*ROUND_FILE.fields, *ROUND_FILE.optional)
    return {name: saved[name] for name in names if name in saved and name != "v"}
