"""The line to the director: records out from the journal, commands in, never blocking the clock.

The port is opened non-blocking (`write_timeout=0`): each wake writes what the
port takes and keeps the rest for later, so a cable pulled or a reader that
stopped reading costs the clock nothing. A failed open or write closes the
port and marks the link failing; the next wake opens it again and sends on
from the first record the director has not had. A line cut off by a failure
is sent again whole.
"""

import logging
import queue
import select
from collections import deque

import serial

from ...clock.timecode import NS_PER_S
from ...wire.protocol import MAX_COMMAND
from .resends import STREAM_NS, Resends

log = logging.getLogger(__name__)


class SerialLink:
    """Sends the journal's records over a pyserial port (any pyserial URL) and reads commands.

    Three kinds of line go out, in this order of priority: live records (as the journal takes
    them), answers to `status` (only the newest waits), and resends (`Resends`: merged ranges,
    read from the journal a line at a time as the port takes them, so a flood of `resend 0` costs
    one pass over the journal and no memory).
    """

    part = "serial"
    #: commands on the serial line come unsealed (the cable is the director's own)
    seal = None
    #: resend lines written per wake at most, so a long resend never holds the loop up
    RESEND_PER_PUMP = Resends.PER_WAKE
    #: bytes the port may hold unsent before a resend line waits (a live record never waits for it)
    OUTQ_LIMIT = 512
    #: how soon after a wake the loop wakes to write what the port would not take (or could not)
    RETRY_NS = NS_PER_S

    def __init__(self, journal, url, baudrate=115200, accepts_commands=None):
        self.journal = journal
        self.url = url
        self.baudrate = baudrate
        # a loop:// port reads back what it wrote: that is output, not commands
        self.accepts_commands = (
            not url.startswith("loop://") if accepts_commands is None else accepts_commands
        )
        self.port = None
        self.next_seq = journal.next_seq  # records journaled before this start are resent on request
        self.failing = None
        self.faults = 0
        self._resends = Resends(journal)
        self._answers = deque(maxlen=1)
        self._current = None  # (kind, seq, bytes not yet written) of the line being sent
        self._incoming = b""
        self._skipping = False  # inside an over-long line, until its end

    @property
    def pending(self):
        """Whether lines are waiting to go out."""
        live = self.next_seq < self.journal.settled_seq
        return bool(self._current or self._answers or self._resends or live)

    @property
    def streaming(self):
        """Whether a resend is under way (the loop then wakes again soon to send on)."""
        return bool(self._resends)

    def next_wake_ns(self, woke_ns):
        """When the loop must wake for the line, having last woken at `woke_ns`: soon while a resend
        streams out (`STREAM_NS`), within `RETRY_NS` while lines wait for the port; else None."""
        if self.streaming:
            return woke_ns + STREAM_NS
        return woke_ns + self.RETRY_NS if self.pending else None

    def resend(self, first, last):
        """Owe records `first`..`last` (those already sent live; later ones go out live anyway).

        The seqs the journal turns out not to hold are known as the resend streams, and
        `take_missing` names them when it is over."""
        self._resends.ask(first, min(last, self.next_seq - 1))

    def answer(self, line):
        """Send `line` (an answer that is not a record) after the live records; a newer one replaces it."""
        self._answers.append(line.encode("ascii") + b"\n")

    def take_missing(self):
        """The seqs asked for that the journal does not hold, once each resend pass is over, as text."""
        return self._resends.take_missing()

    def pump(self):
        """Write as much as the port takes now."""
        if not self._ensure_open():
            return
        budget = self.RESEND_PER_PUMP
        try:
            while True:
                if self._current is None:
                    self._current = self._take(budget)
                    if self._current is None:
                        break
                    budget -= self._current[0] == "resend"
                kind, seq, data = self._current
                if not self._writable():
                    break
                written = self.port.write(data)
                written = len(data) if written is None else written
                self._current = (kind, seq, data[written:]) if written < len(data) else None
                if self._current:
                    break  # the port takes no more for now
        except (serial.SerialException, OSError, queue.Full) as error:  # loop:// raises queue.Full
            self._fail(error)
            return
        self.failing = None

    def read_lines(self):
        """Complete command lines received since the last call (an over-long one comes back cut, to be refused)."""
        if not self.accepts_commands or not self._ensure_open():
            return []
        try:
            self._incoming += self.port.read(self.port.in_waiting or 0)
        except (serial.SerialException, OSError) as error:
            self._fail(error)
            return []
        lines = []
        while True:
            end = self._incoming.find(b"\n")
            if end < 0:
                if len(self._incoming) > MAX_COMMAND:
                    if not self._skipping:
                        lines.append(self._incoming[: MAX_COMMAND + 1])
                    self._skipping = True
                    self._incoming = b""
                return lines
            line, self._incoming = self._incoming[:end].rstrip(b"\r"), self._incoming[end + 1 :]
            if self._skipping:
                self._skipping = False
                continue
            lines.append(line)

    def _writable(self):
        # pyserial's non-blocking write spins on EAGAIN when the device takes nothing: only write
        # when the device has room (a tty is writable once some hundreds of bytes are free)
        fd = self.fileno()
        return fd is None or bool(select.select([], [fd], [], 0)[1])

    def fileno(self):
        """The open port's file descriptor, for a reader thread to wait on, or None."""
        try:
            return self.port.fileno() if self.port else None
        except (AttributeError, OSError, serial.SerialException):
            return None

    def close(self):
        if self.port:
            self.port.close()
            self.port = None

    def _take(self, budget):
        """The next line to send: (kind, seq, bytes), or None."""
        live = self._next_live()
        if live is not None:
            return ("live", live[0], live[1].encode("ascii") + b"\n")
        if self._answers:
            return ("answer", None, self._answers.popleft())
        if budget > 0 and self._resends and self._room():
            owed = self._resends.next()
            if owed is not None:
                return ("resend", owed[0], owed[1].encode("ascii") + b"\n")
        return None

    def _next_live(self):
        while self.next_seq < self.journal.settled_seq:  # only what has been through the journal's write
            seq = self.next_seq
            self.next_seq += 1
            line = self.journal.line(seq)  # from memory; from disk if the line fell far behind
            if line is not None:
                return seq, line
        return None

    def _room(self):
        try:
            return (self.port.out_waiting or 0) < self.OUTQ_LIMIT
        except (AttributeError, OSError, NotImplementedError, serial.SerialException):
            return True

    def _ensure_open(self):
        if self.port is not None:
            return True
        # non-blocking writes; pyserial's loop:// fails every write with write_timeout=0 (it models
        # the baud rate), so the simulator's loop gets a bound instead (it never waits: it is read out)
        write_timeout = 1 if self.url.startswith("loop://") else 0
        try:
            self.port = serial.serial_for_url(
                self.url, baudrate=self.baudrate, timeout=0, write_timeout=write_timeout
            )
        except (serial.SerialException, OSError, ValueError) as error:
            self._fail(error)
            return False
        return True

    def _fail(self, error):
        self.faults += 1
        if self.failing is None:
            log.warning("serial link %s: %s", self.url, error)
        self.failing = str(error) or type(error).__name__
        if self._current is not None:  # send the cut line again, whole
            kind, seq, _ = self._current
            if kind == "live":
                self.next_seq = min(self.next_seq, seq)
            elif kind == "resend":
                self._resends.give_back(seq)
            self._current = None
        if self.port is not None:
            try:
                self.port.close()
            except (serial.SerialException, OSError):
                pass
            self.port = None
