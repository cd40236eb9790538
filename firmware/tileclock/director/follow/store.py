"""The director's store of records: every clock's records kept in seq order, game by game, on disk.

Records are keyed by the clock's id (the `clock` field every record carries),
never by its board name or the port they came in on: two clocks that claim one
board name, or a clock moved to another port, are never merged. Whatever way a
record arrives (a serial port, a resend, another transport), `RecordStore.add`
takes it; each clock's `ClockLog` (`clocklog.py`) writes it in seq order to its game's file
and adds a row to `results.csv` when a game ends. The store then tells its listeners what it took,
`listener(clock_id, record, log)` (the hall's boards are one: `director/hall/board.py`'s `Boards`).

Files under the output folder:

- `board-BOARD/game-SEQ-CLOCK.log`: a game's framed lines as received, from the
  `boot` before it if any (BOARD is the board name from the clock's `boot`
  record if it is a label, else `unnamed`);
- `board-BOARD/after-move-SEQ-CLOCK.log`: the records a clock sent for its game SEQ after that
  game moved to a spare (a `takeover` record names it and the seq it continues from), kept
  apart and never counted: the game is the spare's from the move on;
- `results.csv`: a row for each game that ended (`director/history.py`);
- `rejects.log`: records whose integrity field is good but whose fields are
  not (one JSON object a line: when, where from, why, the line);
- `notices.log`: what the director should know (a board claimed twice, a
  port whose clock changed, records a clock no longer holds).
"""

import csv
import hashlib
import json
import os
import re
import time
from collections import deque

from ...wire.decoder import Reason, WireError
from ...wire.director_files import NOTICES, REJECTS, RESULTS
from ...wire.protocol import is_label
from ..records.history import CSV_FIELDS, csv_safe
from . import twins
from .clocklog import ClockLog, lines_on_disk

#: `game-SEQ-CLOCK.log`: a game's file, named by its `new_game` seq and its clock's id (and
#: `before-games-CLOCK.log`, records of a game the clock no longer held the start of)
_GAME_FILE = re.compile(r"(?:game-(\d+)|before-games|after-move-(\d+))-(.+)\.log")
#: a later log of a clock whose journal began again (`CLOCK_rN`)
_GENERATION = re.compile(r"(.+)_r(\d+)")
#: The rejects and notices files stop growing here (what would go in them is still counted): a
#: clock that sends nothing but bad or odd records cannot fill the director's disk.
MAX_SIDE_FILE_BYTES = 10 * 1024 * 1024
#: Logs of one clock id at most: a clock sending records that fit none of its logs (a liar with its
#: credentials, forging seqs its logs hold) has them kept aside in rejects.log past this
MAX_LOGS = 8
#: Notices kept in memory for the live table (all of them are in notices.log, up to its limit).
KEPT_NOTICES = 100


class Rejected(WireError):
    """A record with a good integrity field that the director cannot use: `reason` (a
    `wire.decoder.Reason`) says which check failed, the message says why."""


def _whole(value, low=None):
    return isinstance(value, int) and not isinstance(value, bool) and (low is None or value >= low)


def _row_key(row):
    """What tells one `results.csv` row from another: its clock, game and end."""
    return tuple(str(row.get(field, "")) for field in ("clock", "game_seq", "end_t_ms", "end_reason"))


def _generation(name):
    match = _GENERATION.fullmatch(name)
    return (match.group(1), int(match.group(2))) if match else (name, 1)


def port_clock_id(port):
    """The id a clock of protocol 1 (its records name no clock) goes by: its `port`'s."""
    return "port-" + hashlib.sha256((port or "").encode()).hexdigest()[:8]


def clock_of(record, port=None):
    """The clock id of a record (a clock of protocol 1 has none: it is named after its `port`);
    `Rejected` if it is not a label or the record has no valid `seq`."""
    if not _whole(record.get("seq"), 0):
        raise Rejected(Reason.WRONG_KIND, "field 'seq' missing or not a whole number", "seq")
    clock_id = record.get("clock")
    if clock_id is None:
        return port_clock_id(port)
    if not is_label(clock_id):
        raise Rejected(
            Reason.WRONG_KIND, f"field 'clock' = {str(clock_id)[:40]!r} is not a clock id", "clock"
        )
    return clock_id


class RecordStore:
    """Every clock's `ClockLog`, by clock id, and the files they share in `outdir`.

    A store opened on a folder that already holds game files takes up where it
    stopped (`_restore`): each clock goes on after the last record on disk, into
    the same game file, so a director restarted mid-tournament writes no record
    twice, whichever way records come.
    """

    def __init__(self, outdir, clock=time.time, listeners=()):
        self.outdir = outdir
        self.clock = clock
        self.clocks = {}
        #: called with (clock id, record, its `ClockLog`) for each record `add` takes (`subscribe`)
        self.listeners = list(listeners)
        #: with `batching`, game files are flushed by `flush()` after a batch of lines (collect
        #: does, after each read of a port), not after every line
        self.batching = False
        self._unflushed = set()  # the `ClockLog`s with lines written since the last `flush`
        self.rejects = 0
        self.notices = deque(maxlen=KEPT_NOTICES)  # (when, text), newest last
        self.noticed = 0  # notices since the store opened (a console prints the new ones)
        #: clock id -> the names of its logs, oldest first (more than one: its journal began again,
        #: or two clocks have this id; `twins.py`)
        self.family = {}
        self._twins_said = set()  # the clock ids said to run twice at once
        self._side_bytes = {}  # file name -> bytes this store wrote to it
        #: (dead clock id, its game's seq) -> (the spare, the seq it continued from): the games
        #: some clock took over (its `takeover` record), from the files and as records come
        self.moves = {}
        os.makedirs(outdir, exist_ok=True)
        self._restore()

    def _restore(self):
        """Each clock's place from the game files already in the folder."""
        files = {}
        for folder in sorted(os.listdir(self.outdir)):
            if not folder.startswith("board-") or not os.path.isdir(os.path.join(self.outdir, folder)):
                continue
            for name in os.listdir(os.path.join(self.outdir, folder)):
                match = _GAME_FILE.fullmatch(name)
                if match and is_label(match.group(3)):
                    path = os.path.join(self.outdir, folder, name)
                    number, later = int(match.group(1) or match.group(2) or -1), match.group(2) is not None
                    files.setdefault(match.group(3), []).append((number, later, path))
        for clock_id, games in files.items():
            log = self.clocks[clock_id] = ClockLog(clock_id, self)
            games.sort()  # a game's records after its move (`later`) after its own file
            names = [os.path.basename(path) for _, _, path in games]
            own = [i for i, (_, later, _) in enumerate(games) if not later and names[i].startswith("game-")]
            last = own[-1] if own else -1  # the last game's own file goes on being written
            for number, (_, _, path) in enumerate(games):
                log.take_up(lines_on_disk(path), path, last=number == last)
        self._rows_made_good()
        for name in sorted(self.clocks, key=_generation):  # each clock id's logs, oldest first
            match = _GENERATION.fullmatch(name)
            base = match.group(1) if match and match.group(1) in self.clocks else name
            self.family.setdefault(base, []).append(name)

    def _rows_made_good(self):
        """Write the `results.csv` row of every ended game on file that has none: the disk failed
        between the game's `end` line and its row (a row cut off mid-write is cut from the file)."""
        path = os.path.join(self.outdir, RESULTS)
        have = set()
        if os.path.exists(path):
            lines_on_disk(path)  # (cuts a row the disk cut off)
            with open(path, newline="", encoding="utf-8") as file:
                have = {_row_key(row) for row in csv.DictReader(file)}
        for log in self.clocks.values():
            for row in log.rows_on_file:
                if _row_key(csv_safe(row)) not in have:
                    self.add_result(row)
                    self.notice(
                        f"results.csv: the row of game {row['game_seq']} of clock {row['clock']} was "
                        "missing (the disk failed before it was written): written from its game file"
                    )
            log.rows_on_file = []

    def subscribe(self, listener):
        """Tell `listener(clock_id, record, log)` of each record taken from now on: after the
        record's `ClockLog` has it (written, held for a gap, or a duplicate: a listener may act on
        a record heard again) and has stepped over the seqs the clock says it never sends."""
        self.listeners.append(listener)

    def add(self, record, line, source=None):
        """Take one framed line and its record from `source` (a port name); returns the clock's
        `ClockLog` it went to, or None if the record was rejected (it is then in the rejects file).
        Its listeners are told of each record taken."""
        try:  # its fields were checked by the one decoder (`wire.records.decode`, through `unframe`)
            clock_id = clock_of(record, source)
        except Rejected as error:
            self.reject(record, line, error, source)
            return None
        logs = [self.clocks[name] for name in self.family.get(clock_id, ())]
        if not logs:
            log = self._new_log(clock_id, clock_id)
        else:
            log, verdict = twins.choose(logs, record, line, source)
            if log is None:
                log = self._another_log(clock_id, logs, record, verdict)
                if log is None:
                    detail = f"seq {record['seq']} of clock {clock_id} fits none of its logs"
                    self.keep_aside(line, WireError(Reason.DUPLICATE_ID, detail), source)
                    return None
            elif verdict in ("next", "ahead") and log is not logs[-1]:
                self._at_once(clock_id, logs)  # an older log still takes new records
        log.port = source
        log.add(record, line)
        log.note_unsent(record)  # (every record: a run it names may start later)
        for listener in self.listeners:
            listener(clock_id, record, log)
        return log

    def let_go(self, clock_id, seq):
        """Whether record `seq` of `clock_id`, not yet decoded, is let go (and counted so on its
        log): its log holds as many records ahead of a gap as it may (`clocklog.MAX_PENDING`) and
        this is not the one the gap waits for. A clock flooding after a gap must not slow the
        others; what is let go is asked for again once the gap is filled."""
        log = self.log_of(clock_id)
        return log is not None and log.lets_go(seq)

    def reject(self, record, line, error, source=None):
        """Keep a line the director cannot use in the rejects file, with where it came from and
        why: `error` (a `WireError`) gives the reason code, the field at fault and the words.
        `record` is what it holds (None if not a JSON object): if it names its clock and seq, that
        record is not asked for again."""
        self.rejects += 1
        try:
            clock_id = clock_of(record or {}, source)
            log = self.log_of(clock_id, source) or self._new_log(clock_id, clock_id)
            log.port = source
            log.add_rejected(record["seq"])
        except Rejected:
            pass
        coded = isinstance(error, WireError)  # (words alone, from code written before the codes)
        entry = json.dumps(
            {
                "at": round(self.clock(), 3),
                "from": source,
                "reason": str(error.reason) if coded else None,
                "field": error.field if coded else None,
                "detail": str(error),
                "line": line,
            }
        )
        self._side_file(REJECTS, entry)

    def keep_aside(self, line, error, source=None):
        """Keep `line` in the rejects file for `error` (a `WireError`), marking nothing as seen."""
        self.reject(None, line, error, source)

    def log_of(self, clock_id, source=None):
        """The `ClockLog` of `clock_id` (its newest, or the one `source` alone feeds), or None."""
        logs = [self.clocks[name] for name in self.family.get(clock_id, ())]
        fed = [log for log in logs if source is not None and log.port == source]
        return fed[0] if len(fed) == 1 else logs[-1] if logs else None

    def logs_of(self, clock_id):
        """Every `ClockLog` of `clock_id`, oldest first."""
        return [self.clocks[name] for name in self.family.get(clock_id, ())]

    def _new_log(self, clock_id, name):
        log = self.clocks[name] = ClockLog(name, self)
        self.family.setdefault(clock_id, []).append(name)
        return log

    def _another_log(self, clock_id, logs, record, why):
        """A second (third...) log of `clock_id`, named `CLOCK_rN` in the files, for `record`, which
        fits none of its logs: a `boot` none saw, below where each is (its journal began again: a
        new card, or a second clock), or a seq each holds with other contents (a second clock)."""
        generation = 2
        while f"{clock_id}_r{generation}" in self.clocks:
            generation += 1
        name = f"{clock_id}_r{generation}"
        if not is_label(name) or len(logs) >= MAX_LOGS:  # kept aside then, never dropped unseen
            return None
        fresh = self._new_log(clock_id, name)
        seq = record["seq"]
        if why == "boot":
            self.notice(
                f"clock {clock_id}: its journal started again at seq {seq} (a new card?): "
                f"its games from here are a new log, {name} in the file names"
            )
            return fresh
        fresh.expected = seq  # what came before is the other clock's, or the same as it
        self.notice(
            f"clock {clock_id}: seq {seq} came twice with other contents: two clocks share this id; "
            f"the second's records are kept apart as {name} in the file names"
        )
        self._identity(clock_id)
        return fresh

    def _at_once(self, clock_id, logs):
        """Two logs of `clock_id` take new records by turns: two clocks run with one id. Said once,
        loudly, and shown as a fault on each of its logs."""
        self._identity(clock_id)
        if clock_id in self._twins_said:
            return
        self._twins_said.add(clock_id)
        self.notice(
            f"clock {clock_id}: TWO CLOCKS ARE RUNNING WITH THIS ID at once; their records are kept "
            f"apart ({', '.join(log.clock_id for log in logs)} in the file names): give each its own "
            "[clock] id"
        )

    def _identity(self, clock_id):
        names = ", ".join(self.family[clock_id])
        for log in self.logs_of(clock_id):
            log.faults["identity"] = (
                f"two clocks with the id {clock_id}: their records are kept apart ({names}); "
                "give each its own [clock] id"
            )

    def notice(self, text):
        """Something the director should know: kept, shown, and written to `notices.log`."""
        now = self.clock()
        self.notices.append((now, text))
        self.noticed += 1
        self._side_file(NOTICES, f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(now))} {text}")

    def _side_file(self, name, line):
        """Append `line` to the rejects or notices file, up to `MAX_SIDE_FILE_BYTES`."""
        size = self._side_bytes.get(name, 0) + len(line) + 1
        if size > MAX_SIDE_FILE_BYTES:
            return
        self._side_bytes[name] = size
        with open(os.path.join(self.outdir, name), "a", encoding="utf-8") as file:
            file.write(line + "\n")

    def board_claimed(self, log):
        """Say so when a second clock claims a board name another clock has."""
        others = [
            other.clock_id for other in self.clocks.values() if other is not log and other.board == log.board
        ]
        if log.board is not None and others:
            self.notice(
                f"board {log.board_label}: claimed by clocks {', '.join(sorted(others + [log.clock_id]))} "
                "(kept apart by clock id; give each its own board name)"
            )

    def took_over(self, spare, record):
        """`spare` took over a dead clock's game (its `takeover` `record`): that clock's records
        of it after the seq it continues from are filed apart from now on (`ClockLog._after_move`)."""
        self.moves[(record["from"], record["from_game"])] = (spare, record["from_seq"])

    def add_result(self, row):
        path = os.path.join(self.outdir, RESULTS)
        new = not os.path.exists(path) or not os.path.getsize(path)
        with open(path, "a", newline="", encoding="utf-8") as file:
            writer = csv.DictWriter(file, fieldnames=CSV_FIELDS)
            if new:
                writer.writeheader()
            writer.writerow(csv_safe(row))

    def wrote(self, log):
        """`log` wrote a line to its game file: flushed now, or after the batch when `batching`."""
        if self.batching:
            self._unflushed.add(log)
        else:
            log.flush()

    def flush(self):
        """Flush every game file written to since the last time (after each batch of lines)."""
        for log in self._unflushed:
            log.flush()
        self._unflushed.clear()

    def close(self):
        for log in self.clocks.values():
            log.close()
