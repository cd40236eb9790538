"""Writing a record out without waiting for the card, and how soon the filesystem makes it stay.

An fsync puts the loop's thread to sleep two or three times while the card
writes and the filesystem commits (counted here on ext4: three voluntary
context switches each). A checkpoint every 10 s while a side runs would then
cost a third of a wake-up a second on top of the display's one. A checkpoint
promises nothing to anyone (it only bounds what a power cut can lose), so it
is written and its writeback started at once with `sync_file_range`, which
does not wait; the filesystem's own commit, every few seconds, makes it stay.
Where that commit interval is not known, checkpoints are fsynced like every
other record.
"""

import ctypes
import errno
import logging
import os
from itertools import groupby, islice

from ..wire import segments as files

log = logging.getLogger(__name__)

#: sync_file_range's flag: start writing the dirty pages out, without waiting for them.
SYNC_FILE_RANGE_WRITE = 2
#: ext4's commit interval when its mount options do not set one (`commit=`), in seconds.
EXT4_DEFAULT_COMMIT_S = 5


def _load_sync_file_range():
    try:
        call = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):  # not Linux, or a libc without it
        return None
    call.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    call.restype = ctypes.c_int
    return call


_sync_file_range = _load_sync_file_range()


def can_start_writeback():
    """Whether this system can start a file's writeback without waiting (Linux's sync_file_range)."""
    return _sync_file_range is not None


def start_writeback(fd):
    """Start writing `fd`'s dirty pages to the disk; returns at once. Raises OSError as write does."""
    if _sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


def filesystem(path, mountinfo="/proc/self/mountinfo"):
    """(filesystem type, source, mount point, options) of the filesystem that holds `path`."""
    path = os.path.realpath(path)
    best = ("unknown", "", "", "")
    try:
        with open(mountinfo) as file:
            lines = file.readlines()
    except OSError:
        return best
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, super_fields = before.split(), after.split()
        if len(fields) < 6 or len(super_fields) < 2:
            continue
        point = fields[4].replace("\\040", " ")
        options = ",".join([fields[5]] + super_fields[2:3])
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best[2]):
            best = (super_fields[0], super_fields[1], point, options)
    return best


def commit_interval_ms(path, mountinfo="/proc/self/mountinfo"):
    """How long after a write (whose writeback has started) the filesystem holding `path` has
    made it stay, at most; None where that is not known (then nothing may skip its fsync)."""
    kind, _, _, options = filesystem(path, mountinfo)
    if kind != "ext4":
        return None
    seconds = EXT4_DEFAULT_COMMIT_S
    for option in options.split(","):
        if option.startswith("commit="):
            try:
                seconds = int(option[len("commit=") :]) or EXT4_DEFAULT_COMMIT_S  # commit=0: the default
            except ValueError:
                return None
    return seconds * 1000


class SegmentWriter:
    """Writing the journal's records into its open segment (a mixin of `Journal`)."""

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
                start_writeback(self._fd)
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
