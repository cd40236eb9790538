"""An earlier version's single-file journal taken over into segments, streamed, in constant memory.

Earlier versions kept every record in one file (`journal.log` in the state
directory). On the first start of this version it is split into the journal's
segments, one a game (`segments.py`), reading a line at a time and writing each
game's segment as it goes: memory holds one line, whatever the file's size (a
300-game file once took 294 MB read whole, more than half a Pi Zero 2 W's).

A kill or power cut at any instant loses nothing: each segment is written to a
temporary file and renamed into place, its writeback started; then every
segment is fsynced (one wait for the card, not one a game) and the folder;
only then is the old file renamed `journal.log.taken-over`. Until that rename the
old file is whole, and the next start takes it over again from the beginning
(writing the same segments over any it finds). Damaged lines are left out
and the old file's bytes are copied into `damaged/`, as for a damaged segment.
"""

import os
import shutil
import zlib

from ...wire import segments as files
from ...wire.protocol import FrameError
from . import writeback

#: a line longer than this is damage, read past in pieces (no record comes near it)
MAX_LINE = 64 * 1024
#: damaged lines named one by one in the note; the rest are counted
NAMED = 20
TAKEN_OVER = ".taken-over"


class _Problems:
    """Damaged lines: the first `NAMED` with what is wrong, and how many in all."""

    def __init__(self):
        self.named = []
        self.count = 0

    def add(self, number, what):
        self.count += 1
        if len(self.named) < NAMED:
            self.named.append((number, what))

    def __str__(self):
        text = ", ".join(f"line {number}: {what}" for number, what in self.named)
        return text + (f" and {self.count - NAMED} more" if self.count > NAMED else "")


class _SegmentOut:
    """One segment being written: to `NAME.new`, fsynced and renamed into place by `close`."""

    def __init__(self, directory, first_seq):
        self.path = os.path.join(directory, files.segment_name(first_seq))
        self.file = open(self.path + ".new", "wb")
        self.has_game = False  # it holds more than `boot` records: a `new_game` starts another

    def write(self, raw, record):
        self.file.write(raw + b"\n")
        self.has_game |= record["ev"] != "boot"

    def close(self):
        """Put the segment in place, its writeback started (`take_over` waits for them all at once)."""
        self.file.flush()
        if writeback.can_start_writeback():
            try:
                writeback.start_writeback(self.file.fileno())
            except OSError:
                pass  # (it is fsynced before the old file goes, all the same)
        self.file.close()
        os.replace(self.path + ".new", self.path)
        return self.path

    def abandon(self):
        self.file.close()


def _lines(file):
    """(line number, bytes without the line ending, whether it had one) of every line, each read
    with a bounded buffer: an over-long line is given as None (damage), read past in pieces."""
    number = 0
    while True:
        raw = file.readline(MAX_LINE)
        if not raw:
            return
        number += 1
        if len(raw) == MAX_LINE and not raw.endswith(b"\n"):
            while (rest := file.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
            yield number, None, True
            continue
        ended = raw.endswith(b"\n")
        yield number, raw[:-1] if ended else raw, ended


def take_over(legacy, directory):
    """Split the single-file journal `legacy` into segments in `directory`, a game a segment, and
    rename it `legacy.taken-over`. Returns a note for the journal (what was damaged), or None.
    OSError if the disk will not take it (the old file then stays, and is taken over next time)."""
    problems, out, first_seq, previous, written = _Problems(), None, None, -1, []
    try:
        with open(legacy, "rb") as file:
            for number, raw, ended in _lines(file):
                if raw is None:
                    problems.add(number, f"longer than {MAX_LINE} bytes")
                    continue
                if not raw:
                    continue
                try:
                    record = files.parse_line(raw)
                except FrameError as error:
                    problems.add(number, str(error) if ended else "cut off mid-write")
                    continue
                if record["seq"] <= previous:
                    problems.add(number, f"seq {record['seq']} after {previous}")
                    continue
                previous = record["seq"]
                if out is None or (record["ev"] == "new_game" and out.has_game):
                    if out is not None:
                        written.append(out.close())
                    out = _SegmentOut(directory, record["seq"])
                    first_seq = record["seq"] if first_seq is None else first_seq
                out.write(raw, record)
        if out is not None:
            written.append(out.close())
            out = None
    finally:
        if out is not None:
            out.abandon()
    note = None
    if problems.count:
        _keep_aside(legacy, directory, first_seq or 0, _whole_crc(legacy))
        note = f"{os.path.basename(legacy)} damaged ({problems}); the good records are kept"
    for path in written:  # every segment on disk before the old file goes: their writeback was
        files.fsync_file(path)  # started as each was written, so the first of these waits for most of them
    files.fsync_dir(directory)  # (and their names)
    os.replace(legacy, legacy + TAKEN_OVER)
    files.fsync_dir(os.path.dirname(legacy) or ".")
    return note


def _whole_crc(path):
    """The CRC-32 of a file's bytes, read in pieces (the name of its copy in `damaged/`)."""
    crc = 0
    with open(path, "rb") as file:
        while chunk := file.read(1 << 16):
            crc = zlib.crc32(chunk, crc)
    return crc


def _keep_aside(legacy, directory, first_seq, crc):
    """Copy the old file's bytes into `damaged/` (once), streamed, named as a damaged segment's."""
    folder = os.path.join(directory, files.DAMAGED)
    os.makedirs(folder, exist_ok=True)
    kept = os.path.join(folder, f"{files.segment_name(first_seq)[:-4]}-{crc:08x}.log")
    if os.path.exists(kept):
        return
    with open(legacy, "rb") as source, open(kept + ".new", "wb") as copy:
        shutil.copyfileobj(source, copy, 1 << 16)
        copy.flush()
        os.fsync(copy.fileno())
    os.replace(kept + ".new", kept)
    files.fsync_dir(folder)
