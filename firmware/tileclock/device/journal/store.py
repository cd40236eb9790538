"""The journal's segments on disk: which there are, reading them back, and repairing damaged ones.

A damaged segment costs its damaged records alone: its good lines are written
back and its bytes kept aside (`damaged/`), never deleted; if the disk will not
take the repair the segment waits (`unrepaired`), and nothing is written into it,
pruned or cut meanwhile. The segment being written is `writeback.SegmentWriter`'s.
"""

import errno
import logging
import os
from bisect import bisect_right

from ...wire import segments as files

log = logging.getLogger(__name__)


class SegmentStore:
    """The segment files in `directory`, by first seq. `note(detail, extra)` says what it found
    (the journal's faults); `fail(error)` is told of a disk error the journal must show."""

    def __init__(self, directory, note, fail):
        self.directory = directory
        self.note = note
        self.fail = fail
        #: first seqs of the segments on disk, oldest first
        self.segments = []
        #: the oldest seq on disk as read at start or after a prune (None: none known)
        self.first_disk_seq = None
        #: the folder could not be read at start: nothing is written into it until it can
        self.blind = False
        self._cached = None  # (first seq, {seq: line}) of the last segment `line` read from disk
        #: segments whose repair waits for the disk (first seq -> the records to leave out, and why):
        #: nothing is written into them, or pruned, or cut, until their bytes are kept aside
        self._unrepaired = {}

    def path(self, first):
        """The file of the segment that begins at seq `first`."""
        return os.path.join(self.directory, files.segment_name(first))

    def scan(self):
        """Read which segments there are (at start). Raises OSError if the folder cannot be read."""
        self.segments = files.list_segments(self.directory)

    def add(self, first):
        """A new segment from seq `first` is on disk; returns whether it was not known before."""
        if first in self.segments:
            return False
        self.segments.append(first)
        return True

    def remove(self, first):
        """Delete the segment from seq `first` (pruned). Raises OSError as unlink does."""
        os.unlink(self.path(first))
        self.segments.remove(first)

    def removed(self):
        """After segments were removed: make it stay, and move the oldest seq on disk."""
        files.fsync_dir(self.directory)
        self.first_disk_seq = self.segments[0] if self.segments else None

    def waits_for_repair(self, first):
        """Whether the segment from `first` is damaged and its bytes not yet kept aside."""
        return first in self._unrepaired

    def index_of(self, seq):
        """The index of the segment that would hold `seq`, or None if it is before them all."""
        index = bisect_right(self.segments, seq) - 1
        return index if index >= 0 else None

    def line(self, seq):
        """Record `seq`'s framed line as the disk holds it, or None. The last segment read is kept,
        so reading seq after seq costs one pass over each segment."""
        index = self.index_of(seq)
        if index is None:
            return None
        first = self.segments[index]
        cached = self._cached if self._cached and self._cached[0] == first else None
        if cached is None or (seq not in cached[1] and index == len(self.segments) - 1):
            try:
                lines = {got: line for got, line, _ in files.iter_lines(self.path(first))}
            except OSError:
                lines = {}
            cached = self._cached = (first, lines)
        return cached[1].get(seq)

    def forget_cache(self):
        """A segment was written back: read it again when asked."""
        self._cached = None

    def see_again(self):
        """The folder could not be read at start. Now that it answers, write into it only if it holds
        nothing this run may have numbered again (else raises OSError)."""
        os.makedirs(self.directory, exist_ok=True)
        if files.list_segments(self.directory) or files.read_mark(self.directory, files.RESERVED):
            raise OSError(
                errno.EEXIST,
                "the journal can be read again and holds records from before "
                "this start: restart tileclock to go on from them",
            )
        self.blind = False

    def load(self, first):
        """Read one segment and repair it if it is damaged (good lines kept, the bytes kept aside);
        None if it cannot be read."""
        path = self.path(first)
        try:
            segment = files.Segment(path)
        except OSError as error:
            self.note(f"{os.path.basename(path)} cannot be read ({error.strerror})", {})
            return None
        segment.repaired = not segment.needs_repair
        if not segment.repaired:
            self.repair(segment)
        return segment

    def repair(self, segment, whys=None, later=False):
        """Keep a damaged segment's bytes aside and write its good lines back; say so in a note.

        If the disk will not take it, the segment waits (`unrepaired`) and the repair is tried
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
            self.fail(error)
        if segment.problems:
            lines = ", ".join(f"line {number}: {what}" for number, what in segment.problems)
            where = (
                f"kept as {os.path.relpath(kept, self.directory)}"
                if kept
                else "not repaired yet: the disk fails (nothing is cut or added before its bytes are kept)"
            )
            self.note(f"{os.path.basename(path)} damaged ({lines}); the good records are kept; {where}", {})
            log.warning("journal %s: %s damaged (%s)", self.directory, path, lines)

    def finish_repairs(self):
        """Repairs the disk would not take before: the disk takes writes now, so try them again."""
        for first, whys in list(self._unrepaired.items()):
            try:
                segment = files.Segment(self.path(first))
            except OSError as error:
                log.warning("journal %s: repairing %s: %s", self.directory, files.segment_name(first), error)
                continue
            segment.reject(whys)
            if segment.needs_repair:
                self.repair(segment, whys, later=True)
            else:
                self._unrepaired.pop(first)
