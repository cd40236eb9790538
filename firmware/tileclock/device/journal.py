"""The journal: every record the clock makes, framed and on disk before it is sent anywhere.

On disk it is a folder of segments, one a game (`segments.py`), so start-up
reads only the game a restart takes up, however many games came before; the
line, resends, exports and the hall's uplink read older records as a stream
(`read`). A wake's records are written together with one fsync, before
any is sent; a wake that made only checkpoints is written and its writeback
started without waiting, where the filesystem bounds how soon that stays
(`writeback.py`): a checkpoint promises nothing, and an fsync would put the
loop to sleep three times every 10 s of a running game.

Nothing about the disk stops the clock. A record the disk does not take
(full, read-only, gone, an I/O error) is kept in memory, sent as usual, and
written, in order and once, when a retry gets through (at most `BACKLOG`
records wait; older ones are then given up, and a `fault` says which). A
damaged record costs that record alone: its segment's good records are kept,
the damaged bytes are copied aside, never deleted (`readback.py`). Seq numbers are never used
twice: a mark kept `HEADROOM` seqs ahead of the newest record says where the
next start must go on from if this one stops without closing the journal,
and a `fault` record says what was skipped (`numbering.py`). Old games are pruned
as `retention.py` says.
"""

import errno
import logging
import os
from collections import deque

from ..clock.history import reaches_last_game
from ..wire import segments as files
from ..wire.protocol import frame, unframe
from ..wire.records import encode
from . import writeback
from .numbering import HEADROOM, Numbering
from .readback import ReadBack
from .retention import Pruning, Retention
from .writeback import SegmentWriter

log = logging.getLogger(__name__)

#: records kept in memory while the disk does not take them
BACKLOG = HEADROOM  # (no more than the seqs reserved ahead)
#: records already on disk also kept in memory, for the line to send from
RECENT = 2_000
#: records that need not wait for the card (they only bound what a power cut can lose)
UNHURRIED_EVENTS = frozenset({"checkpoint"})


class Journal(ReadBack, Numbering, SegmentWriter, Pruning):
    """Records by `seq`: on disk in `directory` (None: in memory only), the newest also in memory.

    `legacy` names a single-file journal of an earlier version, taken over on first start.
    `runtime` (a folder that lasts as long as the machine's boot, and that boot's id) lets a
    restart in the same boot go on exactly where the last run stopped, instead of skipping the
    reserved seqs.
    """

    part = "journal"

    def __init__(self, directory=None, *, legacy=None, retention=None, runtime=None, backlog=BACKLOG):
        self.directory = directory
        self.retention = retention or Retention()
        self.backlog = backlog
        self.failing = None  # the last disk error, while the disk does not take records
        self.next_seq = 0
        self._notes = []  # (detail, extra fields) of faults not recorded yet
        self._recent = deque()  # (seq, line, segment) of this run's records, oldest first
        self._unwritten = 0  # how many of the newest in `_recent` are not on disk yet
        self._unsettled = 0  # how many of them have not been through a write yet (the links wait)
        self._unwritten_urgent = 0  # how many of the unwritten ones must be fsynced before they go
        self._unsynced = False  # the open segment holds records written but not fsynced
        #: how long an unhurried record may take to stay on disk after its write (None: they are fsynced)
        self.settle_ms = None
        self._segments = []  # first seqs of the segments on disk
        self._active = None  # the segment new records go to
        self._active_has_game = False  # it holds more than `boot` records: a `new_game` starts another
        self._open_segment = None  # the segment file open for writing, and its size on disk
        self._fd = None
        self._size = 0
        self._reserved = 0
        self._held = None  # the highest seq the director holds
        self._recovery = []
        self._last_game_first_seq = None
        self._runtime = runtime
        self._first_disk_seq = None
        self._cached = None  # (first seq, {seq: line}) of the last segment `line` read from disk
        self._blind = False  # the folder could not be read at start
        self._lost = None  # [first, last] seqs given up while the disk failed, not yet reported
        self._good_next = 0  # the seq after the newest good record on disk, at start
        #: segments whose repair waits for the disk (first seq -> the records to leave out, and why):
        #: nothing is written into them, or pruned, or cut, until their bytes are kept aside
        self._unrepaired = {}
        if directory is not None:
            if writeback.can_start_writeback():
                self.settle_ms = writeback.commit_interval_ms(directory)
            self._start(legacy)

    # ------------------------------------------------------------------ reading

    @property
    def first_seq(self):
        """The oldest seq the journal may hold."""
        if self._first_disk_seq is not None:
            return self._first_disk_seq
        return self._recent[0][0] if self._recent else self.next_seq

    def line(self, seq):
        """The framed line of record `seq`, or None if the journal does not hold it.

        Recent records come from memory; older ones from disk, a segment at a time (the last
        segment read is kept, so reading seq after seq costs one pass over each segment).
        """
        if self._recent:
            index = seq - self._recent[0][0]
            if 0 <= index < len(self._recent):
                return self._recent[index][1]
        if self.directory is None or seq >= self.next_seq:
            return None
        index = _segment_of(self._segments, seq)
        if index is None:
            return None
        first = self._segments[index]
        cached = self._cached if self._cached and self._cached[0] == first else None
        if cached is None or (seq not in cached[1] and index == len(self._segments) - 1):
            try:
                lines = {got: line for got, line, _ in files.iter_lines(self._path(first))}
            except OSError:
                lines = {}
            cached = self._cached = (first, lines)
        return cached[1].get(seq)

    def read(self, first, last=None):
        """(seq, line) of every record held from `first` to `last` (None: the newest), streamed:
        from disk a segment at a time, then from memory. Seqs not held (pruned, damaged, skipped)
        are left out."""
        seq = first
        while (last is None or seq <= last) and seq < self.next_seq:
            in_memory = self._recent[0][0] if self._recent else self.next_seq
            if seq >= in_memory:
                line = self.line(seq)
                if line is not None:
                    yield seq, line
                seq += 1
                continue
            index = _segment_of(self._segments, seq)
            if index is None:
                seq = self._segments[0] if self._segments and self._segments[0] > seq else in_memory
                continue
            ends = self._segments[index + 1] if index + 1 < len(self._segments) else in_memory
            try:
                for got, line, _ in files.iter_lines(self._path(self._segments[index])):
                    if got < seq:
                        continue
                    if (last is not None and got > last) or got >= in_memory:
                        break
                    yield got, line
                    seq = got + 1
            except OSError:
                pass  # a segment the disk will not give back: its seqs are not held
            seq = max(seq, min(ends, in_memory))  # on past what the segment held (all of it, or less)

    @property
    def lines(self):
        """Every framed line held, oldest first (the whole journal: for tests and small journals)."""
        return [line for _, line in self.read(0)]

    def records(self, first=0):
        """Every record held from `first` on, decoded (for tests and small journals)."""
        return [unframe(line) for _, line in self.read(first)]

    def recovery_records(self):
        """The records a restart needs (the last game's, from its `new_game`): read from disk at
        start, or (in memory) found among the records held."""
        if self.directory is None:
            newest_first = []
            for _, line, _ in reversed(self._recent):
                newest_first.append(unframe(line))
                if newest_first[-1]["ev"] in ("new_game", "boot") and reaches_last_game(newest_first[::-1]):
                    break
            return newest_first[::-1]
        records, self._recovery = self._recovery, []
        return records

    @property
    def last_game_first_seq(self):
        """The first seq of the last game's records as read at start (its `new_game`, or the `boot`
        before it), or None (a journal in memory, or no game held)."""
        return self._last_game_first_seq

    def set_aside(self, unplayable):
        """Records a start could not play back (`(seq, why)` each, from `GameClock.recover`): damage
        like any other, so their segment's bytes are kept aside, the segment written back without
        them, and a note says so. Call it before the start's own records are added."""
        whys = dict(unplayable)
        if not whys:
            return
        if self.directory is None or self._blind:
            for seq, why in whys.items():
                self._note(f"seq {seq} left out: {why}", {})
            return
        self._cached = None
        for first in reversed(self._segments):  # the last game's, newest first
            if first > max(whys):
                continue
            try:
                segment = files.Segment(self._path(first))
            except OSError as error:
                self._note(f"{files.segment_name(first)} cannot be read ({error.strerror})", {})
                break
            if segment.reject(whys):
                self._repair(segment, whys)
                if first == self._open_segment and segment.repaired:
                    self._size = len(segment.clean_bytes)
                elif first == self._open_segment:  # not repaired: new records start another segment
                    self._close_fd()
                    self._active = self._open_segment = None
            if first <= min(whys):
                break

    def take_notes(self):
        """Faults the journal found (damage, skipped seqs, records given up, games pruned unheld),
        each as (detail, extra record fields), once."""
        notes, self._notes = self._notes, []
        return notes

    # ------------------------------------------------------------------ writing

    @property
    def settled_seq(self):
        """The seq after the last record that has been through a write: what the links may send.

        If the disk fails its records are settled all the same: kept in memory, still sent, and
        written with the next write or retry that gets through, so a write error never stops the
        clock or the record line.
        """
        return self.next_seq - self._unsettled

    def append(self, record, sync=True):
        """Frame `record` and keep it; with `sync`, write it and fsync now (else at the next
        `write_pending`: the loop writes a wake's records with one fsync). Returns the framed line."""
        if record.seq != self.next_seq:
            raise ValueError(f"journal expects seq {self.next_seq}, got {record.seq}")
        line = frame(encode(record))
        if self.directory is not None:
            if self._active is None or (record.ev == "new_game" and self._active_has_game):
                self._active, self._active_has_game = record.seq, False
            self._active_has_game |= record.ev != "boot"
        self._recent.append((record.seq, line, self._active))
        self.next_seq += 1
        if self.directory is None:
            return line  # in memory only: nothing to wait for
        self._unwritten += 1
        self._unsettled += 1
        self._unwritten_urgent += record.ev not in UNHURRIED_EVENTS
        self._trim()
        if sync:
            self.write_pending()
        return line

    @property
    def pending(self):
        """Whether records wait to be written to disk (or the last write failed: the disk is in doubt)."""
        return self.directory is not None and (self._unwritten > 0 or self.failing is not None)

    def write_pending(self):
        """Write and fsync every record not yet on disk (one fsync for them all; only started, not
        waited for, if they are all unhurried and the filesystem bounds the wait); on a full card,
        prune what may go and retry. Either way they are settled: the links may send them."""
        self._unsettled = 0
        if not self.pending:
            return
        try:
            self._write_pending()
        except OSError as error:
            if error.errno == errno.ENOSPC and self._make_room():
                try:
                    self._write_pending()
                except OSError as again:
                    self._fail(again)
                    return
            else:
                self._fail(error)
                return
        if self.failing is not None:
            log.info("journal %s: the disk takes records again", self.directory)
        self.failing = None
        self._note_lost()
        self._finish_repairs()

    def _finish_repairs(self):
        """Repairs the disk would not take before: the disk takes writes now, so try them again."""
        for first, whys in list(self._unrepaired.items()):
            try:
                segment = files.Segment(self._path(first))
            except OSError as error:
                log.warning("journal %s: repairing %s: %s", self.directory, files.segment_name(first), error)
                continue
            segment.reject(whys)
            if segment.needs_repair:
                self._repair(segment, whys, later=True)
            else:
                self._unrepaired.pop(first)

    def mark_held(self, seq):
        """The director holds every record up to `seq` (an `ack`): games up to there may be pruned.

        The mark moves at most once a game (to the end of the last whole game held), so a flood
        of acks costs no writes."""
        if self.directory is None or seq >= self.next_seq:
            return
        ends = [first - 1 for first in self._segments if first - 1 <= seq]
        through = max(ends, default=None)
        if through is None or (self._held is not None and through <= self._held):
            return
        try:
            files.set_mark(self.directory, files.COLLECTED, through)
        except OSError as error:
            self._fail(error)
            return
        self._held = through

    def close(self):
        """Write what waits, and mark a clean stop (the next start goes on from `next_seq`)."""
        if self.directory is None:
            return
        self.write_pending()
        if self.failing is None and self._unwritten == 0:
            try:
                files.set_mark(self.directory, files.RESERVED, self.next_seq)
            except OSError:
                pass
        self._close_fd()
        self._set_runtime_mark(self.next_seq - 1)

    # ------------------------------------------------------------------ the disk

    def _path(self, first):
        return os.path.join(self.directory, files.segment_name(first))

    def _fail(self, error):
        if self.failing is None:
            log.error("journal %s: %s", self.directory, error)
        self.failing = error.strerror or str(error)
        self._close_fd()
        if self._unwritten:  # they go out all the same: a restart in this boot must go on above them
            self._set_runtime_mark(self.next_seq - 1)

    def _trim(self):
        if self.directory is None:
            return
        while len(self._recent) - self._unwritten > RECENT:
            self._recent.popleft()
        while self._unwritten > self.backlog:
            if len(self._recent) > self._unwritten:
                self._recent.popleft()
                continue
            seq = self._recent.popleft()[0]
            self._unwritten -= 1
            self._lost = [self._lost[0] if self._lost else seq, seq]

    def _note_lost(self):
        """Once the disk takes records again: one fault for the whole run of records given up
        meanwhile (said while it failed, it would only have been given up in turn)."""
        if self._lost:
            first, last = self._lost
            self._lost = None
            self._note(
                f"seq {first}-{last} were sent but never written: the disk failed for over "
                f"{self.backlog} records",
                {"lost": [first, last]},
            )

    def _note(self, detail, extra):
        self._notes.append((detail, extra))


def _segment_of(segments, seq):
    """The index of the segment that would hold `seq`, or None if it is before them all."""
    from bisect import bisect_right

    index = bisect_right(segments, seq) - 1
    return index if index >= 0 else None
