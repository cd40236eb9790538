"""The journal: every record the clock makes, framed and on disk before it is sent anywhere.

The loop appends a wake's records in memory (`append(..., sync=False)`), shows
them on the panels, then writes and fsyncs them together (`write_pending`); the
links send only records that have been through that write (`settled_seq`).
The serial link, resends and exports all read from here. Reading a journal back keeps every good record
up to the first damaged line (a write cut off by a power cut, a bad checksum);
the damaged file is kept aside for the director, never deleted, and the journal
goes on from the last good record.
"""

import logging
import os

from ..clock.protocol import FrameError, frame, unframe
from ..clock.records import encode

log = logging.getLogger(__name__)


class Journal:
    """Records by `seq`, in memory and (with a `path`) in an append-only file."""

    def __init__(self, path=None):
        self.path = path
        self.lines = []  # framed lines, contiguous in seq from first_seq
        self.first_seq = 0
        self.damage = None  # what was wrong with the file at start, if anything
        self.kept_aside = None  # where the damaged file was moved
        self.failing = None  # the last write error, while the disk does not take records
        self._file = None
        self._written = 0  # how many of `lines` are on disk
        self._settled = 0  # how many of `lines` have been through a write (on disk, or the disk refused)
        if path:
            self._load()
            self._written = self._settled = len(self.lines)
            self._file = open(path, "ab")

    @property
    def next_seq(self):
        """The seq the next record must carry."""
        return self.first_seq + len(self.lines)

    part = "journal"

    @property
    def settled_seq(self):
        """The seq after the last record that has been through a write: what the links may send.

        If the disk fails (full, or the card gone) its records are settled all the same: kept in
        memory, still sent, and written with the next write or retry that gets through, so a write
        error never stops the clock or the record line.
        """
        return self.first_seq + self._settled

    def append(self, record, sync=True):
        """Frame `record` and keep it; with `sync`, write it and fsync now (else at the next
        `write_pending`). Returns the framed line."""
        if record.seq != self.next_seq:
            raise ValueError(f"journal expects seq {self.next_seq}, got {record.seq}")
        line = frame(encode(record))
        self.lines.append(line)
        if self._file is None:
            self._settled = len(self.lines)  # a journal in memory only: nothing to wait for
        elif sync:
            self.write_pending()
        return line

    @property
    def pending(self):
        """Whether records wait to be written to disk (or the last write failed: the disk is in doubt)."""
        return self._file is not None and (self._written < len(self.lines) or self.failing is not None)

    def write_pending(self):
        """Write and fsync every record not yet on disk (one fsync for them all)."""
        if not self.pending:
            return
        self._settled = len(self.lines)
        try:
            self._file.write(b"".join(line.encode("ascii") + b"\n" for line in self.lines[self._written :]))
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as error:
            if self.failing is None:
                log.error("journal %s: %s", self.path, error)
            self.failing = str(error)
            self._reopen()
            return
        self._written = len(self.lines)
        self.failing = None

    def _reopen(self):
        # after a failed write the file's buffer may hold part of a line: start again from what is on disk
        try:
            self._file.close()
        except OSError:
            pass
        self._load_written()
        self._file = open(self.path, "ab")

    def line(self, seq):
        """The framed line of record `seq`, or None if the journal does not hold it."""
        index = seq - self.first_seq
        return self.lines[index] if 0 <= index < len(self.lines) else None

    def records(self):
        """Every record held, decoded, in seq order."""
        return [unframe(line) for line in self.lines]

    def close(self):
        if self._file:
            self._file.close()
            self._file = None

    def _load(self):
        try:
            with open(self.path, "rb") as file:
                data = file.read()
        except FileNotFoundError:
            return
        good, problem = [], None
        chunks = data.split(b"\n")
        for number, raw in enumerate(chunks, start=1):
            if not raw:
                continue
            try:
                record = unframe(raw.decode("ascii"))
            except (UnicodeDecodeError, FrameError) as error:
                cut = number == len(chunks)  # no line ending after it: the write never finished
                problem = f"line {number}: " + ("the record was cut off mid-write" if cut else str(error))
                break
            if good and record["seq"] != good[-1][0] + 1:
                problem = f"line {number}: seq {record['seq']} follows {good[-1][0]}"
                break
            good.append((record["seq"], raw.decode("ascii")))
        if good:
            self.first_seq = good[0][0]
            self.lines = [line for _, line in good]
        if problem or (data and not data.endswith(b"\n")):
            if problem:
                self.damage = problem
                self.kept_aside = _free_name(self.path + ".damaged")
                os.replace(self.path, self.kept_aside)
                log.warning("journal %s: %s; kept aside as %s", self.path, problem, self.kept_aside)
            self._rewrite()

    def _load_written(self):
        """After a failed write: how many records really are on disk, the file cut back to them."""
        try:
            with open(self.path, "rb") as file:
                data = file.read()
        except OSError:
            return
        whole = data[: data.rfind(b"\n") + 1]
        count = whole.count(b"\n")
        if len(whole) != len(data):
            with open(self.path, "r+b") as file:
                file.truncate(len(whole))
        self._written = min(count, len(self.lines))

    def _rewrite(self):
        """Write the good lines as the whole journal (after damage, or a lost final line ending)."""
        temporary = self.path + ".new"
        with open(temporary, "wb") as file:
            file.write(b"".join(line.encode("ascii") + b"\n" for line in self.lines))
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, self.path)


def _free_name(base):
    name, number = base, 1
    while os.path.exists(name):
        number += 1
        name = f"{base}.{number}"
    return name
