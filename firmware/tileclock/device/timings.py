"""Where each wake's time goes, for the benchmark: `tileclock run --timings FILE`.

For every wake that did something (an edge, a record, bytes to the panels),
one JSON line: the edges it applied with their stamps, the records it made,
the instants (monotonic ns) its panels were done, its records were written
and fsynced, and they were handed to the links, and each panel bus's bytes and
transactions, in all and up to the `turn` mark (the turn marks sent first;
when the panels are simulated: a real bus takes its time inside the panels'
step). Kept in memory while the clock runs, written when it stops,
so measuring costs the loop a few clock reads a wake and no I/O. The first
line says what the panels' buses carried before the first wake: each panel's
start-up and the first game's frame (`boot_buses`), the bench's boot to clock.
"""

import json
import time
from collections import deque

#: At most this many wakes are kept (the newest): an hour of presses at a few a second.
LIMIT = 100_000


class WakeTimings:
    """Collects one row per wake; `save()` writes them to `path`."""

    def __init__(self, path, buses=None, now_ns=time.monotonic_ns):
        self.path = path
        #: {side: bus}: read at each wake (the panels open, and their buses appear, as the clock is built)
        self._buses = buses if buses is not None else {}
        self.now_ns = now_ns
        self.rows = deque(maxlen=LIMIT)
        self._row = None
        #: what each bus carried before the loop's first wake: the panels' start-up, the first frame
        #: (counted at that wake, so the timings may be handed to the loop before the clock boots)
        self.boot_buses = None

    def _per_bus(self):
        return [(bus.bytes_on_wire(), bus.transactions) for bus in self._buses.values()]

    def _since_begin(self):
        return [[b - b0, t - t0] for (b, t), (b0, t0) in zip(self._per_bus(), self._bus_before, strict=True)]

    def begin(self, edges):
        """A wake starts, with these `(t_ns, button, down)` edges."""
        if self.boot_buses is None:
            self.boot_buses = [list(counts) for counts in self._per_bus()]
        self._row = {
            "woke_ns": self.now_ns(),
            "edges": [[button, down, t_ns] for t_ns, button, down in edges if button is not None],
            "records": [],
        }
        self._bus_before = self._per_bus()

    def records(self, records, t0_ns):
        """The records made, each with its exact instant (monotonic ns) where it carries one."""
        if self._row is not None:
            self._row["records"] += [
                [record.seq, record.ev, t0_ns + record.extra["at_ns"] if "at_ns" in record.extra else None]
                for record in records
            ]

    def mark(self, name):
        """`name`_ns: now (`turn`, `panels`, `journaled`, `sent`); at `turn`, each bus's bytes and
        transactions so far in this wake (`turn_buses`)."""
        if self._row is not None:
            self._row[f"{name}_ns"] = self.now_ns()
            if name == "turn":
                self._row["turn_buses"] = self._since_begin()

    def end(self):
        row, self._row = self._row, None
        if row is None:
            return
        row["buses"] = self._since_begin()
        row["bus_bytes"] = sum(nbytes for nbytes, _ in row["buses"])
        row["bus_transactions"] = sum(transactions for _, transactions in row["buses"])
        if row["edges"] or row["records"] or row["bus_bytes"]:
            self.rows.append(row)

    def save(self):
        """Write every row kept, one JSON object a line."""
        with open(self.path, "w", encoding="ascii") as file:
            boot_buses = self.boot_buses or [list(counts) for counts in self._per_bus()]  # (no wake)
            file.write(json.dumps({"boot_buses": boot_buses}) + "\n")
            for row in self.rows:
                file.write(json.dumps(row, separators=(",", ":")) + "\n")


def load(path):
    """The wakes' rows a run wrote."""
    return [row for row in _lines(path) if "boot_buses" not in row]


def load_boot(path):
    """What each panel bus carried before the first wake (`[bytes, transactions]` a bus), or None."""
    return next((row["boot_buses"] for row in _lines(path) if "boot_buses" in row), None)


def _lines(path):
    with open(path, encoding="ascii") as file:
        return [json.loads(line) for line in file if line.strip()]
