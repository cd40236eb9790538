"""A GPIO chip at the `gpiod` 2.x API boundary, for testing the gpiod pin factory off a Pi.

The kernel's gpio-sim would be the real thing, but it needs configfs and a
module this test machine cannot load, so this stands in for the chip alone:
`gpiod`'s own enums, `LineSettings` and `EdgeEvent` are used as they are, and
`request_lines` returns a request whose `fd` is a real pipe that becomes
readable when an edge is queued, as the kernel's request descriptor does.
"""

import errno
import os
import select
import threading
import types

import gpiod


class FakeChip:
    """One chip: its lines' levels (pull-ups hold an open button high) and its live request."""

    def __init__(self, path="/dev/gpiochip0"):
        self.path = path
        self.requests = []  # every request made, in order (released ones too)
        self.broken = None
        self.module = types.SimpleNamespace(
            request_lines=self.request_lines,
            line=gpiod.line,
            LineSettings=gpiod.LineSettings,
            EdgeEvent=gpiod.EdgeEvent,
            Chip=gpiod.Chip,
        )

    @property
    def request(self):
        """The live request (the last one made, if it is not released)."""
        live = [request for request in self.requests if request.fd is not None]
        return live[-1] if live else None

    def request_lines(self, path, config, consumer=None, event_buffer_size=None, output_values=None):
        if path != self.path:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        request = FakeRequest(self, config, consumer)
        self.requests.append(request)
        return request

    def press(self, offset, t_ns):
        """The button on `offset` closes: the line falls, stamped `t_ns` by the 'kernel'."""
        self.request.edge(offset, rising=False, t_ns=t_ns)

    def release(self, offset, t_ns):
        self.request.edge(offset, rising=True, t_ns=t_ns)

    def unplug(self):
        """The chip goes away: the descriptor turns readable and every read fails."""
        self.broken = OSError(errno.ENODEV, "No such device")
        os.write(self.request._write, b"!")


class FakeRequest:
    """A `gpiod.LineRequest` look-alike: `fd`, `wait_edge_events`, `read_edge_events`, values,
    reconfigure, release."""

    def __init__(self, chip, config, consumer):
        self.chip = chip
        self.consumer = consumer
        self.config = dict(config)
        self.reads = 0
        self._events = []
        self._seqno = 0
        self._lock = threading.Lock()
        self.fd, self._write = os.pipe()
        self.levels = {offset: self._idle_level(settings) for offset, settings in self.config.items()}

    def _idle_level(self, settings):
        return settings is None or settings.bias != gpiod.line.Bias.PULL_DOWN

    @property
    def offsets(self):
        return list(self.config)

    def settings(self, offset):
        return self.config[offset]

    def edge(self, offset, rising, t_ns):
        with self._lock:
            self.levels[offset] = rising
            if self.config[offset].edge_detection in (gpiod.line.Edge.NONE, None):
                return
            self._seqno += 1
            kind = gpiod.EdgeEvent.Type.RISING_EDGE if rising else gpiod.EdgeEvent.Type.FALLING_EDGE
            self._events.append(gpiod.EdgeEvent(kind.value, t_ns, offset, self._seqno, self._seqno))
        os.write(self._write, b"!")

    def wait_edge_events(self, timeout=None):
        """Whether edges are ready to read, waiting up to `timeout` s (None: for ever), as gpiod's own
        does: a `select` on the descriptor."""
        if self.fd is None:
            raise gpiod.RequestReleasedError()
        return bool(select.select([self.fd], [], [], timeout)[0])

    def read_edge_events(self, max_events=None):
        self.reads += 1
        if self.chip.broken:
            raise self.chip.broken
        os.read(self.fd, 4096)
        with self._lock:
            events, self._events = self._events, []
        return events

    def get_value(self, offset):
        Value = gpiod.line.Value
        return Value.ACTIVE if self.levels[offset] else Value.INACTIVE

    def set_value(self, offset, value):
        self.levels[offset] = value == gpiod.line.Value.ACTIVE

    def reconfigure_lines(self, config):
        assert set(config) == set(self.config), "reconfigure names every requested line"
        self.config = dict(config)

    def release(self):
        if self.fd is None:
            raise gpiod.RequestReleasedError()
        os.close(self.fd)
        os.close(self._write)
        self.fd = None
