"""The audit trail read back (docs/hall.md, "The audit trail"): its actions, what became of each
at each clock, and a table's history for the page. `hall/audit.py` writes it.

`read(folder)` reads it back through the one decoder (`wire/director_files.py`), a line at a time,
each within the decoder's size limit, keeping at most the newest `MAX_READ` actions (a huge or
hostile file costs time, never memory): a line it refuses (damaged, huge, nested, of another
shape) is skipped and counted, never fatal. Each action comes with its `outcomes` by clock;
`outcome_of` says what became of one at a clock; `table_history` is a table's (or a clock's)
actions, each with what became of it there, beside what its clock recorded.
"""

import collections
import os

from ...wire.decoder import Reason, WireError
from ...wire.director_files import AUDIT, AUDIT_LIMITS, decode_audit_line
from ..records.actions import clock_actions

__all__ = ["FILE", "MAX_READ", "MAX_REFUSED", "OFFLINE", "concerns", "outcome_of", "read", "table_history"]

FILE = AUDIT
#: the most actions `read` keeps (the newest); a table's history asks for fewer
MAX_READ = 5000
#: the most refused lines `read` lists (it counts them all in `refused_count`)
MAX_REFUSED = 100
#: the reason of an action's outcome when its clock was heard offline as it was sent
OFFLINE = "the clock was offline when it was sent: it never got it"
_SKIP = 1 << 16


def read(folder, refused=None, keep=None, newest=MAX_READ):
    """The actions in `folder`'s audit.log that `keep(entry)` takes (default: all), oldest first,
    at most the `newest` of them, each with `outcomes` ({clock: its outcome line}). A line the one
    decoder refuses is skipped; `refused` (a list), if given, gets (line number, WireError) for the
    first `MAX_REFUSED` of them."""
    kept = collections.deque()
    by_id = {}
    for number, line in _lines(os.path.join(folder, FILE)):
        try:
            if line is None:
                raise WireError(Reason.TOO_LARGE, f"audit: a line over {AUDIT_LIMITS.max_bytes} bytes")
            entry = decode_audit_line(line)
        except WireError as error:
            if refused is not None and len(refused) < MAX_REFUSED:
                refused.append((number, error))
            continue
        if entry["action"] == "outcome":
            action = by_id.get(entry.get("of"))
            if action is not None and entry.get("clock") not in action["outcomes"]:
                action["outcomes"][entry.get("clock")] = entry
            continue
        if keep is not None and not keep(entry):
            continue
        entry["outcomes"] = {}
        kept.append(entry)
        if entry.get("id"):
            by_id[entry["id"]] = entry
        if len(kept) > newest:
            by_id.pop(kept.popleft().get("id"), None)
    return list(kept)


def _lines(path):
    """(number, bytes) of each line of `path`, without its ending; None for a line over the
    decoder's limit, which is read past, never held."""
    limit = AUDIT_LIMITS.max_bytes
    try:
        source = open(path, "rb")  # noqa: SIM115  (a generator holds it open while read)
    except FileNotFoundError:
        return
    with source:
        number = 0
        while line := source.readline(limit + 2):
            number += 1
            if len(line) > limit + 1:
                while line and not line.endswith(b"\n"):
                    line = source.readline(_SKIP)
                yield number, None
                continue
            yield number, line.rstrip(b"\r\n")


def outcome_of(entry, clock, online=True):
    """What became of the action `entry` (a line from `read`) at `clock`, for a director: a dict
    with `state` (`applied`, `refused`, `not delivered`, `no answer yet`, `clock offline`) and,
    when the clock answered, its record's `seq` and the `reason` of a refusal; None for an action
    no clock answers (a state cleared, a link made)."""
    if not entry.get("id"):
        return None
    outcomes = entry.get("outcomes", {})
    answer = outcomes.get(clock)
    if answer is None and clock is not None:
        answer = outcomes.get(None)  # the hall's own: refused before it was sent (round.json)
    if answer is not None:
        state = answer["outcome"].replace("_", " ")  # not_delivered: "not delivered"
        said = {"state": state, "seq": answer.get("seq"), "at": answer.get("at")}
        return {**said, "reason": answer.get("reason")} if answer.get("reason") else said
    if entry.get("online") is False:  # a trail from before `not_delivered` was written
        return {"state": "not delivered", "reason": OFFLINE}
    if not online:
        return {"state": "clock offline", "reason": "no answer, and the clock is offline now"}
    return {"state": "no answer yet"}


def table_history(entries, records, clock=None, table=None, online=True, board=None):
    """A table's history for the page: the audit trail's actions for `clock` (or at `table`),
    newest first, each with what became of it (`outcome`, at its own clock, or at `clock` for an
    action sent to every clock; `online`: whether `clock` is now; `board`: its board's name), and
    what the clock recorded of them (`clock_actions`, its refusals too)."""
    mine = [entry for entry in entries if concerns(entry, clock, table, board)]
    for entry in mine:
        at = clock if entry.get("clock") == "all" else entry.get("clock")  # None: the score book's
        entry["outcome"] = outcome_of(entry, at, online or at != clock)
        entry.pop("outcomes", None)
    return {
        "actions": list(reversed(mine)),
        "recorded": list(reversed(clock_actions(records or [], refusals=True))),
    }


def concerns(entry, clock, table, board=None):
    """Whether the action `entry` is in the history of `clock` (or of `table`): sent to it, at that
    table, or a round's end, or its start on the boards it names (`board`: this clock's board's
    name, when known; a start not sent to it would read as never answered)."""
    if entry.get("clock") in (None, "all") and entry.get("action") in ("round_start", "new_game"):
        boards = (entry.get("changed") or {}).get("boards")
        return board is None or not isinstance(boards, list) or str(board) in map(str, boards)
    return (
        (clock is not None and entry.get("clock") == clock)
        or (table is not None and str(entry.get("table")) == str(table))
        or (entry.get("clock") in (None, "all") and entry.get("action") == "round_over")
    )
