"""One clock, followed over one transport: its sequence, gaps, resends, acks and identity.

Every way records reach the director (`collect`'s serial ports, the hall's broker) speaks the same
protocol with each clock (docs/protocol.md, "Delivery"): take each record once and in order
(`store.py`, `clocklog.py`), note the newest seq the clock has made (a record heard, or named by the
clock: its answer to `status`, its retained state), ask for what is missing without storms
(`resend.py`), and tell the clock when its ended games are on file (`ack`). A `ClockSession` holds
that for one clock; the feeds only read their transport and hand each record to its session.
"""

import time
from typing import Protocol

from ...wire.decoder import Reason
from ...wire.protocol import with_crc
from .resend import ResendPlan
from .store import Rejected, clock_of, shown


class Transport(Protocol):
    """How a session talks to its clock: a serial port, or the clock's topics on the broker."""

    #: where the clock's records come from, as the store records it (a port name, `hall:<clock id>`)
    name: str

    def send(self, line: str) -> object:
        """Send one command line to the clock, as it goes on the wire (its CRC already added)."""


class ClockSession:
    """One clock (`clock_id`) of `store`, followed over `transport`."""

    def __init__(self, clock_id, store, transport, clock=time.monotonic):
        self.clock_id = clock_id
        self.store = store
        self.transport = transport
        self.clock = clock
        self.resends = ResendPlan()
        #: the newest seq heard from the clock here, or named by it (-1: none yet)
        self.newest = -1
        self._acked_games = {}  # log name -> its games ended when its last `ack` was sent

    @property
    def log(self):
        """The clock's `ClockLog` in the store (its newest, after a journal replaced), or None
        before its first record."""
        return self.store.log_of(self.clock_id, self.transport.name)  # (its newest, or this port's)

    @property
    def shared(self):
        """Whether this transport carries more than one clock with this id (the broker's topics for
        two clocks given one id): no `ack` is sent then, nor records asked for past a gap, since what
        it would say reaches both clocks."""
        logs = self.store.logs_of(self.clock_id)
        return len(logs) > 1 and sum(log.port == self.transport.name for log in logs) != 1

    def mine(self, record):
        """Whether `record` (through the decoder) is this clock's: it names this clock's id (a clock
        of protocol 1 names none, and is known by its port)."""
        try:
            return clock_of(record, self.transport.name) == self.clock_id
        except Rejected:
            return False

    def take(self, record, line):
        """Store one of the clock's records (through the decoder) and its framed line; returns the
        `ClockLog`, or None if it was refused (then in the rejects file, with its reason). A record
        naming another clock is refused without marking that clock's seq as seen (a forgery must
        not stop the real one being asked for)."""
        if not self.mine(record):
            detail = f"record of clock {shown(record.get('clock'), 40)!r} on {self.transport.name}"
            self.store.reject(None, line, Rejected(Reason.FOREIGN_CLOCK, detail), self.transport.name)
            return None
        return self.store.add(record, line, self.transport.name)

    def heard(self, record):
        """Note a record stored for this clock; returns whether it is live (newer than any heard or
        named before: not a resend of older ones)."""
        live = record["seq"] > self.newest
        self.newest = max(self.newest, record["seq"])
        return live

    def named(self, seq):
        """The clock says (its answer to `status`) that it has made records up to `seq`."""
        self.newest = max(self.newest, seq)

    def settle(self, record, log=None):
        """After a record is stored: note the seqs the clock will never send, and send the `ack`
        that is due. Once a game more has ended and every record up to the last one taken is
        written, the clock is sent `ack SEQ` (SEQ the last of them), the same over every transport;
        the clock marks as held only the games its journal has closed up to there
        (docs/reliability.md, "Retention"), so an `ack` never lets it prune a game still open."""
        log = log or self.log
        log.note_unsent(record)
        if self.shared:
            return  # an `ack` would reach the other clock too, and let it prune games not on file
        if log.games > self._acked_games.get(log.clock_id, 0):
            self._acked_games[log.clock_id] = log.games
            self.transport.send(with_crc(f"ack {log.expected - 1}"))

    def ask(self):
        """Ask the clock for its missing records, if it is time to (`resend.py`): a run missing
        before a record that arrived, or the records up to the newest one it named."""
        log = self.log
        expected = log.expected if log is not None else 0
        gap = log.gap() if log is not None else None
        if gap is None and self.newest >= expected and not self.shared:
            gap = (expected, self.newest)
        wanted = self.resends.due(expected, gap, self.clock())
        if wanted:
            self.transport.send(f"resend {wanted[0]} {wanted[1]}")

    def tail_lost(self, seq):
        """The clock's state names record `seq`, which the store has not had, and nothing is on its
        way (no record waits for a gap): the transport lost the tail of the stream. Ask for it now."""
        log = self.log
        if log is None or not isinstance(seq, int) or seq < log.expected or log.pending or self.shared:
            return
        self.transport.send(f"resend {log.expected} {seq}")

    def reconnected(self):
        """The transport was closed and opened again: whatever was asked before is lost with it."""
        self.resends = ResendPlan()
