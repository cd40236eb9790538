"""A clock on a serial line as a test drives it: the records read off the line, and a command
written into it for the clock's loop to wake for."""

import select
import time

from tileclock.clock.timecode import NS_PER_S
from tileclock.wire.protocol import unframe

S = NS_PER_S


def records(lines):
    return [unframe(line) for line in lines]


def deliver(sim, plug, data):
    """Write `data` into the line and wait (on the port, up to 5 s) until the clock can read all of it."""
    data = data if isinstance(data, bytes) else data.encode("ascii")
    plug.write(data)
    deadline = time.monotonic() + 30  # for a hang, not a speed
    while sim.link.port.in_waiting < len(data):
        assert time.monotonic() < deadline, f"the clock's port never had {data!r}"
        select.select([sim.link.fileno()], [], [], 0.01)


def command(sim, plug, text, t_s):
    """Send a command line and let the clock's loop wake for it."""
    deliver(sim, plug, text + "\n")
    sim.daemon.pump(int(t_s * S))
