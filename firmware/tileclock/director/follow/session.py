"""One clock, followed over one transport: its sequence, gaps, resends, acks and identity.

Every way records reach the director (`collect`'s serial ports, the hall's broker) speaks the same
protocol with each clock (docs/protocol.md, "Delivery"): take each record once and in order
(`store.py`, `clocklog.py`), note the newest seq the clock has made (a record heard, or named by the
clock: its answer to `status`, its retained state), ask for what is missing without storms
(`resend.py`), and tell the clock when its ended games are on file (`ack`). A `ClockSession` holds
that for one clock; the feeds only read their transport and hand each line to its session
(`ClockSession.receive`), which takes it through the decoder, the clock's identity, the store and
settling, and says what became of it (`Received`).

One error policy for every transport (`receive`): a line the decoder refuses whole (its integrity
good, its fields not) is kept aside in rejects.log and, if it names this clock's seq, not asked for
again; a line cut off or altered on the way is noise, and the gap it leaves is asked for; a
failure of the director's own (a bug) is kept aside too, and said loudly (a traceback on the
log, a notice for the director) rather than swallowed; the disk's errors (OSError) go to the
caller, which holds the message (the hall) or stops (collect).
"""

import logging
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from ...wire.decoder import Reason
from ...wire.protocol import FieldError, FrameError, unframe, with_crc
from .clocklog import shown
from .resend import ResendPlan
from .store import Rejected, clock_of

logger = logging.getLogger(__name__)

#: what rejects.log keeps of a line refused here (an honest record is about 300 bytes)
KEPT_CHARS = 1024


class Outcome(StrEnum):
    """What became of a line handed to `ClockSession.receive`."""

    #: taken: written to its game's file, or held until the gap before it is filled
    STORED = "stored"
    #: the store had it already (a resend, the broker's redelivery): nothing changed
    DUPLICATE = "duplicate"
    #: ahead of a gap, past the records the store holds in memory: asked for again later
    LET_GO = "let_go"
    #: whole from the clock, but not a record it should write: kept aside, not asked for again
    DAMAGED = "damaged"
    #: a record naming another clock: kept aside, marking no clock's seq as seen
    FOREIGN = "foreign"
    #: a record that fits none of its clock id's logs (`twins.py`): kept aside
    KEPT_ASIDE = "kept_aside"
    #: not text, cut off or altered on the way: noise, and the gap it leaves is asked for
    UNREADABLE = "unreadable"
    #: the director failed on it (a bug): kept aside, said loudly, asked for again with its gap
    FAILED = "failed"


#: the outcomes of a record the store took (its listeners were told of it)
TAKEN = (Outcome.STORED, Outcome.DUPLICATE, Outcome.LET_GO)


@dataclass(frozen=True)
class Received:
    """What `ClockSession.receive` made of one line: its `outcome`, the `record` (None if it could
    not be read, or names no seq of this clock), the `ClockLog` it went to (`log`, once taken),
    why it was refused (`reason`, a `wire.decoder.Reason`, and `detail`), whether it is `live`
    (newer than any heard or named before) and the `ack` line sent for it (`acked`, or None)."""

    outcome: Outcome
    record: dict | None = None
    log: object = None
    reason: Reason | None = None
    detail: str = ""
    live: bool = False
    acked: str | None = None

    @property
    def taken(self):
        """Whether the store took the record (stored, a duplicate, or let go for now)."""
        return self.outcome in TAKEN


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
            self._foreign(record, line)
            return None
        return self.store.add(record, line, self.transport.name)

    def _foreign(self, record, line):
        detail = f"record of clock {shown(record.get('clock'), 40)!r} on {self.transport.name}"
        self.store.reject(
            None, line[:KEPT_CHARS], Rejected(Reason.FOREIGN_CLOCK, detail), self.transport.name
        )
        return Received(Outcome.FOREIGN, record, reason=Reason.FOREIGN_CLOCK, detail=detail)

    def receive(self, message):
        """Take one line from the clock (`message`: its text, or its bytes as the transport gave
        them) through the decoder, this clock's identity (`mine`), the store (`RecordStore.add`),
        `heard` and `settle`; returns what became of it (`Received`). Whatever it makes go wrong is
        this line's alone, by the module's one error policy; only the disk's errors (OSError) are
        raised, for the caller to hold the line or stop."""
        try:
            return self._receive(message)
        except OSError:
            raise
        except Exception as error:  # noqa: BLE001  (one bad line must never stop the director)
            return self._failed(message, error)

    def _receive(self, message):
        source = self.transport.name
        try:
            line = (message.decode("ascii") if isinstance(message, bytes) else message).strip()
            record = unframe(line)
        except FieldError as error:
            # a damaged record marks its seq as seen only when it names this clock (a forgery on
            # another clock's transport must not stop the real one being asked for)
            own = error.record if isinstance(error.record, dict) and self.mine(error.record) else None
            self.store.reject(own, line[:KEPT_CHARS], error, source)
            return Received(Outcome.DAMAGED, own, reason=error.reason, detail=str(error))
        except (UnicodeDecodeError, FrameError) as error:
            reason = error.reason if isinstance(error, FrameError) else Reason.NOT_TEXT
            return Received(Outcome.UNREADABLE, reason=reason, detail=str(error))
        if not self.mine(record):
            return self._foreign(record, line)
        counted = self._counted()
        log = self.store.add(record, line, source)
        if log is None:
            detail = f"seq {record['seq']} of clock {self.clock_id} fits none of its logs"
            return Received(Outcome.KEPT_ASIDE, record, reason=Reason.DUPLICATE_ID, detail=detail)
        duplicates, let_go = (now - before for now, before in zip(self._counted(), counted, strict=True))
        outcome = Outcome.DUPLICATE if duplicates else Outcome.LET_GO if let_go else Outcome.STORED
        live = self.heard(record)
        acked = self.settle(record, log)  # its `ack`, if one is due
        return Received(outcome, record, log, live=live, acked=acked)

    def _counted(self):
        """The duplicates and records let go of this clock's logs so far (what `add` added to)."""
        logs = self.store.logs_of(self.clock_id)
        return sum(log.duplicates for log in logs), sum(log.let_go for log in logs)

    def _failed(self, message, error):
        """A line the director failed on (a bug of its own): kept aside with the error (marking
        nothing: its seq is asked for again with its gap), the traceback on the log, and a notice
        the director sees (the hall's console, collect's table, notices.log)."""
        source = self.transport.name
        detail = f"{type(error).__name__}: {error}"
        logger.exception(
            "clock %s on %s: a line the director failed on, kept in rejects.log", self.clock_id, source
        )
        if isinstance(message, bytes):
            message = message[:KEPT_CHARS].decode("ascii", "replace")
        text = str(message)[:KEPT_CHARS]
        self.store.reject(None, text, Rejected(Reason.INTERNAL, detail), source)
        self.store.notice(
            f"clock {self.clock_id}: a line on {source} failed in the director ({shown(detail, 120)}): "
            "kept in rejects.log; this is a bug, please report it"
        )
        return Received(Outcome.FAILED, reason=Reason.INTERNAL, detail=detail)

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
        """After `record` is stored (and the store stepped over the seqs the clock will never
        send): send the `ack` that is due; returns the line sent, or None. Once a game more has
        ended and every record up to the last one taken is written, the clock is sent `ack SEQ`
        (SEQ the last of them), the same over every transport; the clock marks as held only the
        games its journal has closed up to there (docs/reliability.md, "Retention"), so an `ack`
        never lets it prune a game still open."""
        log = log or self.log
        if self.shared:
            return None  # an `ack` would reach the other clock too, and let it prune games not on file
        if log.games > self._acked_games.get(log.clock_id, 0):
            self._acked_games[log.clock_id] = log.games
            line = with_crc(f"ack {log.expected - 1}")
            self.transport.send(line)
            return line
        return None

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
