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

from ...clock.protocol import MAX_COMMAND

log = logging.getLogger(__name__)


class SerialLink:
    """Sends the journal's records over a pyserial port (any pyserial URL) and reads commands."""

    part = "serial"

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
        self._resend = deque()
        self._current = None  # (seq, bytes not yet written) of the line being sent
        self._incoming = b""
        self._skipping = False  # inside an over-long line, until its end

    @property
    def pending(self):
        """Whether records are waiting to go out."""
        return bool(self._current or self._resend or self.next_seq < self.journal.settled_seq)

    def resend(self, first, last):
        """Queue records `first`..`last` from the journal; returns the seqs the journal does not hold."""
        missing = []
        for seq in range(first, last + 1):
            (self._resend.append(seq) if self.journal.line(seq) else missing.append(seq))
        return missing

    def pump(self):
        """Write as much as the port takes now."""
        if not self._ensure_open():
            return
        try:
            while True:
                if self._current is None:
                    seq = self._next_seq()
                    if seq is None:
                        break
                    self._current = (seq, self.journal.line(seq).encode("ascii") + b"\n")
                seq, data = self._current
                if not self._writable():
                    break
                written = self.port.write(data)
                written = len(data) if written is None else written
                self._current = (seq, data[written:]) if written < len(data) else None
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

    def _next_seq(self):
        if self._resend:
            return self._resend.popleft()
        if self.next_seq < self.journal.settled_seq:  # only what has been through the journal's write
            self.next_seq += 1
            return self.next_seq - 1
        return None

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
        if self._current is not None:
            self._resend.appendleft(self._current[0])  # send the cut line again, whole
            self._current = None
        if self.port is not None:
            try:
                self.port.close()
            except (serial.SerialException, OSError):
                pass
            self.port = None
