"""One serial port on the director's computer: opened, read without blocking, split into lines.

A port that cannot be opened, or fails while in use (a cable pulled), is
closed and tried again every `REOPEN_S`; `down` says why it is not open, with
the port's name and the whole reason. Nothing here knows what a record is.
"""

import os
import stat
import time

import serial
from serial.tools import list_ports

REOPEN_S = 1.0
#: A line longer than this is not a record (the longest is some hundreds of bytes): it is cut off
#: and counted, so a clock that never sends a line ending cannot fill the director's memory.
MAX_LINE = 64 * 1024


def check_port(name):
    """Refuse, before collecting, a port that can never open (ValueError naming it): a path that
    does not exist, a folder, a regular file. Once collecting, a port that goes away (a cable
    pulled) is tried again; pyserial URLs (loop://, socket://) are left to pyserial."""
    if "://" in name:
        return
    if not os.path.exists(name):
        here = sorted(port.device for port in list_ports.comports())
        seen = f"serial ports here: {' '.join(here)}" if here else "no serial port is plugged in here"
        shown = name if name.isprintable() else repr(name)  # a newline in the name: still one line
        raise ValueError(f"port {shown}: no such port ({seen})")
    if not stat.S_ISCHR(os.stat(name).st_mode):
        kind = "a folder" if os.path.isdir(name) else "a file"
        raise ValueError(f"port {name}: {kind}, not a serial port (give a device, e.g. /dev/ttyUSB0)")


class SerialPort:
    """A pyserial port (any pyserial URL) read in complete lines; `on_open` is called at each (re)open."""

    def __init__(self, name, clock=time.monotonic, baudrate=115200, on_open=None):
        self.name = name
        self.clock = clock
        self.baudrate = baudrate
        self.on_open = on_open
        self.port = None
        self.down = None  # why the port is not open (None while it is)
        self.opened = 0  # how many times it was opened
        self.overlong = 0  # lines cut off for being longer than MAX_LINE
        self._reopen_at = 0.0
        self._incoming = b""
        self._skipping = False  # inside an over-long line, until its end

    def fileno(self):
        """The open port's file descriptor, to wait on, or None."""
        try:
            return self.port.fileno() if self.port is not None else None
        except (AttributeError, OSError, serial.SerialException):
            return None

    def reopen_at(self):
        """When a port that is down will next be tried (None while it is open)."""
        return None if self.port is not None else self._reopen_at

    def read_lines(self):
        """The complete lines that arrived (without their line endings); opens the port when due."""
        if self.port is None and not self._open():
            return []
        try:
            data = self.port.read(self.port.in_waiting or 0)
        except (serial.SerialException, OSError, TypeError) as error:  # TypeError: pyserial on a gone fd
            self._lost(error)
            return []
        self._incoming += data
        *lines, self._incoming = self._incoming.split(b"\n")
        if self._skipping and lines:
            lines.pop(0)  # the end of the over-long line
            self._skipping = False
        if len(self._incoming) > MAX_LINE:
            self.overlong += 1
            self._incoming = b""
            self._skipping = True
        return [line.rstrip(b"\r") for line in lines]

    def send(self, text):
        """Write one command line; a failure marks the port down."""
        if self.port is None:
            return False
        try:
            self.port.write(text.encode("ascii") + b"\n")
        except (serial.SerialException, OSError) as error:
            self._lost(error)
            return False
        return True

    def close(self):
        if self.port is not None:
            try:
                self.port.close()
            except (serial.SerialException, OSError):
                pass
            self.port = None

    def _open(self):
        now = self.clock()
        if now < self._reopen_at:
            return False
        try:
            self.port = serial.serial_for_url(self.name, baudrate=self.baudrate, timeout=0, write_timeout=1)
        except (serial.SerialException, OSError, ValueError) as error:
            self._mark_down(error, now)
            return False
        self.down = None
        self.opened += 1
        self._incoming = b""  # a line cut by the pull is lost: the seq check will ask for it
        self._skipping = False
        if self.on_open:
            self.on_open()
        return True

    def _lost(self, error):
        self.close()
        self._mark_down(error, self.clock())

    def _mark_down(self, error, now):
        reason = str(error) or type(error).__name__
        self.down = reason if self.name in reason else f"{self.name}: {reason}"
        self._reopen_at = now + REOPEN_S
