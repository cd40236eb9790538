"""Round control from the director's page: a round started for a time of day on the boards that
take part, and round over to every clock at once (docs/hall.md, "Round control").

A start is one `set round=N start=MS` to each board's clock (ms since 1970 UTC): each clock starts
its round when its own wall clock, which chrony keeps on this laptop's, reads that time
(device/timesync.py), so every board starts together however late the command reached it.
Commands go out through the feed's one command path, as every command from the page does.

The round started is kept in the records folder (`round.json`, written whole or not at all) before
its first command leaves, so a restart of `tileclock hall` shows it again; read back through the
one decoder (`wire/director_files.py`), a file it refuses is kept aside (`round.json.bad-MS`) and
the page says why, rather than show a round nobody started.
"""

import datetime
import json
import logging
import os
import re
import time

from ...wire.decoder import WireError
from ...wire.director_files import ROUND_LIMITS, ROUND_VERSION, decode_round
from ...wire.segments import fsync_dir, write_aside

#: a start left empty is this far ahead: every clock has the command before it falls due
LEAD_S = 10
#: a start set further ahead than this is surely a mistake (the round after next?)
MAX_AHEAD_H = 12
_TIME = re.compile(r"(\d{1,2}):(\d\d)(?::(\d\d))?")
_RANGE = re.compile(r"(\d{1,4})\s*-\s*(\d{1,4})")
#: the round's file in the records folder
FILE = "round.json"

log = logging.getLogger(__name__)


class Unsaved(OSError):
    """The round's file cannot be written: the step is not sent (its message names the file)."""

    def __init__(self, path, error):
        super().__init__(
            error.errno, f"{os.path.basename(path)} cannot be written ({error.strerror or error})"
        )


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


class RoundControl:
    """The round the director started on this page, and the commands that do it, through `feed`
    (a `HallFeed`: `command(text, clock_id)`, `snapshot()`)."""

    def __init__(self, feed, now_ns=time.time_ns, zone=None, folder=None):
        """`folder`: the records folder the round is kept in (None: kept in memory only)."""
        self.feed = feed
        self.now_ns = now_ns
        self.zone = zone  # a tzinfo for the start's time of day; None: this laptop's own
        self.path = os.path.join(folder, FILE) if folder else None
        #: what was wrong with the saved round read at start-up, and where it was put (or None)
        self.problem = None
        self.current = self._load()

    def start(self, number, start_text="", boards_text="", send=None, record=None):
        """Start round `number` at `start_text` (`14:00` or `14:00:00`, today, this laptop's time;
        empty: in `LEAD_S` seconds) on the boards `boards_text` names (`1-8, 11`; empty: every
        board): `send(command, clock_id)` to each (default: the feed's `command`, the one path
        every command of the page takes), after `record(action, command, changed, clocks)` (the audit
        trail's line; what it raises stops the round before anything is sent). Returns what was
        done; ValueError says what is wrong, before anything is sent."""
        if not (isinstance(number, int) and 1 <= number <= 99):
            raise ValueError("round: a number from 1 to 99")
        start_ms = self._start_ms(start_text.strip())
        boards = self._boards(boards_text.strip())
        command = f"set round={number} start={start_ms}"
        current = {
            "round": number,
            "start_ms": start_ms,
            "start": self._clock_time(start_ms),
            "boards": [board["board"] for board in boards],
            "clocks": [board["clock"] for board in boards],
        }
        changed = {key: current[key] for key in ("round", "start_ms", "start", "boards")}
        self._keep(current, record, "round_start", command, changed, current["clocks"])
        for board in boards:
            (send or self.feed.command)(command, board["clock"])
        self.current = current
        return self.current

    def over(self, send=None, record=None):
        """`round over` to every clock at once (school rule 21), by `send(command, clock_id)`, after
        `record(action, command, changed, clocks)` (as for `start`)."""
        over = None if self.current is None else dict(self.current, over_ms=self.now_ns() // 1_000_000)
        changed = {"round": self.current["round"]} if self.current else {}
        self._keep(over, record, "round_over", "round over", changed, None)
        (send or self.feed.command)("round over", "all")
        self.current = over
        return self.current

    def new_game(self, boards_text="", send=None, record=None):
        """`new game` to the boards `boards_text` names (empty: every board heard), each by
        `send(command, clock_id)`, after `record(action, command, changed, clocks)` (as for
        `start`); a clock refuses it unless its game has ended (or nobody has pressed). Returns the
        boards and clocks it went to; ValueError before anything is sent."""
        boards = self._boards(boards_text.strip())
        sent = {"boards": [b["board"] for b in boards], "clocks": [b["clock"] for b in boards]}
        if record is not None:
            record("new_game", "new game", {"boards": sent["boards"]}, sent["clocks"])
        for board in boards:
            (send or self.feed.command)("new game", board["clock"])
        return sent

    def _keep(self, current, record, action, command, changed, clocks):
        """Keep `current` (None: nothing to keep) and audit the step, so that a failure leaves
        both true: the round's file is written aside first (Unsaved: nothing audited, changed or
        sent), then `record(action, command, changed, clocks)` (what it raises: the file is left
        as it was, nothing sent), then put in place (Unsaved: the caller follows the audit line
        with `not sent`, and nothing is sent)."""
        temporary = self._write_aside(current) if current is not None else None
        try:
            if record is not None:
                record(action, command, changed, clocks)
        except BaseException:
            if temporary is not None:
                _remove(temporary)
            raise
        if temporary is not None:
            self._put_in_place(temporary)

    def _write_aside(self, current):
        """`current` written whole to `round.json.new` and made durable (its path; made afresh, a
        link planted there never written through), or None when the round is kept in memory only;
        Unsaved if the disk refuses it (none is left behind)."""
        if self.path is None:
            return None
        data = json.dumps({"v": ROUND_VERSION, **current}, separators=(",", ":")).encode()
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            return write_aside(self.path, data)
        except OSError as error:
            if not os.path.isdir(f"{self.path}.new"):
                _remove(f"{self.path}.new")
            raise Unsaved(self.path, error) from error

    def _put_in_place(self, temporary):
        """Rename `temporary` over round.json (Unsaved if the disk refuses: the old one stays)."""
        try:
            os.replace(temporary, self.path)
        except OSError as error:
            _remove(temporary)
            raise Unsaved(self.path, error) from error
        try:
            fsync_dir(os.path.dirname(self.path))  # the rename itself survives a power cut
        except OSError as error:  # the round is in place: it is sent (a power cut may undo the file)
            log.warning("the folder of %s cannot be synced: %s", self.path, error)

    def _load(self):
        """The round kept in the records folder, or None; one the decoder refuses is kept aside."""
        if self.path is None:
            return None
        try:
            with open(self.path, "rb") as source:
                data = source.read(ROUND_LIMITS.max_bytes + 1)  # one byte over: refused as too large
        except FileNotFoundError:
            return None
        except OSError as error:
            self.problem = f"the saved round {self.path} could not be read ({error.strerror or error})"
            log.error("%s", self.problem)
            return None
        try:
            return decode_round(data)
        except WireError as error:
            aside = f"{self.path}.bad-{self.now_ns() // 1_000_000}"
            try:
                os.replace(self.path, aside)
            except OSError:
                aside = self.path  # left where it is: still never taken for a round
            self.problem = (
                f"the saved round {self.path} was not taken ({error.reason}: {error.detail}); "
                f"kept aside as {os.path.basename(aside)}: start the round again"
            )
            log.error("%s", self.problem)
            return None

    def _start_ms(self, text):
        now_ms = self.now_ns() // 1_000_000
        if not text:
            return now_ms + LEAD_S * 1000
        found = _TIME.fullmatch(text)
        if not found or int(found[1]) > 23 or int(found[2]) > 59 or int(found[3] or 0) > 59:
            raise ValueError(f"start {text[:20]!r}: a time of day, 14:00 or 14:00:00 (empty: in {LEAD_S} s)")
        today = datetime.datetime.fromtimestamp(now_ms / 1000, self.zone).astimezone(self.zone)
        wanted = today.replace(
            hour=int(found[1]), minute=int(found[2]), second=int(found[3] or 0), microsecond=0
        )
        start_ms = int(wanted.timestamp()) * 1000
        if start_ms <= now_ms:
            raise ValueError(
                f"start {text}: that time has passed (it is {self._clock_time(now_ms)}); "
                f"leave it empty to start in {LEAD_S} s"
            )
        if start_ms - now_ms > MAX_AHEAD_H * 3600 * 1000:
            raise ValueError(f"start {text}: more than {MAX_AHEAD_H} hours ahead")
        return start_ms

    def _boards(self, text):
        """The boards (the page's board dicts) that `text` names, in board order; all for ''."""
        known = self.feed.snapshot()["boards"]
        if not text:
            if not known:
                raise ValueError("no board has been heard from yet")
            return known
        by_name = {str(board["board"]): board for board in known}
        wanted, unknown = [], []
        for word in (w.strip() for w in text.replace(";", ",").split(",")):
            span = _RANGE.fullmatch(word)
            names = [str(n) for n in range(int(span[1]), int(span[2]) + 1)] if span else [word]
            for name in names:
                if name in by_name:
                    wanted.append(by_name[name])
                elif not span and word:
                    unknown.append(word)
        if unknown:
            raise ValueError(f"boards: no board {', '.join(unknown[:5])} has been heard from")
        if not wanted:
            raise ValueError(f"boards {text[:30]!r}: none of them has been heard from")
        return list({board["clock"]: board for board in wanted}.values())

    def _clock_time(self, ms):
        return datetime.datetime.fromtimestamp(ms / 1000, self.zone).strftime("%H:%M:%S")
