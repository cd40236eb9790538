"""The journal: every record the clock makes, framed and on disk before it is sent anywhere.

On disk it is a folder of segments, one a game (`wire/segments.py`), so start-up
reads only the game a restart takes up, however many games came before; the
line, resends, exports and the hall's uplink read older records as a stream
(`read`). A wake's records are written together with one fsync, before any is
sent; a wake that made only checkpoints is written and its writeback started
without waiting, where the filesystem bounds how soon that stays (`writeback.py`).

Nothing about the disk stops the clock. A record the disk does not take (full,
read-only, gone, an I/O error) is kept in memory (`outbox.py`), sent as usual,
and written, in order and once, when a retry gets through. A damaged record
costs that record alone; its bytes are copied aside, never deleted
(`store.py`). Seq numbers are never used twice (`numbering.py`). Old
games are pruned as `retention.py` says.
"""

import errno
import logging
import os
from itertools import groupby

from ...wire import segments as files
from ...wire.protocol import frame, unframe
from ...wire.records import encode
from . import writeback
from .lastgame import LastGame
from .numbering import HEADROOM, JUMPED, Numbering, far_block
from .outbox import Outbox
from .readback import read_back
from .retention import Pruning, Retention
from .store import SegmentStore
from .takeover import take_over
from .writeback import SegmentWriter

log = logging.getLogger(__name__)

#: records kept in memory while the disk does not take them
BACKLOG = HEADROOM  # (no more than the seqs reserved ahead)
#: records that need not wait for the card (they only bound what a power cut can lose)
UNHURRIED_EVENTS = frozenset({"checkpoint"})


class Journal:
    """Records by `seq`: on disk in `directory` (None: in memory only), the newest also in memory.

    Built, it has read and written nothing: `Journal.open` is the clock's start-up (it reads the
    folder back, repairs, and moves the seq reservation), and a journal on disk is used only once
    opened. To read a journal without starting it (a running clock's, a card's), use
    `reader.JournalReader`, which writes nothing.

    `runtime` (a folder that lasts as long as the machine's boot, and that boot's id) lets a
    restart in the same boot go on exactly where the last run stopped, instead of skipping the
    reserved seqs.

    A thin front over parts that each own their state: the `outbox` (this run's records in
    memory, and which wait for the disk), the `store` (the segments on disk, read back and
    repaired), the `writer` (the segment being written), `numbering` (the seq marks),
    `pruning` (what the director holds, and retention) and the `last_game` (its records as read
    at start, until a restart takes them up). The journal owns the seq counter, the
    disk's failure and the faults not recorded yet.
    """

    part = "journal"

    def __init__(self, directory=None, *, retention=None, runtime=None, backlog=BACKLOG):
        self.directory = directory
        self._opened = directory is None  # (one in memory has nothing to read back)
        self.failing = None  # the last disk error, while the disk does not take records
        self.next_seq = 0
        #: how long an unhurried record may take to stay on disk after its write (None: they are fsynced)
        self.settle_ms = None
        self._notes = []  # (detail, extra fields) of faults not recorded yet
        self.outbox = Outbox(backlog)
        self.store = SegmentStore(directory, self._note, self._fail)
        self.writer = SegmentWriter(directory, self._note)
        self.numbering = Numbering(directory, runtime, self._note)
        self.pruning = Pruning(self.store, retention or Retention(), self._note)
        self.last_game = LastGame(directory, self.store, self.writer, self.outbox, self._note)

    @classmethod
    def open(cls, directory=None, *, legacy=None, **options):
        """The clock's start-up: the journal in `directory` (None: in memory) read back, damaged
        segments repaired, the seq reservation moved on; `legacy` names a single-file journal of an
        earlier version, taken over first. `options` are `Journal`'s. Never an error for the disk: a
        folder that fails gives a journal that keeps its records in memory and says so."""
        journal = cls(directory, **options)
        if directory is not None:
            journal._start(legacy)
        return journal

    @property
    def retention(self):
        """What the journal keeps (a `Retention`)."""
        return self.pruning.retention

    @property
    def backlog(self):
        """How many records may wait for the disk before the oldest are given up."""
        return self.outbox.backlog

    # ------------------------------------------------------------------ start

    def _start(self, legacy):
        """Read the folder back: the last game's records, where numbering goes on, what to say."""
        self._opened = True
        if writeback.can_start_writeback():
            self.settle_ms = writeback.commit_interval_ms(self.directory)
        try:
            os.makedirs(self.directory, exist_ok=True)
            if legacy and os.path.isfile(legacy):
                note = take_over(legacy, self.directory)  # streamed, in constant memory (takeover.py)
                if note:
                    self._note(note, {})
            self.store.scan()
            self.numbering.read()
            self.pruning.read()
        except OSError as error:
            self._fail(error)
            self.store.blind = True
            runtime = self.numbering.runtime_mark()
            self.next_seq = runtime + 1 if runtime is not None else far_block(0)
            self.numbering.note_skipped(
                0,
                self.next_seq,
                f"the journal cannot be read ({error.strerror}), so the seqs used before are unknown: "
                + ("numbering goes on from this boot's last run" if runtime is not None else JUMPED),
            )
            self.numbering.set_runtime_mark(self.next_seq - 1)
            return
        found = read_back(self.store)
        self.last_game.found(found.records)
        if self.store.segments:
            self.store.first_disk_seq = self.store.segments[0]
        newest = self.store.segments[-1] if self.store.segments else None
        if found.writable:  # never into a segment not read, or not repaired: new records start another
            self.outbox.resume(newest, found.has_game)
            self.writer.resume(newest, found.size)
        runtime = self.numbering.runtime_mark()
        marked = self.numbering.reserved if runtime is None else runtime + 1
        self.next_seq = max(found.used_below, marked)
        if found.used_below > marked:  # the damaged bytes decide, not how the last run stopped
            why = "damaged lines may have held records so numbered (their bytes are kept aside)"
        else:
            why = (
                "records so numbered may have been sent: the last run stopped without closing the "
                "journal (its disk may have failed meanwhile)"
            )
        try:
            # (pruning waits for the next game: a start reads no more than it must)
            self.numbering.reserve(self.next_seq)
        except OSError as error:
            self._fail(error)
            if runtime is None:  # a start in a later boot would go on from this same mark
                self.next_seq = far_block(self.next_seq)
                why = f"the mark of the seqs used cannot be moved ({error.strerror}): {JUMPED}"
        # (up to a run of this boot's last seq, that run sent them or said it skipped them)
        skipped_from = found.good_next if runtime is None else max(found.good_next, runtime + 1)
        self.numbering.note_skipped(skipped_from, self.next_seq, why)
        self.numbering.set_runtime_mark(self.next_seq - 1)

    # ------------------------------------------------------------------ reading

    @property
    def first_seq(self):
        """The oldest seq the journal may hold."""
        if self.store.first_disk_seq is not None:
            return self.store.first_disk_seq
        oldest = self.outbox.oldest
        return oldest if oldest is not None else self.next_seq

    def line(self, seq):
        """The framed line of record `seq`, or None if the journal does not hold it.

        Recent records come from memory; older ones from disk, a segment at a time (the last
        segment read is kept, so reading seq after seq costs one pass over each segment).
        """
        line = self.outbox.line(seq)
        if line is not None:
            return line
        if self.directory is None or seq >= self.next_seq:
            return None
        return self.store.line(seq)

    def read(self, first, last=None):
        """(seq, line) of every record held from `first` to `last` (None: the newest), streamed:
        from disk a segment at a time, then from memory. Seqs not held (pruned, damaged, skipped)
        are left out."""
        if not self._opened:  # (its seqs on disk are not known yet)
            raise RuntimeError(f"journal {self.directory} is not open: Journal.open starts it")
        seq = first
        while (last is None or seq <= last) and seq < self.next_seq:
            oldest = self.outbox.oldest
            in_memory = oldest if oldest is not None else self.next_seq
            if seq >= in_memory:
                line = self.line(seq)
                if line is not None:
                    yield seq, line
                seq += 1
                continue
            index, segments = self.store.index_of(seq), self.store.segments
            if index is None:
                seq = segments[0] if segments and segments[0] > seq else in_memory
                continue
            ends = segments[index + 1] if index + 1 < len(segments) else in_memory
            try:
                for got, line, _ in files.iter_lines(self.store.path(segments[index])):
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
        start, or (in memory) found among the records held (`lastgame.py`)."""
        return self.last_game.take()

    @property
    def last_game_first_seq(self):
        """The first seq of the last game's records as read at start (its `new_game`, or the `boot`
        before it), or None (a journal in memory, or no game held)."""
        return self.last_game.first_seq

    def set_aside(self, unplayable):
        """Records a start could not play back (`(seq, why)` each, from `GameClock.recover`): damage
        like any other, set aside by `lastgame.py`. Call it before the start's own records are added."""
        self.last_game.set_aside(unplayable)

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
        return self.next_seq - self.outbox.unsettled

    def append(self, record, sync=True):
        """Frame `record` and keep it; with `sync`, write it and fsync now (else at the next
        `write_pending`: the loop writes a wake's records with one fsync). Returns the framed line."""
        if not self._opened:  # it would number from 0, over the seqs on disk
            raise RuntimeError(f"journal {self.directory} is not open: Journal.open starts it")
        if record.seq != self.next_seq:
            raise ValueError(f"journal expects seq {self.next_seq}, got {record.seq}")
        line = frame(encode(record))
        self.next_seq += 1
        if self.directory is None:
            self.outbox.keep(record.seq, line)
            return line  # in memory only: nothing to wait for
        segment = self.outbox.place(record.seq, record.ev)
        self.outbox.add(record.seq, line, segment, urgent=record.ev not in UNHURRIED_EVENTS)
        if sync:
            self.write_pending()
        return line

    @property
    def pending(self):
        """Whether records wait to be written to disk (or the last write failed: the disk is in doubt)."""
        return self.directory is not None and (self.outbox.unwritten > 0 or self.failing is not None)

    def write_pending(self):
        """Write and fsync every record not yet on disk (one fsync for them all; only started, not
        waited for, if they are all unhurried and the filesystem bounds the wait); on a full card,
        prune what may go and retry. Either way they are settled: the links may send them."""
        self.outbox.settle()
        if not self.pending:
            return
        try:
            self._write_pending()
        except OSError as error:
            if error.errno == errno.ENOSPC and self.pruning.make_room():
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
        self.store.finish_repairs()

    def _write_pending(self):
        if self.store.blind:
            self.store.see_again()
        urgent = self.outbox.urgent or self.settle_ms is None
        for segment, group in groupby(self.outbox.waiting(), key=lambda entry: entry[2]):
            lines = [line for _, line, _ in group]
            if segment != self.writer.segment:
                self._begin_segment(segment)
            self.writer.write(lines, urgent)
            self.outbox.written(len(lines))
        self.outbox.all_written()
        self.writer.ensure_open()  # nothing was waiting: a retry after a failure checks the disk again
        self.numbering.reserve(self.next_seq)

    def _begin_segment(self, first):
        self.writer.begin(first)
        if self.store.add(first):
            try:
                self.pruning.prune()
            except OSError as error:
                log.warning("journal %s: pruning: %s", self.directory, error)

    def mark_held(self, seq):
        """The director holds every record up to `seq` (an `ack`): games up to there may be pruned.

        The mark moves at most once a game (to the end of the last whole game held), so a flood
        of acks costs no writes."""
        if self.directory is None or seq >= self.next_seq:
            return
        try:
            self.pruning.mark_held(seq)
        except OSError as error:
            self._fail(error)

    def close(self):
        """Write what waits, and mark a clean stop (the next start goes on from `next_seq`)."""
        if self.directory is None:
            return
        self.write_pending()
        if self.failing is None and self.outbox.unwritten == 0:
            try:
                self.numbering.close(self.next_seq)
            except OSError:
                pass
        self.writer.close()
        self.numbering.set_runtime_mark(self.next_seq - 1)

    # ------------------------------------------------------------------ faults

    def _fail(self, error):
        if self.failing is None:
            log.error("journal %s: %s", self.directory, error)
        self.failing = error.strerror or str(error)
        self.writer.close()
        if self.outbox.unwritten:  # they go out all the same: a restart in this boot must go on above them
            self.numbering.set_runtime_mark(self.next_seq - 1)

    def _note_lost(self):
        """Once the disk takes records again: one fault for the whole run of records given up
        meanwhile (said while it failed, it would only have been given up in turn)."""
        lost = self.outbox.take_lost()
        if lost:
            first, last = lost
            self._note(
                f"seq {first}-{last} were sent but never written: the disk failed for over "
                f"{self.backlog} records",
                {"lost": [first, last]},
            )

    def _note(self, detail, extra):
        self._notes.append((detail, extra))
