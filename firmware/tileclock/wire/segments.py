"""The journal's files: one segment a game, marks kept in file names, damaged bytes kept aside.

A journal is a folder:

- `000000000412.log`: a segment, named by the seq of its first record: the framed lines, one a
  line. A segment begins at a `new_game` (with the `boot` before it, at a power-on), so the
  last segment holds the game a restart takes up, and start-up reads nothing else.
- `reserved-N`: no record below seq N may be numbered again (durable: kept ahead of the records
  sent, so that records sent while the disk failed are never renumbered after a restart).
- `collected-N`, `exported-N`: the director holds every record up to seq N (an `ack` on the
  line, or `tileclock export`): games up to there may be pruned.
- `damaged/`: the bytes of every segment found damaged, as they were; never deleted.

Marks are empty files whose name is the value, moved by `rename` (atomic, and it needs no free
block on a full card). Every file is replaced the same way: write a new one, fsync it, rename it
over, fsync the folder, so there is never an instant without a readable journal.
"""

import os
import re
import zlib

from .decoder import Reason
from .protocol import FrameError, unframe

SEGMENT = re.compile(r"^(\d{12,})\.log$")
RESERVED, COLLECTED, EXPORTED = "reserved-", "collected-", "exported-"
DAMAGED = "damaged"


def segment_name(first_seq):
    """The file name of the segment whose first record has seq `first_seq`."""
    return f"{first_seq:012d}.log"


def list_segments(directory):
    """The first seqs of the segments in `directory`, in order (OSError if it cannot be listed)."""
    return sorted(int(m.group(1)) for m in map(SEGMENT.match, os.listdir(directory)) if m)


def read_mark(directory, prefix):
    """The value of mark `prefix` (the largest, if a cut-off move left two), or None."""
    values = [int(name[len(prefix) :]) for name in os.listdir(directory) if _is_mark(name, prefix)]
    return max(values) if values else None


def set_mark(directory, prefix, value):
    """Make mark `prefix` say `value` (durably; OSError if the disk will not take it)."""
    old = [name for name in os.listdir(directory) if _is_mark(name, prefix)]
    target = os.path.join(directory, f"{prefix}{value}")
    if old:
        os.rename(os.path.join(directory, old[0]), target)
        for name in old[1:]:
            if name != f"{prefix}{value}":
                os.unlink(os.path.join(directory, name))
    else:
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    fsync_dir(directory)


def _is_mark(name, prefix):
    return name.startswith(prefix) and name[len(prefix) :].isdigit()


def fsync_dir(directory):
    """Make the folder's entries (a new, renamed or removed file) durable."""
    _fsync_path(directory, os.O_RDONLY | os.O_DIRECTORY)


def fsync_file(path):
    """Make the bytes written to the file at `path` durable (written through another descriptor)."""
    _fsync_path(path, os.O_RDONLY)


def _fsync_path(path, flags):
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(path, data, mode=None, gid=None):
    """Write `data` as the whole of `path`: new file, fsync, rename over, fsync the folder. A power
    cut leaves the old file or the new one, never a part. `mode` None: 0644 under the umask (and
    none at all on FAT, which has no modes); else exactly `mode`, from the moment it exists.
    `gid`: the group it is given (its owner root)."""
    os.replace(write_aside(path, data, mode, gid), path)
    fsync_dir(os.path.dirname(path) or ".")


def write_aside(path, data, mode=None, gid=None):
    """The first half of `replace_file`, for a caller with a step between: `data` written whole
    and synced to `path` + ".new" (returned), to be renamed over `path`.

    The new file is made afresh: whatever an earlier crash (or anyone) left at `path` + ".new" is
    removed first, never written through. Opened as it was, a symlink planted there wrote `data`
    wherever it pointed (outside the folder), a hard link rewrote its other name, and a leftover
    file handed its own mode and owner to the new one."""
    temporary = path + ".new"
    try:
        os.unlink(temporary)  # the link itself, not what it names (a folder there: the open fails)
    except FileNotFoundError:
        pass
    # O_EXCL: nothing made there since is followed or reused (it fails instead)
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW
    fd = os.open(temporary, flags, 0o644 if mode is None else mode)
    try:
        if mode is not None:
            os.fchmod(fd, mode)  # the umask may have taken bits off
        if gid is not None:
            os.fchown(fd, 0, gid)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    return temporary


def parse_line(raw):
    """The record a journal line (bytes, no line ending) stands for, its integrity field and every
    field checked (a record with a good CRC but a missing or mistyped field is damage too);
    FrameError says what is wrong."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise FrameError(Reason.NOT_TEXT, "not ASCII") from None
    return unframe(text)


class Segment:
    """One segment file read and checked: its good records, and what was wrong with the rest."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as file:
            self.data = file.read()
        self.entries = []  # (seq, line, record) of every good line, in order
        self.numbers = {}  # seq -> its line number in the file
        self.problems = []  # (line number, what is wrong) of every bad line
        self.torn = False  # the last line has no line ending: a write cut off (or only its ending)
        chunks = self.data.split(b"\n")
        if chunks[-1]:
            self.torn = True
        for number, raw in enumerate(chunks, start=1):
            if not raw:
                continue
            try:
                record = parse_line(raw)
            except FrameError as error:
                cut = number == len(chunks)
                self.problems.append((number, "cut off mid-write" if cut else str(error)))
                continue
            if self.entries and record["seq"] <= self.entries[-1][0]:
                self.problems.append((number, f"seq {record['seq']} after {self.entries[-1][0]}"))
                continue
            self.entries.append((record["seq"], raw.decode("ascii"), record))
            self.numbers[record["seq"]] = number

    def reject(self, whys):
        """Count the records `whys` names (seq -> what is wrong) as damaged lines; returns how many
        this segment held."""
        held = [entry for entry in self.entries if entry[0] in whys]
        self.entries = [entry for entry in self.entries if entry[0] not in whys]
        self.problems = sorted(self.problems + [(self.numbers[seq], whys[seq]) for seq, _, _ in held])
        return len(held)

    @property
    def needs_repair(self):
        """Whether the file must be rewritten: a bad line, or a last line without its ending."""
        return bool(self.problems) or self.torn

    @property
    def clean_bytes(self):
        """The good lines, as the file should hold them."""
        return b"".join(line.encode("ascii") + b"\n" for _, line, _ in self.entries)

    def keep_aside(self):
        """Copy the damaged file, byte for byte, into `damaged/` (once); returns its path."""
        folder = os.path.join(os.path.dirname(self.path), DAMAGED)
        os.makedirs(folder, exist_ok=True)
        name = os.path.basename(self.path)
        kept = os.path.join(folder, f"{name[:-4]}-{zlib.crc32(self.data):08x}.log")
        if not os.path.exists(kept):
            replace_file(kept, self.data)
        return kept

    def repair(self):
        """Keep the damaged bytes aside, then rewrite the segment with its good lines only;
        returns where the damaged bytes are (OSError if the disk will not take it)."""
        kept = self.keep_aside() if self.problems else None
        replace_file(self.path, self.clean_bytes)
        return kept


def iter_lines(path):
    """(seq, line, record) of every good line of one segment, read as it goes (damaged lines left out)."""
    with open(path, "rb") as file:
        previous = -1
        for raw in file:
            if not raw.endswith(b"\n"):
                return  # cut off mid-write (or being written)
            try:
                record = parse_line(raw[:-1])
            except FrameError:
                continue
            if record["seq"] > previous:
                previous = record["seq"]
                yield previous, raw[:-1].decode("ascii"), record
