"""The clock's one loop: inputs in, records out, screens refreshed; it sleeps until something can change.

Pin backends call `post_edge` from their own threads; everything else happens
on the loop's thread, in time order. The same `Daemon` serves the service on a
Pi (real monotonic time, `run_forever`) and the simulator (virtual time,
driven step by step through `pump`).
"""

import queue
import time

from .timecode import NS_PER_MS, NS_PER_S

#: How long after a deadline the loop wakes, so that an edge stamped just
#: before it (still on its way from the pin backend's thread) is applied first.
DEADLINE_GRACE_NS = 2 * NS_PER_MS


class Daemon:
    """Feeds the clock, publishes its records to `sinks`, and shows its view on `panels`."""

    def __init__(self, clock, panels=(), sinks=(), refresh_on_ticks=True):
        self.clock = clock
        self.panels = list(panels)
        self.sinks = list(sinks)
        self.refresh_on_ticks = refresh_on_ticks
        self.inputs = queue.SimpleQueue()
        self.wakeups = 0
        self.frames = {}

    def post_edge(self, button, down, t_ns):
        """A raw button edge, from any thread."""
        self.inputs.put((t_ns, button, down))

    def boot(self, now_ns):
        """Open the first game and show it."""
        self._publish(self.clock.new_game(now_ns))
        self.refresh(now_ns)

    def pump(self, now_ns):
        """Apply every queued edge in time order, run the clock on to `now_ns`, refresh the screens."""
        self.wakeups += 1
        edges = []
        while True:
            try:
                edges.append(self.inputs.get_nowait())
            except queue.Empty:
                break
        edges.sort(key=lambda edge: edge[0])
        made = 0
        for t_ns, button, down in edges:
            made += self._publish(self.clock.edge(button, down, t_ns))
        made += self._publish(self.clock.advance(now_ns))
        if made or self.refresh_on_ticks:
            self.refresh(now_ns)

    def finish(self, now_ns):
        """Run on to `now_ns` and publish a final `status` record."""
        self.pump(now_ns)
        self._publish(self.clock.status(now_ns))
        self.refresh(now_ns)

    def refresh(self, now_ns):
        view = self.clock.view(now_ns)
        for output in self.panels:
            self.frames[output.panel.faces] = output.show(view)

    def _publish(self, records):
        for record in records:
            for sink in self.sinks:
                sink.write(record)
        return len(records)

    def run_forever(self, now_ns=time.monotonic_ns, should_stop=lambda: False, on_wake=None):
        """The service's loop: sleep until the next edge or the clock's next deadline."""
        self.boot(now_ns())
        while not should_stop():
            deadline = self.clock.next_deadline()
            timeout = None if deadline is None else max(0, deadline + DEADLINE_GRACE_NS - now_ns()) / NS_PER_S
            try:
                self.inputs.put(self.inputs.get(timeout=timeout))  # wait, then let pump take it in order
            except queue.Empty:
                pass
            self.pump(now_ns())
            if on_wake:
                on_wake()
