"""The record line to the director: one encoded record a line, over a pyserial port."""

import logging
import queue

import serial

from ..records import encode

log = logging.getLogger(__name__)


class SerialRecordSink:
    """Writes each record as a line to an open pyserial port, never blocking the clock for long.

    The port must be opened with a `write_timeout`; a write that times out or
    fails is counted, and the clock goes on.
    """

    part = "serial"

    def __init__(self, port):
        self.port = port
        self.faults = 0
        self.failing = None  # the last error, while writes fail

    def write(self, record):
        try:
            self.port.write((encode(record) + "\n").encode("ascii"))
        except (serial.SerialException, OSError, queue.Full) as error:  # loop:// raises queue.Full when unread
            self.faults += 1
            self.failing = str(error) or type(error).__name__
            log.warning("serial write failed: %s", error)
        else:
            self.failing = None
