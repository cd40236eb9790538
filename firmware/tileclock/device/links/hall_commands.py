"""The director's commands as the uplink receives them (paho's thread), waiting for the clock's loop.

A part of `HallLink` (hall.py). A retained or empty message is no command; an `ack` sent to every
clock is ignored (its seq names one clock's records); past `MAX_COMMANDS` waiting, more are
dropped with a log line, so a flood costs the clock a bounded queue and never its time.
"""

import logging
from collections import deque

from ...wire.protocol import CommandError, parse_command

log = logging.getLogger(__name__)

#: commands waiting for the loop, at most (more are dropped, with a log line)
MAX_COMMANDS = 32


class CommandInbox:
    """Command lines taken from the broker (`take`, paho's thread) until the loop reads them."""

    def __init__(self):
        self._lines = deque()
        self._dropped = 0
        self._ignored_hall_ack = False

    def take(self, payload, retained, hall_wide):
        """Whether the message (its `payload`, `retained` or not, on the `hall_wide` topic or the
        clock's own) is a command for the loop, now waiting."""
        if retained or not payload:
            return False  # a retained command is stale by definition; an empty one only clears a retained one
        if hall_wide and _is_ack(payload):
            if not self._ignored_hall_ack:  # said once: a director that sends one sends many
                log.warning("hall: an ack sent to every clock ignored (its seq is one clock's own)")
            self._ignored_hall_ack = True
            return False
        if len(self._lines) >= MAX_COMMANDS:
            self._dropped += 1
            if self._dropped == 1 or self._dropped % 100 == 0:
                log.warning("hall: %d commands dropped (more than %d waiting)", self._dropped, MAX_COMMANDS)
            return False
        self._lines.append(bytes(payload))
        return True

    def __len__(self):
        """How many command lines wait for the loop."""
        return len(self._lines)

    def read_lines(self):
        """The command lines taken since the last call, oldest first."""
        lines = []
        while self._lines:
            lines.append(self._lines.popleft())
        return lines


def _is_ack(line):
    """Whether a command line is an `ack`: its seq names records of one clock's journal, so the
    clock takes it only on its own command topic, never on the hall-wide one."""
    try:
        return parse_command(bytes(line)).name == "ack"
    except CommandError:
        return False  # the command handler answers it as the bad line it is
