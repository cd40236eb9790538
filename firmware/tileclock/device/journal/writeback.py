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
import os

from ...wire import segments as files

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
    """The segment file records are written into, in `directory`: open, its size on disk, and
    whether it holds records written but not fsynced. `note(detail, extra)` says what it found."""

    def __init__(self, directory, note):
        self.directory = directory
        self.note = note
        #: the first seq of the segment open for writing (None: none)
        self.segment = None
        #: how many bytes of it are known to be on disk
        self.size = 0
        self._fd = None
        self._unsynced = False  # it holds records written but not fsynced

    def resume(self, segment, size):
        """Go on writing into `segment` (read at start), `size` bytes of it good."""
        self.segment, self.size = segment, size

    def begin(self, first):
        """Open a new segment from seq `first` (the one before is closed). Raises OSError."""
        self.close()
        self.segment, self.size = first, 0
        self.ensure_open()
        files.fsync_dir(self.directory)

    def leave(self):
        """Close the segment and write no more into it (new records start another)."""
        self.close()
        self.segment = None

    def write(self, lines, urgent):
        """Append `lines` (framed, no line endings) to the open segment; fsync them if `urgent`, else
        start their writeback without waiting. Raises OSError as the disk does."""
        self.ensure_open()
        data = memoryview(b"".join(line.encode("ascii") + b"\n" for line in lines))
        offset = self.size
        while data:
            written = os.pwrite(self._fd, data, offset)
            data, offset = data[written:], offset + written
        if urgent:
            os.fdatasync(self._fd)  # the segment's unhurried records before these stay with them
        else:
            start_writeback(self._fd)
        self._unsynced = not urgent
        self.size = offset

    def ensure_open(self):
        """Open the segment being written, cut back to what is known to be on disk."""
        if self._fd is not None or self.segment is None:
            return
        os.makedirs(self.directory, exist_ok=True)
        fd = os.open(
            os.path.join(self.directory, files.segment_name(self.segment)), os.O_WRONLY | os.O_CREAT, 0o644
        )
        try:
            size = os.fstat(fd).st_size
            if size != self.size:
                os.ftruncate(fd, self.size)  # a write cut off by the failure
                if size < self.size:
                    self.note(f"{files.segment_name(self.segment)} lost records the disk had taken", {})
                os.fdatasync(fd)
        except OSError:
            os.close(fd)
            raise
        self._fd = fd

    def close(self):
        """Close the open file (fsynced first if it holds unsynced records); errors are let go."""
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
