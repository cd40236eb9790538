"""Start-up: the journal read back, from the newest segment to the last game's start, and repaired.

A damaged segment costs its damaged records alone: its good lines are written
back and its bytes kept aside (`damaged/`), never deleted; if the disk will not
take the repair it waits, and nothing is written into that segment meanwhile.
A single-file journal of an earlier version is split into segments on first start
(`takeover.py`: streamed, in constant memory, and a kill meanwhile loses nothing).
"""

import logging
import os

from ..clock.history import opening_lost, reaches_last_game
from ..wire import segments as files
from .numbering import HEADROOM, JUMPED, far_block
from .takeover import take_over

log = logging.getLogger(__name__)

#: no framed record is shorter: a damaged segment of N bytes held at most N / this many records
MIN_RECORD_BYTES = 64


class ReadBack:
    """Reading the journal's folder at start, and repairing damaged segments (a mixin of `Journal`)."""

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
            self.next_seq = runtime + 1 if runtime is not None else far_block(0)
            self._note_skipped(
                0,
                f"the journal cannot be read ({error.strerror}), so the seqs used before are unknown: "
                + ("numbering goes on from this boot's last run" if runtime is not None else JUMPED),
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
                self.next_seq = far_block(self.next_seq)
                why = f"the mark of the seqs used cannot be moved ({error.strerror}): {JUMPED}"
        # (up to a run of this boot's last seq, that run sent them or said it skipped them)
        self._note_skipped(self._good_next if runtime is None else max(self._good_next, runtime + 1), why)
        self._set_runtime_mark(self.next_seq - 1)

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
        """Split an earlier version's single-file journal into segments, streamed (takeover.py)."""
        note = take_over(legacy, self.directory)
        if note:
            self._note(note, {})
