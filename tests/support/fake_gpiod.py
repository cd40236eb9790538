"""A GPIO chip at the `gpiod` 2.x API boundary, for testing the gpiod pin factory off a Pi.

The real thing is the kernel's gpio-sim, in a VM (`make pi-kernel-check`); this
stands in for the chip in the fast suite. `gpiod`'s own enums, `LineSettings`,
`EdgeEvent` and `LineInfo` are used as they are, and it refuses what the kernel
refuses:

- A line still held by a request is refused with `OSError(EBUSY)`, as the
  kernel's `gpiod_request_commit` does, whoever holds it (another process: see
  `FakeChip.hold`).
- "Held" is the kernel's view, not the caller's: a request's descriptor is one
  end of a real socketpair, and the lines stay held until the kernel releases
  that file. `release()` closes the descriptor as libgpiod does, but a thread
  blocked in `poll()` on it keeps the file (poll takes a reference on every file
  it waits on, `__pollwait` in fs/select.c) until its poll returns, exactly as
  it keeps a real line request alive. The fake sees the file released when the
  socket's other end hangs up.
- A released request's descriptor stops delivering: edges go to the request
  that holds the line in the kernel, with its edge detection (rising, falling,
  both), into a buffer of `event_buffer_size` (default 16 a line) that drops
  the oldest event when full, as gpiolib-cdev does.
- A released request refuses everything with `RequestReleasedError`, and a
  second `release()` does nothing (gpiod 2.x's `LineRequest`).
"""

import errno
import os
import select
import socket
import threading
import types

import gpiod

#: Our own poll, untouched by tests that wrap `select.poll` to watch the factory's reader.
_poll = select.poll

#: The kernel's default edge buffer: 16 events a requested line (gpiolib-cdev.c).
EVENTS_PER_LINE = 16


class FakeChip:
    """One chip: its lines' outside drive (a closed button pulls its line low) and its requests."""

    def __init__(self, path="/dev/gpiochip0", label="pinctrl-bcm2835", num_lines=54):
        self.path = path
        self.label = label
        self.num_lines = num_lines
        self.requests = []  # every request made, in order (released ones too)
        self.refused = []  # every OSError request_lines raised
        self.driven = {}  # offset -> level forced from outside (a closed button: 0); else the bias decides
        self.broken = None
        self.module = types.SimpleNamespace(
            request_lines=self.request_lines,
            line=gpiod.line,
            LineSettings=gpiod.LineSettings,
            EdgeEvent=gpiod.EdgeEvent,
            RequestReleasedError=gpiod.RequestReleasedError,
            Chip=self.open,
        )

    @property
    def request(self):
        """The live request (the last one made that its caller has not released)."""
        live = [request for request in self.requests if not request.released]
        return live[-1] if live else None

    def holder(self, offset):
        """The request the kernel holds `offset` for (its file not yet freed), or None."""
        for request in self.requests:
            if offset in request.config and request.held:
                return request
        return None

    def request_lines(self, path, config, consumer=None, event_buffer_size=None, output_values=None):
        """`gpiod.request_lines`: every line at once, or OSError(EBUSY) if any is held."""
        if path != self.path:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        flat = {}
        for key, settings in config.items():
            for offset in (key,) if isinstance(key, (int, str)) else key:
                if offset in flat:
                    raise ValueError(f"line must be configured exactly once - offset {offset} repeats")
                flat[offset] = settings
        for offset in flat:
            if not 0 <= offset < self.num_lines:
                raise ValueError(f"invalid offset {offset}")
            if self.holder(offset) is not None:
                error = OSError(errno.EBUSY, os.strerror(errno.EBUSY))
                self.refused.append(error)
                raise error
        request = FakeRequest(self, flat, consumer, event_buffer_size or EVENTS_PER_LINE * len(flat))
        self.requests.append(request)
        return request

    def hold(self, offsets, consumer):
        """Another process takes `offsets` (as `gpioget`/`gpiomon` would); returns its request."""
        return self.request_lines(self.path, {tuple(offsets): gpiod.LineSettings()}, consumer=consumer)

    def level(self, offset, settings=None):
        if offset in self.driven:
            return self.driven[offset]
        return 0 if settings is not None and settings.bias == gpiod.line.Bias.PULL_DOWN else 1

    def press(self, offset, t_ns):
        """The button on `offset` closes: the line falls, stamped `t_ns` by the 'kernel'."""
        self._drive(offset, 0, t_ns)

    def release(self, offset, t_ns):
        self._drive(offset, 1, t_ns)

    def _drive(self, offset, level, t_ns):
        self.driven[offset] = level
        holder = self.holder(offset)
        if holder is not None:
            holder.edge(offset, rising=bool(level), t_ns=t_ns)

    def unplug(self):
        """The chip goes away: every held request's descriptor turns readable and every read fails."""
        self.broken = OSError(errno.ENODEV, "No such device")
        for request in self.requests:
            if request.held:
                request.poke()

    def open(self, path):
        """`gpiod.Chip(path)`: the chip's info and its lines' info (who holds each)."""
        if path != self.path:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        return FakeChipHandle(self)


class FakeChipHandle:
    """A `gpiod.Chip` look-alike: `get_info`, `get_line_info`, a context manager."""

    def __init__(self, chip):
        self.chip = chip

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        pass

    def get_info(self):
        return types.SimpleNamespace(name=os.path.basename(self.chip.path), label=self.chip.label)

    def get_line_info(self, offset):
        holder = self.chip.holder(offset)
        settings = holder.config[offset] if holder is not None else None
        settings = settings or gpiod.LineSettings()
        return gpiod.LineInfo(
            offset,
            "",
            holder is not None,
            (holder.consumer or "?") if holder is not None else "",
            settings.direction.value,
            settings.active_low,
            settings.bias.value,
            settings.drive.value,
            settings.edge_detection.value,
            settings.event_clock.value,
            bool(settings.debounce_period),
            int(settings.debounce_period.total_seconds() * 1_000_000),
        )


class FakeRequest:
    """A `gpiod.LineRequest` look-alike: `fd`, `wait_edge_events`, `read_edge_events`, values,
    reconfigure, release."""

    def __init__(self, chip, config, consumer, buffer_size):
        self.chip = chip
        self.consumer = consumer
        self.config = dict(config)
        self.buffer_size = buffer_size
        self.reads = 0
        self.released = False
        self._events = []
        self._seqno = 0
        self._lock = threading.Lock()
        ours, self._peer = socket.socketpair()
        self._fd = ours.detach()  # the caller's descriptor; the kernel's file lives while anything holds it
        self._peer.setblocking(False)

    @property
    def held(self):
        """Whether the kernel still holds these lines: the file behind `fd` is not yet freed."""
        poller = _poll()
        poller.register(self._peer, select.POLLIN)
        return not any(events & select.POLLHUP for _, events in poller.poll(0))

    def _check_released(self):
        if self.released:
            raise gpiod.RequestReleasedError()

    @property
    def fd(self):
        self._check_released()
        return self._fd

    def fileno(self):
        return self.fd

    @property
    def offsets(self):
        self._check_released()
        return list(self.config)

    def settings(self, offset):
        return self.config[offset]

    def edge(self, offset, rising, t_ns):
        """Queue an edge as the kernel's interrupt handler would, if this line detects that edge."""
        Edge = gpiod.line.Edge
        wanted = (Edge.BOTH, Edge.RISING) if rising else (Edge.BOTH, Edge.FALLING)
        settings = self.config[offset]
        if settings is None or settings.edge_detection not in wanted:
            return
        kind = gpiod.EdgeEvent.Type.RISING_EDGE if rising else gpiod.EdgeEvent.Type.FALLING_EDGE
        with self._lock:
            self._seqno += 1
            full = len(self._events) >= self.buffer_size
            if full:
                self._events.pop(0)  # the kernel drops the oldest (kfifo_skip) and keeps the newest
            self._events.append(gpiod.EdgeEvent(kind.value, t_ns, offset, self._seqno, self._seqno))
            if not full:
                self.poke()

    def poke(self):
        """One byte per queued event: the descriptor is readable while events wait."""
        try:
            self._peer.send(b"!")
        except OSError:  # the file is gone: nobody to deliver to
            pass

    def wait_edge_events(self, timeout=None):
        """Whether edges are ready to read, waiting up to `timeout` s (None: for ever), as gpiod's own
        does: a `select` on the descriptor."""
        self._check_released()
        return bool(select.select([self._fd], [], [], timeout)[0])

    def read_edge_events(self, max_events=None):
        """The queued edges (blocking while none is queued, as the kernel's read does)."""
        self._check_released()
        self.reads += 1
        if self.chip.broken:
            raise self.chip.broken
        with self._lock:
            count = min(len(self._events), max_events or 64)
        got = os.read(self._fd, max(count, 1))
        with self._lock:
            events, self._events = self._events[: len(got)], self._events[len(got) :]
        return events

    def get_value(self, offset):
        self._check_released()
        Value = gpiod.line.Value
        return Value.ACTIVE if self.chip.level(offset, self.config[offset]) else Value.INACTIVE

    def set_value(self, offset, value):
        self._check_released()
        self.chip.driven[offset] = 1 if value == gpiod.line.Value.ACTIVE else 0

    def reconfigure_lines(self, config):
        self._check_released()
        assert set(config) == set(self.config), "reconfigure names every requested line"
        self.config = dict(config)

    def release(self):
        """Close the descriptor (as libgpiod does); the kernel frees the lines when the file goes."""
        if self.released:
            return
        self.released = True
        os.close(self._fd)
