"""The director's audit trail: every action the director takes, on file (docs/hall.md, "The audit trail").

One JSON object a line in `audit.log` in the records folder, written (and flushed to the disk)
before the action leaves for the clocks, so an action is never done without its line. Each line
says when (`at`, UTC, and `wall_ms`), from where (`by`: the page session, such as `page-7q4k2m`,
or the tool; `addr`: the browser's address), what (`action` and the `command` line sent, with its
`by=`), to whom (`clock`, `board`, `table`, `round`, as the hall knew them then) and what it
changed (`changed`: the side and amount of a correction, the call answered, and each side's time
as the board showed it just before, `before`). The clock's own record of the same action carries
the same `by` (docs/protocol.md), so the two are matched by it.

`read(folder)` reads it back through the one decoder (`wire/director_files.py`): a line it refuses
(damaged, huge, nested, of another shape) is skipped and counted, never fatal; `table_history` is a
table's (or a clock's) actions merged with what its clock recorded.
"""

import json
import os
import threading
import time
from datetime import UTC, datetime

from ...wire.decoder import WireError
from ...wire.director_files import ACTIONS, decode_audit_line
from ...wire.labels import is_label
from ..records.actions import clock_actions

__all__ = ["ACTIONS", "FILE", "AuditLog", "read", "session_label", "table_history"]

FILE = "audit.log"


class AuditLog:
    """The audit trail in `folder` (the hall's `--out`), appended to from any thread."""

    def __init__(self, folder, clock=time.time):
        self.path = os.path.join(folder, FILE)
        self.clock = clock
        self._lock = threading.Lock()

    def record(self, action, by, addr=None, command=None, clock=None, board=None, changed=None):
        """Write one action's line (flushed and synced) and return it as a dict. `board` is the
        page's view of the clock (a `Board.as_dict`), for its board, table, round and times."""
        now = self.clock()
        entry = {
            "at": datetime.fromtimestamp(now, UTC).isoformat(timespec="milliseconds"),
            "wall_ms": int(now * 1000),
            "by": by,
            "addr": addr,
            "action": action,
            "command": command,
            "clock": clock,
        }
        if board:
            entry.update(board=board.get("board"), table=board.get("table"), round=board.get("round"))
            entry["before"] = {side: (board.get(side) or {}).get("shown") for side in "AB"}
        entry["changed"] = changed or {}
        line = json.dumps(entry, separators=(",", ":"))
        with self._lock:
            os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(line + "\n")
                out.flush()
                os.fsync(out.fileno())
        return entry


def read(folder, refused=None):
    """Every action in `folder`'s audit.log, oldest first. A line the one decoder refuses is
    skipped; `refused` (a list), if given, gets (line number, WireError) for each."""
    path = os.path.join(folder, FILE)
    try:
        with open(path, "rb") as source:
            lines = source.readlines()
    except FileNotFoundError:
        return []
    entries = []
    for number, line in enumerate(lines, 1):
        try:
            entries.append(decode_audit_line(line.rstrip(b"\r\n")))
        except WireError as error:
            if refused is not None:
                refused.append((number, error))
    return entries


def session_label(text):
    """The page session's label from the browser's header (`page-` and up to 12 of its letters), or
    `page` when it sent none that is one."""
    text = (text or "")[:12]
    return f"page-{text}" if text and is_label(text) else "page"


def table_history(entries, records, clock=None, table=None):
    """A table's history for the page: the audit trail's actions for `clock` (or at `table`),
    newest first, and what the clock recorded of them (`clock_actions`)."""
    mine = [
        entry
        for entry in entries
        if (clock is not None and entry.get("clock") == clock)
        or (table is not None and str(entry.get("table")) == str(table))
        or (entry.get("clock") in (None, "all") and entry.get("action") in ("round_start", "round_over"))
    ]
    return {"actions": list(reversed(mine)), "recorded": list(reversed(clock_actions(records or [])))}
