"""The pairings the hall names players from: the same TSH `.t` files (or `config.tsh`, or a CSV) and
`--tables` that `sheet` and `scores` take, read again whenever a file changes (TSH writes the next
round's pairings into them during the day; the hall only reads them, never writes).

For a table of a round, `players` says who plays there: both players, and who sat at which side
when that is known (the pairings say who went first and the clock says which side moved first),
as the score form and the director's Scores page show them.

The files are read off the page's threads: a thread of their own looks at their stamps every
`POLL_S` and reads them again when one changes (as `tfile.read_bytes` reads: files only, and
small). The page is always answered from the last copy read well, at once: a file that cannot be
read (TSH writing it just now, a FIFO or a link put in its place) or that does not answer (a hung
network share) leaves that copy in use, marked stale. What went wrong (`problem`, naming the file)
is for the director's console and page; a phone is told only that the names may be out of date.
"""

import logging
import os
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

from ...wire.labels import table_key
from . import inputs
from .matching import other_side
from .tfile import PairingsError, read_config

log = logging.getLogger(__name__)

#: seconds between looks at the files' stamps (a look is one stat a file)
POLL_S = 1.0
#: how long the first read may take at the start, before the hall says the files do not answer
START_S = 5.0
#: a look that has not come back in this long: the files are hung, the copy in use stale
HUNG_S = 5.0
#: what a phone is told when the copy in use may be out of date (never which file, nor why)
STALE_NOTE = "the pairings may be out of date: the director has been told"


@dataclass(frozen=True)
class _Copy:
    stamp: Any  # the files' (path, mtime, size, inode) when read
    rounds: Any  # round number -> pairings.Round
    at: float  # wall time of the read
    next_round: int | None = None  # TSH's next unscored round (the earliest division's), or None


class HallPairings:
    """A round's pairings from `tsh` (.t files), `config` (config.tsh) or `csv`, with `tables`
    (`--tables` ranges), read in a thread of their own; the first read is waited for (at most
    `start_s`), and a file that cannot be read then is its error (OSError or ValueError), raised
    here so that the start says it, not a phone."""

    def __init__(self, tsh=None, config=None, csv=None, tables=None, poll_s=POLL_S, start_s=START_S):
        #: `read_schedule`'s arguments: where the pairings are read from
        self.sources = (tsh, config, csv, tables)
        #: a look at the files taking longer than this marks the copy stale (tests set it lower)
        self.hung_s = HUNG_S
        self._changed = threading.Condition()
        self._copy = None  # the last _Copy read well
        self._error = None  # the last read's error, or None
        self._tried = None  # the stamp last read (well or not)
        self._begun = self._done = 0  # looks begun, and the last finished
        self._begun_at = (0.0, 0.0)  # (monotonic, wall) time the current look began
        self._cache = {}
        self._wake, self._stop = threading.Event(), threading.Event()
        # the thread holds the pairings weakly: dropped, they stop being read
        threading.Thread(
            target=_watch,
            args=(weakref.ref(self), self._wake, self._stop, poll_s),
            name="pairings",
            daemon=True,
        ).start()
        with self._changed:
            answered = self._changed.wait_for(lambda: self._done >= 1, start_s)
        if not answered:
            self.close()
            raise PairingsError(
                f"{', '.join(self._named())}: no answer in {start_s:g} s (a hung network share?)"
            )
        if self._copy is None:
            self.close()
            raise self._error

    def _named(self):
        tsh, config, csv, _tables = self.sources
        return [config] if config else list(tsh or []) or [csv]

    def _files(self):
        tsh, config, csv, _tables = self.sources
        if config:
            return [config, *(file for _, file in read_config(config).divisions)]
        return list(tsh or []) or [csv]

    def look(self):
        """Read the files again if their stamps changed (or the last read failed): on the
        pairings' own thread, never a request's. The copy in use changes only on a good read."""
        with self._changed:
            self._begun += 1
            self._begun_at = (time.monotonic(), time.time())
        error = None
        try:
            stamp = [(path, _stamp(path)) for path in self._files()]
            if stamp != self._tried or self._error is not None:
                self._tried = stamp
                _paired, rounds = inputs.read_schedule(*self.sources)
                next_round = getattr(rounds, "next_round", None)  # TSH's round (a CSV has none)
                with self._changed:
                    self._copy, self._cache = _Copy(stamp, rounds, time.time(), next_round), {}
        except (OSError, ValueError) as found:  # PairingsError, TshFileRefused among them
            error = found
        except Exception as found:  # noqa: BLE001  (a fault in the reading: said, the thread goes on)
            log.exception("reading the pairings")
            error = found
        with self._changed:  # said by `problem` (the console and the director's page ask it)
            self._error = error
            self._done = self._begun
            self._changed.notify_all()

    def wait_fresh(self, timeout_s):
        """Have the files looked at now and wait (at most `timeout_s`) for that look to end: True
        if it did (for a test, or a director who has just saved a file)."""
        with self._changed:
            wanted = self._begun + 1
            self._wake.set()
            return self._changed.wait_for(lambda: self._done >= wanted, timeout_s)

    @property
    def problem(self):
        """Why the copy in use may be out of date, in words naming the file (for the director's
        console and page), or None while it is the files as they are."""
        with self._changed:
            error, busy = self._error, self._done < self._begun
            since_mono, since_wall = self._begun_at
        if busy and time.monotonic() - since_mono >= self.hung_s:
            when = time.strftime("%H:%M:%S", time.localtime(since_wall))
            return f"the pairings files have not answered since {when} (a hung network share?): {self._as_read()}"
        if error is not None:
            return f"the pairings cannot be read again: {_why(error)}: {self._as_read()}"
        return None

    @property
    def stale(self):
        """What a phone is told when the copy in use may be out of date (no file, no reason), or None."""
        return STALE_NOTE if self.problem else None

    def _as_read(self):
        copy = self._copy
        when = time.strftime("%H:%M:%S", time.localtime(copy.at)) if copy else "never"
        return f"the names are as read at {when}"

    def close(self):
        """Stop looking at the files (a look under way ends in its own time)."""
        self._stop.set()
        self._wake.set()

    @property
    def next_round(self):
        """The round TSH takes scores for next (its earliest division's next unscored round), from
        the last copy read well; None for a CSV's pairings. Read again as TSH rewrites its files."""
        with self._changed:
            copy = self._copy
        return copy.next_round if copy is not None else None

    def rounds(self, number):
        """The `pairings.Round` of round `number`, from the last copy read well (never waits on a file)."""
        with self._changed:
            copy = self._copy
            found = self._cache.get(number)
        if found is None:
            found = copy.rounds(number)
            with self._changed:
                if self._copy is copy:
                    self._cache[number] = found
        return found

    def tables(self, number):
        """{table: Pairing} of round `number` (a table two pairings claim is left out: no names)."""
        seen = {}
        for pairing in self.rounds(number).pairings:
            if pairing.table is not None:
                key = table_key(pairing.table)
                seen[key] = None if key in seen else pairing
        return {table: pairing for table, pairing in seen.items() if pairing is not None}

    def names(self, number, table):
        """`Name (#3, A) v Name (#7, A)` at `table` in round `number` (a call's banner), or None."""
        if not isinstance(number, int) or table is None:
            return None
        pairing = self.tables(number).get(table_key(table))
        return pairing.names() if pairing else None

    def players(self, number, table, first_side=None):
        """Who plays at `table` in round `number`, for the form: {"names": [both], "players": {"A":
        name, "B": name} when the sides are known, "sides": why not otherwise, "stale": a note when
        the copy may be out of date}; {} for no pairing (with "stale" if stale). `first_side`: the
        side whose clock first ran in play, as the clock recorded it."""
        pairing = self.tables(number).get(table_key(table))
        note = self.stale
        stale = {"stale": note} if note else {}
        if pairing is None:
            return stale
        found = {"names": [player.label() for player in pairing.players], **stale}
        if pairing.first_known and first_side in ("A", "B"):
            found["players"] = {
                first_side: pairing.first.label(),
                other_side(first_side): pairing.second.label(),
            }
        elif not pairing.first_known:
            found["sides"] = pairing.why_unknown or "the pairings do not say who went first"
        else:
            found["sides"] = "no clock has run at this table yet"
        if "players" not in found and all(player.number for player in pairing.players):
            # who sat at side A can be said where the score is entered (`seat_a`: a TSH number)
            found["seats"] = [{"number": p.number, "name": p.label()} for p in pairing.players]
        return found


def _watch(pairings_ref, wake, stop, poll_s):
    """The pairings' thread: a look every `poll_s` (or when woken), until stopped or dropped."""
    while not stop.is_set():
        pairings = pairings_ref()
        if pairings is None:
            return
        pairings.look()
        del pairings  # held weakly between looks
        wake.wait(poll_s)
        wake.clear()


def _stamp(path):
    """What changes when a file is written or replaced (a stat; it may hang on a hung share)."""
    status = os.stat(path)
    return (status.st_mtime_ns, status.st_size, status.st_ino, status.st_dev)


def _why(error):
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    return str(error) or type(error).__name__
