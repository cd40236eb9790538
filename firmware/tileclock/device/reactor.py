"""When the clock's loop wakes, and its sleep until then (a reactor, as Klipper's).

Whatever may wake the loop registers here, and the loop knows nothing of it beyond that: a timer
(`register_wake`: a part's `() -> the next instant, or None`, asked again at every sleep), a file
descriptor (`register_fd`: the serial link's port, watched by a `wakers.FdWaker` while it runs),
a signal (`register_signal`). Other threads post to its `wakers.Inbox`: the pin backend its edges
(and, where it can, hands over every edge stamped so far when the loop wakes: its `flush_edges`),
paho's thread and a script their wake-ups. `run` sleeps until the first of them and hands each
wake its inputs in time order; the simulator asks `next_deadline` and steps through virtual time
itself.
"""

from __future__ import annotations

import queue
import signal
import time
from collections.abc import Callable

from ..clock.timecode import NS_PER_MS, NS_PER_S
from .parts import Readable, WakeSource
from .wakers import FdWaker, Inbox

#: How long after a deadline the loop wakes when its pin backend cannot hand over its edges on
#: demand (gpiozero's lgpio and RPi.GPIO factories), so that an edge stamped just before the
#: deadline (still on its way from the backend's thread) is applied first, not taken late.
DEADLINE_GRACE_NS = 2 * NS_PER_MS


class Reactor:
    """What may wake the loop and when: its timers, descriptors and signals, and the `inbox` other
    threads post to; `flush_edges` (the pin backend's, a `parts.EdgeSource`'s) posts every edge it
    has stamped so far, or is None if it cannot (then the loop wakes `DEADLINE_GRACE_NS` after each
    deadline)."""

    def __init__(self, inbox: Inbox, flush_edges: Callable[[], None] | None = None) -> None:
        self.inbox = inbox
        #: (t_ns, button, down) of each input the inbox holds; button None: only a wake-up
        self.inputs = inbox.inputs
        self.flush_edges = flush_edges
        #: what may wake the loop with no input: each a () -> the next instant it must wake, or None
        self._wake_sources: list[WakeSource] = []
        self._fd_parts: list[Readable] = []  # parts whose descriptor wakes the loop (`register_fd`)

    def register_wake(self, source: WakeSource) -> None:
        """Have the loop wake by `source()` (an instant in ns, or None for no need) whenever it
        sleeps: a timer of a part, asked again at every sleep, so it may move or go away."""
        self._wake_sources.append(source)

    def register_fd(self, part: Readable) -> None:
        """Have the loop wake when `part`'s descriptor (a `parts.Readable`: the serial link's port)
        has data, while it runs (`run`: a `wakers.FdWaker` waits on it)."""
        self._fd_parts.append(part)

    def register_signal(self, signum: int, action: Callable[[], object]) -> None:
        """On signal `signum`, call `action()` and wake the loop (e.g. SIGTERM: stop); installed now."""

        def handle(_signum, _frame):
            action()
            self.inbox.wake(time.monotonic_ns())

        signal.signal(signum, handle)

    def next_deadline(self) -> int | None:
        """The next instant the loop must wake without an input: the earliest its wake sources ask
        (each registered with `register_wake`), or None."""
        due = [when for when in (source() for source in self._wake_sources) if when is not None]
        return min(due) if due else None

    @property
    def deadline_grace_ns(self) -> int:
        """How long after a deadline the loop wakes: at once when the pin backend can flush its edges
        (they are taken at the wake), else `DEADLINE_GRACE_NS` for them to arrive on their own."""
        return 0 if self.flush_edges is not None else DEADLINE_GRACE_NS

    def take_inputs(self, taken: tuple | None = None) -> list[tuple]:
        """Every input posted so far (and `taken`, one already taken off the queue), in time order:
        each (t_ns, button, down), button None for a bare wake-up.

        The pin backend's edges are flushed here first: called after the wake's instant is read,
        so every edge stamped up to it is among them."""
        if self.flush_edges is not None:
            self.flush_edges()
        inputs = [taken] if taken is not None else []
        while True:
            try:
                inputs.append(self.inputs.get_nowait())
            except queue.Empty:
                break
        inputs.sort(key=lambda edge: edge[0])
        return inputs

    def run(
        self,
        pump: Callable[[int, tuple | None], None],
        now_ns: Callable[[], int] = time.monotonic_ns,
        should_stop: Callable[[], bool] = lambda: False,
        on_wake: Callable[[], None] | None = None,
        start: Callable[[int], None] | None = None,
    ) -> None:
        """Sleep until the next input, the next deadline, or data on a registered descriptor (each
        watched by a `wakers.FdWaker` while it runs), then `pump(now, taken)`; again until
        `should_stop()`. `start(now)` first, if given, with the descriptors already watched."""
        wakers = [FdWaker(part, self.inbox.wake) for part in self._fd_parts]
        try:
            if start is not None:
                start(now_ns())
            while not should_stop():
                deadline = self.next_deadline()
                if deadline is None:
                    timeout = None
                else:
                    timeout = max(0, deadline + self.deadline_grace_ns - now_ns()) / NS_PER_S
                try:
                    taken = self.inputs.get(timeout=timeout)
                except queue.Empty:
                    taken = None
                pump(now_ns(), taken)
                for waker in wakers:
                    waker.loop_woke()  # it has read what was waiting: watch the descriptor again
                if on_wake:
                    on_wake()
        finally:
            for waker in wakers:
                waker.stop()
