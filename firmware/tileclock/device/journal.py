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
the damaged bytes are copied aside, never deleted. Seq numbers are never used
twice: a mark kept `HEADROOM` seqs ahead of the newest record says where the
next start must go on from if this one stops without closing the journal,
and a `fault` record says what was skipped.
"""

import errno
import logging
import os
import secrets
import time
from collections import deque
from itertools import groupby, islice

from ..clock.history import opening_lost, reaches_last_game
from ..clock.protocol import frame, unframe
from ..clock.records import encode
from . import segments as files
from . import writeback
from .retention import Retention, SegmentInfo, choose

log = logging.getLogger(__name__)

#: records kept in memory while the disk does not take them
BACKLOG = 10_000
#: records already on disk also kept in memory, for the line to send from
RECENT = 2_000
#: seqs reserved ahead of the newest record (at least what BACKLOG can hold)
HEADROOM = BACKLOG
#: records that need not wait for the card (they only bound what a power cut can lose)
UNHURRIED_EVENTS = frozenset({"checkpoint"})
#: no framed record is shorter: a damaged segment of N bytes held at most N / this many records
MIN_RECORD_BYTES = 64
#: where the used seqs cannot be known or marked (see `_far_block`): a run numbers from one of
#: these blocks, chosen at random below the largest seq a segment's 12-digit name holds
JUMP_BLOCK = 10**7
LAST_SEQ = 10**12 - 1


class Journal:
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

    # ------------------------------------------------------------------ start-up

    def _start(self, legacy):
        try:
            os.makedirs(self.directory, exist_ok=True)
            if legacy and os.path.isfile(legacy):
                self._take_over(legacy)
            self._segments = files.list_segments(self.directory)
            self._reserved = files.read_mark(self.directory, files.RESERVED) or 0
            held = [files.read_mark(self.directory, m) for m in (files.COLLECTED, files.EXPORTED)]
            self._held = max((h for h in held if h is not None), default=None)
        except OSError as error:
            self._fail(error)
            self._blind = True
            runtime = self._runtime_mark()
            self.next_seq = runtime + 1 if runtime is not None else _far_block(0)
            self._note_skipped(
                0,
                f"the journal cannot be read ({error.strerror}), so the seqs used before are unknown: "
                + ("numbering goes on from this boot's last run" if runtime is not None else _JUMPED),
            )
            self._set_runtime_mark(self.next_seq - 1)
            return
        used_below, writable = self._read_back()
        if self._segments:
            self._first_disk_seq = self._segments[0]
        if writable:  # never into a segment not read, or not repaired: new records start another
            self._active = self._open_segment = self._segments[-1]
        runtime = self._runtime_mark()
        marked = self._reserved if runtime is None else runtime + 1
        self.next_seq = max(used_below, marked)
        if used_below > marked:  # the damaged bytes decide, not how the last run stopped
            why = "damaged lines may have held records so numbered (their bytes are kept aside)"
        else:
            why = (
                "records so numbered may have been sent: the last run stopped without closing the "
                "journal (its disk may have failed meanwhile)"
            )
        try:
            self._reserve()  # (pruning waits for the next game: a start reads no more than it must)
        except OSError as error:
            self._fail(error)
            if runtime is None:  # a start in a later boot would go on from this same mark
                self.next_seq = _far_block(self.next_seq)
                why = f"the mark of the seqs used cannot be moved ({error.strerror}): {_JUMPED}"
        # (up to a run of this boot's last seq, that run sent them or said it skipped them)
        self._note_skipped(self._good_next if runtime is None else max(self._good_next, runtime + 1), why)
        self._set_runtime_mark(self.next_seq - 1)

    def _note_skipped(self, start, why):
        """Say that the seqs from `start` to the next one are never used, and why."""
        if self.next_seq > start:
            last = self.next_seq - 1
            self._note(f"seq {start}-{last} skipped: {why}", {"skipped": [start, last]})

    def _read_back(self):
        """Read segments from the newest back until the last game's start; returns the seq above
        every one the journal may have held, and whether new records may go on in the newest segment
        (it could be read, and repaired if it had to be)."""
        used_below, records, writable = 0, [], False
        for first in reversed(self._segments):
            segment = self._load(first)
            if first == self._segments[-1]:
                used_below = self._used_below(first, segment)
            if segment is None:
                continue
            if first == self._segments[-1]:
                writable = segment.repaired
                self._active_has_game = any(r["ev"] != "boot" for _, _, r in segment.entries)
                self._size = len(segment.clean_bytes) if segment.needs_repair else len(segment.data)
            records[:0] = [record for _, _, record in segment.entries]
            if reaches_last_game(records) or opening_lost(records, first):
                break  # (a game whose opening is damaged still begins at its segment)
        self._recovery = records
        self._last_game_first_seq = records[0]["seq"] if records else None
        return used_below, writable

    def _used_below(self, first, segment):
        """Above every seq the newest segment may have held: after its last good record, or, with
        lines damaged or unreadable, after as many records as its bytes could have held."""
        good = self._good_next = (
            segment.entries[-1][0] + 1 if segment is not None and segment.entries else first
        )
        if segment is not None and not segment.problems:
            return good
        try:
            size = len(segment.data) if segment is not None else os.path.getsize(self._path(first))
        except OSError:
            size = HEADROOM * MIN_RECORD_BYTES
        return max(good, first + size // MIN_RECORD_BYTES + 1)

    def _load(self, first):
        """Read one segment and repair it if it is damaged (good lines kept, the bytes kept aside)."""
        path = self._path(first)
        try:
            segment = files.Segment(path)
        except OSError as error:
            self._note(f"{os.path.basename(path)} cannot be read ({error.strerror})", {})
            return None
        segment.repaired = not segment.needs_repair
        if not segment.repaired:
            self._repair(segment)
        return segment

    def _repair(self, segment, whys=None, later=False):
        """Keep a damaged segment's bytes aside and write its good lines back; say so in a note.

        If the disk will not take it, the segment waits (`_unrepaired`) and the repair is tried
        again `later`, after each write that gets through (its note then), or at the next start."""
        path, segment.repaired = segment.path, False
        first = int(os.path.basename(path)[:-4])
        try:
            kept = segment.repair()
            segment.repaired = True
            self._unrepaired.pop(first, None)
        except OSError as error:
            kept = None
            self._unrepaired[first] = whys or {}
            if later:
                log.warning("journal %s: repairing %s: %s", self.directory, path, error)
                return
            self._fail(error)
        if segment.problems:
            lines = ", ".join(f"line {number}: {what}" for number, what in segment.problems)
            where = (
                f"kept as {os.path.relpath(kept, self.directory)}"
                if kept
                else "not repaired yet: the disk fails (nothing is cut or added before its bytes are kept)"
            )
            self._note(f"{os.path.basename(path)} damaged ({lines}); the good records are kept; {where}", {})
            log.warning("journal %s: %s damaged (%s)", self.directory, path, lines)

    def _take_over(self, legacy):
        """Split an earlier version's single-file journal into segments (the file is kept, renamed)."""
        segment = files.Segment(legacy)
        games = []
        for entry in segment.entries:
            starts = entry[2]["ev"] == "new_game" and games and any(e[2]["ev"] != "boot" for e in games[-1])
            if starts or not games:
                games.append([])
            games[-1].append(entry)
        for game in games:
            data = b"".join(line.encode("ascii") + b"\n" for _, line, _ in game)
            files.replace_file(self._path(game[0][0]), data)
        if segment.problems:
            segment.path = self._path(games[0][0][0] if games else 0)
            segment.keep_aside()
            lines = ", ".join(f"line {number}: {what}" for number, what in segment.problems)
            self._note(f"{os.path.basename(legacy)} damaged ({lines}); the good records are kept", {})
        os.replace(legacy, legacy + ".taken-over")
        files.fsync_dir(os.path.dirname(legacy) or ".")

    # ------------------------------------------------------------------ the disk

    def _path(self, first):
        return os.path.join(self.directory, files.segment_name(first))

    def _write_pending(self):
        if self._blind:
            self._see_again()
        pending = islice(self._recent, len(self._recent) - self._unwritten, None)
        urgent = self._unwritten_urgent > 0 or self.settle_ms is None
        for segment, group in groupby(list(pending), key=lambda entry: entry[2]):
            lines = [line for _, line, _ in group]
            if segment != self._open_segment:
                self._begin_segment(segment)
            self._ensure_open()
            data = memoryview(b"".join(line.encode("ascii") + b"\n" for line in lines))
            offset = self._size
            while data:
                written = os.pwrite(self._fd, data, offset)
                data, offset = data[written:], offset + written
            if urgent:
                os.fdatasync(self._fd)  # the segment's unhurried records before these stay with them
            else:
                writeback.start_writeback(self._fd)
            self._unsynced = not urgent
            self._size = offset
            self._unwritten -= len(lines)
        self._unwritten_urgent = 0
        if self._fd is None:  # nothing was waiting: a retry after a failure checks the disk again
            self._ensure_open()
        self._reserve()

    def _see_again(self):
        """The folder could not be read at start. Now that it answers, write into it only if it holds
        nothing this run may have numbered again."""
        os.makedirs(self.directory, exist_ok=True)
        if files.list_segments(self.directory) or files.read_mark(self.directory, files.RESERVED):
            raise OSError(
                errno.EEXIST,
                "the journal can be read again and holds records from before "
                "this start: restart tileclock to go on from them",
            )
        self._blind = False

    def _begin_segment(self, first):
        self._close_fd()
        self._open_segment, self._size = first, 0
        self._ensure_open()
        files.fsync_dir(self.directory)
        if first not in self._segments:
            self._segments.append(first)
            try:
                self._prune()
            except OSError as error:
                log.warning("journal %s: pruning: %s", self.directory, error)

    def _ensure_open(self):
        """Open the segment being written, cut back to what is known to be on disk."""
        if self._fd is not None or self._open_segment is None:
            return
        os.makedirs(self.directory, exist_ok=True)
        fd = os.open(self._path(self._open_segment), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size != self._size:
                os.ftruncate(fd, self._size)  # a write cut off by the failure
                if size < self._size:
                    self._note(
                        f"{files.segment_name(self._open_segment)} lost records the disk had taken", {}
                    )
                os.fdatasync(fd)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd

    def _close_fd(self):
        if self._fd is not None:
            try:
                if self._unsynced:
                    os.fdatasync(self._fd)  # what is closed, a stop or the next game's segment, stays
            except OSError:
                pass
            self._unsynced = False
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None

    def _reserve(self):
        if self.next_seq + HEADROOM // 2 > self._reserved:
            files.set_mark(self.directory, files.RESERVED, self.next_seq + HEADROOM)
            self._reserved = self.next_seq + HEADROOM

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

    # ------------------------------------------------------------------ retention

    def _finished_segments(self):
        infos = []
        for first, following in zip(self._segments, self._segments[1:], strict=False):
            if first in self._unrepaired:
                continue  # its damaged bytes are not kept aside yet
            try:
                stat = os.stat(self._path(first))
            except FileNotFoundError:
                continue
            infos.append(SegmentInfo(first, following - 1, stat.st_size, stat.st_mtime))
        return infos

    def _prune(self, need_bytes=0):
        """Remove the games retention lets go; returns how many."""
        chosen = choose(self._finished_segments(), self.retention, self._held, time.time(), need_bytes)
        for info, unheld in chosen:
            self._keep_damage_aside(self._path(info.first))  # damaged bytes are never deleted
            os.unlink(self._path(info.first))
            self._segments.remove(info.first)
            if unheld:
                self._note(
                    f"seq {info.first}-{info.last} pruned before the director held it, to make room",
                    {"pruned": [info.first, info.last]},
                )
        if chosen:
            files.fsync_dir(self.directory)
            self._first_disk_seq = self._segments[0] if self._segments else None
        return len(chosen)

    def _keep_damage_aside(self, path):
        """Before a finished game goes: if its file was damaged after it was written (read back
        only a line at a time since, which leaves bad lines out), copy it into `damaged/` and say so.
        Raises OSError if the copy cannot be made: then the game is not pruned."""
        segment = files.Segment(path)
        if segment.needs_repair:
            kept = segment.keep_aside()
            lines = ", ".join(f"line {number}: {what}" for number, what in segment.problems) or "its end"
            self._note(
                f"{os.path.basename(path)} damaged ({lines}); pruned as retention says, its bytes "
                f"kept as {os.path.relpath(kept, self.directory)}",
                {},
            )

    def _make_room(self):
        """The card is full: prune the oldest finished game (held ones first) to go on writing."""
        try:
            return self._prune(need_bytes=1) > 0
        except OSError:
            return False

    # ------------------------------------------------------------------ this boot

    def _runtime_path(self):
        folder, _boot_id = self._runtime
        return os.path.join(folder, "journal-sent")

    def _runtime_mark(self):
        """The highest seq a run in this boot may have sent, if a run in this boot left one."""
        if self._runtime is None:
            return None
        try:
            with open(self._runtime_path()) as file:
                boot_id, seq = file.read().split()
            return int(seq) if boot_id == self._runtime[1] else None
        except (OSError, ValueError):
            return None

    def _set_runtime_mark(self, seq):
        if self._runtime is None:
            return
        path = self._runtime_path()
        try:
            with open(path + ".new", "w") as file:
                file.write(f"{self._runtime[1]} {seq}\n")
            os.replace(path + ".new", path)  # memory only (tmpfs): no fsync needed
        except OSError:
            try:
                os.unlink(path)  # better no mark than a wrong one: the reservation then holds
            except OSError:
                pass


_JUMPED = "numbering goes on from a block of seqs chosen at random, far above any a start can have used"


def _far_block(above):
    """The first seq of a block no other start can have used: where a start can neither read nor
    move the mark of used seqs, a start in a later boot would go on from the same place, so each
    goes on from a block of `JUMP_BLOCK` seqs chosen at random (one of some 100,000) above `above`
    and well clear of it, within the 12 digits of a segment's name."""
    low, high = above // JUMP_BLOCK + 2, (LAST_SEQ + 1) // JUMP_BLOCK - 1
    if low > high:
        return above  # (over 10**12 records: not in a clock's life)
    return (low + secrets.randbelow(high - low + 1)) * JUMP_BLOCK


def _segment_of(segments, seq):
    """The index of the segment that would hold `seq`, or None if it is before them all."""
    from bisect import bisect_right

    index = bisect_right(segments, seq) - 1
    return index if index >= 0 else None
