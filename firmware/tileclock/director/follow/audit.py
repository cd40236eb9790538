"""The director's audit trail: every action the director takes, on file, and what became of it
(docs/hall.md, "The audit trail").

One JSON object a line in `audit.log` in the records folder, written (and flushed to the disk)
before the action leaves for the clocks, so an action is never done without its line. Each line
says when (`at`, UTC, and `wall_ms`), from where (`by`: the page session, such as `page-7q4k2m`,
or the tool; `addr`: the browser's address), what (`action` and the `command` line sent), to whom
(`clock`, `board`, `table`, `round`, as the hall knew them then) and what it changed (`changed`:
the side and amount of a correction, the call answered, and each side's time as the board showed
it just before, `before`).

An action a clock answers has an id, `id`: its `by` and its line's number in `audit.log`
(`page-7q4k2m_12`, a label), sent to the clock as the command's `by=`, so the clock's record of it
(or its `error` refusing it) names that one action. When that answer reaches the hall, an
`outcome` line follows: `of` the action, at `clock`, `applied` (the record's `seq` and `ev`, both
times after it) or `refused` (the clock's `reason`). An action with no outcome line had no answer
(yet); `online` says whether its clock was heard online when it was sent (a command to an offline
clock is lost: commands are never kept for a clock away).

`read(folder)` reads it back through the one decoder (`wire/director_files.py`), a line at a time,
each within the decoder's size limit, keeping at most the newest `MAX_READ` actions (a huge or
hostile file costs time, never memory): a line it refuses (damaged, huge, nested, of another
shape) is skipped and counted, never fatal. Each action comes with its `outcomes` by clock;
`table_history` is a table's (or a clock's) actions, each with what became of it there, beside
what its clock recorded.
"""

import collections
import json
import os
import re
import threading
import time
from datetime import UTC, datetime

from ...wire.decoder import Reason, WireError
from ...wire.director_files import ACTIONS, AUDIT_LIMITS, decode_audit_line
from ...wire.labels import is_label
from ..records.actions import clock_actions

__all__ = [
    "ACTIONS",
    "FILE",
    "MAX_READ",
    "AuditLog",
    "concerns",
    "outcome_of",
    "read",
    "session_label",
    "table_history",
]

FILE = "audit.log"
#: the most actions `read` keeps (the newest); a table's history asks for fewer
MAX_READ = 5000
#: the most refused lines `read` lists (it counts them all in `refused_count`)
MAX_REFUSED = 100
#: an action's id: who asked, `_`, the number of its line in audit.log
ACTION_ID = re.compile(r"([A-Za-z0-9][A-Za-z0-9_-]*)_([0-9]{1,14})")
#: the clock's records that answer an action sent with its id (docs/protocol.md: `by`)
ANSWERS = ("adjust", "late_start", "reopen", "end", "set", "call_answer", "new_game", "error")
_CHUNK = 1 << 20
_SKIP = 1 << 16


class AuditLog:
    """The audit trail in `folder` (the hall's `--out`), appended to from any thread."""

    def __init__(self, folder, clock=time.time):
        self.path = os.path.join(folder, FILE)
        self.clock = clock
        self._lock = threading.Lock()
        self._lines = None  # lines in the file (counted at the first write)
        self._answered = set()  # (action id, clock) whose outcome is written, this run

    def record(
        self, action, by, addr=None, command=None, clock=None, board=None, changed=None, answered=False
    ):
        """Write one action's line (flushed and synced) and return it as a dict. `board` is the
        page's view of the clock (a `Board.as_dict`), for its board, table, round, times and
        whether it was online. An action that is `answered` (by its clock, or the score book) is
        given an id, and its `command` ends in `by=` that id: send the returned `command`."""
        entry = self._stamped(by)
        entry.update(addr=addr, action=action, command=command, clock=clock)
        if board:
            entry.update(board=board.get("board"), table=board.get("table"), round=board.get("round"))
            if "A" in board or "B" in board:
                entry["before"] = {side: (board.get(side) or {}).get("shown") for side in "AB"}
        if clock not in (None, "all") and answered:
            entry["online"] = bool(board and board.get("online", True))
        entry["changed"] = changed or {}
        return self._write(entry, answered)

    def outcome(self, of, clock, outcome, seq=None, ev=None, reason=None, after=None):
        """Write what became of the action `of` (its id) at `clock`: `applied` (the record `seq`,
        of event `ev`, both times `after` it) or `refused` (`reason`); returns the line (a dict)."""
        match = ACTION_ID.fullmatch(of)
        entry = self._stamped(match.group(1) if match else of)
        entry.update(action="outcome", of=of, clock=clock, outcome=outcome)
        said = {"seq": seq, "ev": ev, "reason": reason and reason[:300], "after": after}
        entry.update({key: value for key, value in said.items() if value is not None})
        entry["changed"] = {}
        self._answered.add((of, clock))
        return self._write(entry)

    def answered(self, clock, record):
        """A record stored from `clock`: if it answers an action sent with an id (its `by`), and
        is the first answer heard of that action there, write its outcome line; else None."""
        by = record.get("by")
        if record.get("ev") not in ANSWERS or not isinstance(by, str) or not ACTION_ID.fullmatch(by):
            return None
        if (by, clock) in self._answered:
            return None  # an adjust after the end also makes an `end`: the first answer says it
        if record["ev"] == "error":
            return self.outcome(by, clock, "refused", record.get("seq"), "error", str(record.get("detail")))
        after = {side: (record.get(side) or {}).get("shown") for side in "AB"}
        return self.outcome(by, clock, "applied", record.get("seq"), record["ev"], after=after)

    def _stamped(self, by):
        now = self.clock()
        return {
            "at": datetime.fromtimestamp(now, UTC).isoformat(timespec="milliseconds"),
            "wall_ms": int(now * 1000),
            "by": by,
        }

    def _write(self, entry, with_id=False):
        with self._lock:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            with open(self.path, "a+b") as out:
                if self._lines is None:
                    self._lines = _count_lines(out)
                self._lines += 1
                if with_id:
                    suffix = f"_{self._lines}"
                    entry["id"] = entry["by"][: 32 - len(suffix)] + suffix
                    if entry.get("command"):
                        entry["command"] = f"{entry['command']} by={entry['id']}"
                out.write(json.dumps(entry, separators=(",", ":")).encode() + b"\n")
                out.flush()
                os.fsync(out.fileno())
        return entry


def _count_lines(out):
    """The lines in the open file `out`, read a chunk at a time; a last line cut off (a power cut
    mid-write) is ended, so the next line starts on its own."""
    out.seek(0)
    lines, last = 0, b"\n"
    while chunk := out.read(_CHUNK):
        lines += chunk.count(b"\n")
        last = chunk[-1:]
    if last != b"\n":
        out.write(b"\n")
        lines += 1
    return lines


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


def session_label(text):
    """The page session's label from the browser's header (`page-` and up to 12 of its letters), or
    `page` when it sent none that is one."""
    text = (text or "")[:12]
    return f"page-{text}" if text and is_label(text) else "page"


def outcome_of(entry, clock, online=True):
    """What became of the action `entry` (a line from `read`) at `clock`, for a director: a dict
    with `state` (`applied`, `refused`, `no answer yet`, `clock offline`) and, when the clock
    answered, its record's `seq` and the `reason` of a refusal; None for an action no clock
    answers (a state cleared, a link made)."""
    if not entry.get("id"):
        return None
    answer = entry.get("outcomes", {}).get(clock)
    if answer is not None:
        said = {"state": answer["outcome"], "seq": answer.get("seq"), "at": answer.get("at")}
        return {**said, "reason": answer.get("reason")} if answer.get("reason") else said
    if entry.get("online") is False:
        return {"state": "clock offline", "reason": "the clock was offline when it was sent: it never got it"}
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
    if entry.get("clock") in (None, "all") and entry.get("action") == "round_start":
        boards = (entry.get("changed") or {}).get("boards")
        return board is None or not isinstance(boards, list) or str(board) in map(str, boards)
    return (
        (clock is not None and entry.get("clock") == clock)
        or (table is not None and str(entry.get("table")) == str(table))
        or (entry.get("clock") in (None, "all") and entry.get("action") == "round_over")
    )
