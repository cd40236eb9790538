"""The director's audit trail: every action the director takes, on file, and what became of it
(docs/hall.md, "The audit trail").

One JSON object a line in `audit.log` in the records folder, written (and flushed to the disk)
before the action leaves for the clocks, so an action is never done without its line. Each line
says when (`at`, UTC, and `wall_ms`), from where (`by`: the page session, such as `page-7q4k2m`,
or the tool; `addr`: the browser's address), what (`action` and the `command` line sent), to whom
(`clock`, `board`, `table`, `round`, as the hall knew them then) and what it changed (`changed`:
the side and amount of a correction, the call answered, and each side's time as the board showed
it just before, `before`).

An action a clock answers has an id, `id`: its `by`, the hall's run (its start in seconds, base
36, after every run already on the trail) and a count (`page-7q4k2m_t6as9s_12`, a label), sent to
the clock as the command's `by=`, so the clock's record of it (or its `error` refusing it) names
that one action, never one of another run or trail. When that answer reaches the hall from a clock
the action was sent to, an `outcome` line follows, once: `of` the action, at `clock`, `applied`
(the record's `seq` and `ev`, both times after it), `refused` (the clock's `reason`), or
`not_delivered`: the clock was heard offline when it was sent (written with the action's own line:
a command to an offline clock is lost, commands are never kept for a clock away), or it refused
the command as stale or made before its game began (a command it got late, or a replay: it never
reached the game it was for). A clock's later answer to an action not delivered is never written
as applied. The clocks' answers are queued and written by a thread of their own, their syncs
shared; the hall's page has the feed wait for them (`flush`) before it acknowledges the records
that answered, so a kill in between leaves the records to come again, not an answer lost. An action with no outcome line had no answer (yet).

Reading it back (the page, a table's history, this trail's own start) is `hall/audit_read.py`.
"""

import collections
import json
import logging
import os
import queue
import re
import threading
import time
from datetime import UTC, datetime

from ...wire.labels import is_label
from .action_ids import run_label, run_of, targets_of, with_id
from .audit_read import FILE, MAX_READ, OFFLINE, read

__all__ = ["AuditLog", "session_label"]

#: an action's id as the file may hold it: who asked (and the hall's run), `_`, a count
ACTION_ID = re.compile(r"([A-Za-z0-9][A-Za-z0-9_-]*)_([0-9]{1,14})")
#: the clock's records that answer an action sent with its id (docs/protocol.md: `by`)
ANSWERS = (
    "adjust",
    "late_start",
    "reopen",
    "end",
    "set",
    "call_answer",
    "new_game",
    "selftest",
    "takeover",
    "moved",
    "error",
)
#: an `error` record's `refused` (device/links/hall_seal.py) that says the command never reached
#: the game it was for: sent while the clock was away (stale), or for a game gone by
UNDELIVERED = ("stale", "before_game")
#: the actions to several boards whose answers the round panel shows board by board
TO_SEVERAL = ("round_start", "round_over", "new_game")

log = logging.getLogger(__name__)


class AuditLog:
    """The audit trail in `folder` (the hall's `--out`), appended to from any thread. Made once,
    when the hall starts: it reads the file's ids and outcomes (`read`'s newest `MAX_READ`), so an
    id is never handed out twice and an answer resent after a restart is not written again."""

    def __init__(self, folder, clock=time.time):
        self.path = os.path.join(folder, FILE)
        self.clock = clock
        self._lock = threading.Lock()  # the ids and answers: held briefly, never over the disk
        self._file_lock = threading.Lock()  # the file: held over a write and its sync
        self._ended = False  # whether a last line cut off (a power cut mid-write) has been ended
        self._count = 0  # ids handed out this run (a write that fails still uses up its number)
        #: each issued id: (who asked, the clocks it went to: None for every clock)
        self._issued = collections.OrderedDict()
        self._answered = set()  # (action id, clock) whose outcome is written or queued
        runs = set()
        #: the trail's newest round start (an action to every clock: `resume_round` narrows it)
        self.round_started = None
        #: the newest action to several boards (`TO_SEVERAL`, sent to `all`), for the round panel
        self.to_several = None
        #: action id -> {clock: its answer}, for the actions to several boards (`answers_to`)
        self._answers = collections.OrderedDict()
        for entry in read(folder):
            if entry.get("id") and entry["action"] == "round_start":
                self.round_started = entry
            if entry.get("id") and entry["action"] in TO_SEVERAL and entry.get("clock") == "all":
                self.to_several = {k: v for k, v in entry.items() if k != "outcomes"}
                self._keep_answers(entry["id"])
                for at, line in entry["outcomes"].items():
                    self._answers[entry["id"]][at] = _said(line)
            if entry.get("id"):
                self._issue(entry["id"], entry["by"], targets_of(entry.get("clock"), None))
                runs.add(run_of(entry["id"]))
            self._answered.update((entry["id"], clock) for clock in entry["outcomes"])
        self.run = run_label(int(clock()), runs)
        self._queue = queue.SimpleQueue()  # outcome lines for the writer thread
        self._writer = None
        self._pending = 0  # outcome lines queued and not yet on the disk
        self._drained = threading.Condition(self._lock)

    def record(
        self,
        action,
        by,
        addr=None,
        command=None,
        clock=None,
        board=None,
        changed=None,
        answered=False,
        targets=None,
        offline=(),
    ):
        """Write one action's line (flushed and synced) and return it as a dict. `board` is the
        page's view of the clock (a `Board.as_dict`), for its board, table, round, times and
        whether it was online. An action that is `answered` (by its clock, or the score book) is
        given an id, and its `command` ends in `by=` that id: send the returned `command`.
        `targets`: the clocks an action to `all` goes to (None: every clock); only their answers
        to it get an outcome line. An answered action to a clock heard offline (`board`'s
        `online`; for `all`, the clocks in `offline`) gets its outcome, `not_delivered`, with it."""
        entry = self._stamped(by)
        entry.update(addr=addr, action=action, command=command, clock=clock)
        if board:
            entry.update(board=board.get("board"), table=board.get("table"), round=board.get("round"))
            if "A" in board or "B" in board:
                entry["before"] = {side: (board.get(side) or {}).get("shown") for side in "AB"}
        if clock not in (None, "all") and answered:
            entry["online"] = bool(board and board.get("online", True))
        entry["changed"] = changed or {}
        if answered:
            with self._lock:
                self._count += 1  # before the write: a failed one's number is never used again
                suffix = f"_{self.run}_{self._count}"
            entry["id"] = entry["by"][: 32 - len(suffix)] + suffix
            if command:
                entry["command"] = with_id(command, entry["id"])
        away = [] if not answered else [clock] if entry.get("online") is False else list(offline)
        lost = [self._outcome_line(by, entry["id"], at, "not_delivered", reason=OFFLINE) for at in away]
        with self._file_lock:
            self._append([entry, *lost])
        if answered:  # (no answer can come before: its command leaves after this returns)
            with self._lock:
                self._issue(entry["id"], by, targets_of(clock, targets))
                self._answered.update((entry["id"], at) for at in away)
                if action == "round_start":
                    self.round_started = entry
                if clock == "all" and action in TO_SEVERAL:
                    self.to_several = dict(entry, targets=list(targets) if targets is not None else None)
                    self._keep_answers(entry["id"])
                    for line in lost:
                        self._answers[entry["id"]][line["clock"]] = _said(line)
        return entry

    def answers_to(self, action_id):
        """What each clock answered to the action `action_id` (one to several boards): {clock:
        {"outcome": applied / refused / not_delivered, "reason", "seq"}}, as each answer came."""
        with self._lock:
            return {clock: dict(said) for clock, said in self._answers.get(action_id, {}).items()}

    def _keep_answers(self, action_id):
        """A place for the answers to `action_id` (the lock held, or in the constructor)."""
        self._answers[action_id] = {}
        while len(self._answers) > 20:  # the newest few actions to several boards are enough
            self._answers.popitem(last=False)

    def outcome(self, of, clock, outcome, seq=None, ev=None, reason=None, after=None):
        """Write what became of the action `of` (its id) at `clock`: `applied` (the record `seq`,
        of event `ev`, both times `after` it) or `refused` (`reason`), flushed and synced; returns
        the line (a dict). For the hall's own (the score book's): a clock's answer is `answered`."""
        with self._lock:
            issued = self._issued.get(of)
            self._answered.add((of, clock))
        entry = self._outcome_line(issued and issued[0], of, clock, outcome, seq, ev, reason, after)
        with self._file_lock:
            self._append([entry])
        with self._lock:
            if of in self._answers:
                self._answers[of][clock] = _said(entry)
        return entry

    def answered(self, clock, record):
        """A record stored from `clock`: if it answers an action this trail sent to that clock
        (its `by` an id issued here), and is the first answer heard of that action there, queue its
        outcome line (written, its sync shared with others queued, by a thread of its own: the
        feed's thread never waits on the disk) and return it; else None."""
        by = record.get("by")
        if record.get("ev") not in ANSWERS or not isinstance(by, str):
            return None
        with self._lock:
            issued = self._issued.get(by)
            if issued is None or (issued[1] is not None and clock not in issued[1]):
                return None  # not this trail's, or not sent there: a clock cannot answer for another
            if (by, clock) in self._answered:
                # an adjust after the end also makes an `end`: the first answer says it (and one
                # not delivered stays so: a clock that answers it later took a replay)
                return None
            self._answered.add((by, clock))
        if record["ev"] == "error" and record.get("refused") in UNDELIVERED:
            said = {"outcome": "not_delivered", "ev": "error", "reason": str(record.get("detail"))}
        elif record["ev"] == "error":
            said = {"outcome": "refused", "ev": "error", "reason": str(record.get("detail"))}
        else:
            after = {side: (record.get(side) or {}).get("shown") for side in "AB"}
            said = {"outcome": "applied", "ev": record["ev"], "after": after}
        entry = self._outcome_line(issued[0], by, clock, seq=record.get("seq"), **said)
        with self._lock:
            if by in self._answers:  # the round panel hears it now, before its line is on the disk
                self._answers[by][clock] = _said(entry)
            self._pending += 1
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_queued, name="audit-outcomes", daemon=True)
                self._writer.start()
        self._queue.put(entry)
        return entry

    def resume_round(self, current):
        """After a restart: the round kept in round.json (`current`, hall/round_control.py) names
        the clocks its start went to; if the trail's newest start is that round's, only their
        answers to it get an outcome (the line itself says every clock, `all`)."""
        started, clocks = self.round_started, (current or {}).get("clocks")
        if started is None or not isinstance(clocks, list):
            return
        changed = started.get("changed") or {}
        if (changed.get("round"), changed.get("start_ms")) != (current.get("round"), current.get("start_ms")):
            return  # round.json is of another start (one whose line the trail refused)
        with self._lock:
            if started["id"] in self._issued:
                self._issued[started["id"]] = (started["by"], frozenset(clocks))

    def flush(self, timeout=None):
        """Wait until every outcome line queued is on the disk (or `timeout` s); whether it is."""
        with self._drained:
            return self._drained.wait_for(lambda: self._pending == 0, timeout)

    def _write_queued(self):
        """The writer thread: every outcome line queued so far, written with one sync."""
        while True:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                with self._file_lock:
                    self._append(batch)
            except OSError as error:  # the action then reads as not answered
                log.warning("the audit trail cannot take %d outcome lines: %s", len(batch), error)
            with self._lock:
                self._pending -= len(batch)
                self._drained.notify_all()

    def _outcome_line(self, asker, of, clock, outcome, seq=None, ev=None, reason=None, after=None):
        """The outcome line of `of` at `clock`, by `asker` (who asked for the action, or None)."""
        match = ACTION_ID.fullmatch(of)
        entry = self._stamped(asker or (match.group(1) if match else of))
        entry.update(action="outcome", of=of, clock=clock, outcome=outcome)
        said = {"seq": seq, "ev": ev, "reason": reason and reason[:300], "after": after}
        entry.update({key: value for key, value in said.items() if value is not None})
        entry["changed"] = {}
        return entry

    def _issue(self, action_id, by, targets):
        self._issued[action_id] = (by, targets)
        if len(self._issued) > MAX_READ:  # the oldest actions' answers are no longer written
            self._issued.popitem(last=False)

    def _stamped(self, by):
        now = self.clock()
        return {
            "at": datetime.fromtimestamp(now, UTC).isoformat(timespec="milliseconds"),
            "wall_ms": int(now * 1000),
            "by": by,
        }

    def _append(self, entries):
        """Append `entries` (the file's lock held), flushed and synced once. OSError if the disk
        refuses: what was written of them is cut off again where it can be, so a line the caller
        answers 503 for (nothing sent) does not stay on the trail as an action asked."""
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        with open(self.path, "a+b") as out:
            if not self._ended:
                _end_last_line(out)
                self._ended = True
            start = out.seek(0, os.SEEK_END)
            try:
                out.write(b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in entries))
                out.flush()
                os.fsync(out.fileno())
            except OSError:
                try:
                    out.truncate(start)
                except OSError:
                    self._ended = False  # a part left: the next write ends it first
                raise


def _said(line):
    """What an outcome line says, as the round panel shows it."""
    return {key: line.get(key) for key in ("outcome", "reason", "seq")}


def _end_last_line(out):
    """End a last line cut off (a power cut mid-write) in the open file `out`, so the next line
    starts on its own."""
    out.seek(0, os.SEEK_END)
    if out.tell():
        out.seek(-1, os.SEEK_END)
        if out.read(1) != b"\n":
            out.write(b"\n")


def session_label(text):
    """The page session's label from the browser's header (`page-` and up to 12 of its letters), or
    `page` when it sent none that is one."""
    text = (text or "")[:12]
    return f"page-{text}" if text and is_label(text) else "page"
