"""`tileclock hall`: the director's side of the hall's broker (docs/hall.md).

`HallFeed` subscribes (as the `director` user, with a persistent session: its
connection, `connection.py`) to every clock's records, state and status. Each record goes into the same
`RecordStore` that `collect` writes through, which keeps each (clock id, seq)
once, in order, in the same game files and `results.csv`; the broker's copy is
acknowledged only once the store has it on disk (paho's manual
acknowledgement), so a director killed mid-stream gets the rest again from the
broker's queue. Each clock has a `ClockSession` (`session.py`) over its command
topic, the same as `collect` keeps over a serial port: a gap (the broker lost
records, say in a crash) is asked for again there with the same plan, and once a
game has ended and is on file, the clock is sent `ack` there, so its journal may
prune it.

paho's thread only queues what arrives; `step` does the work on the caller's
thread, each record through its session (`ClockSession.receive`); the boards
(`board.Boards`, one of the store's listeners) are the live picture the web
page shows (`snapshot`), and the feed's own listeners (`subscribe`) hear of each
record once the broker's copy of it is acknowledged.
"""

import logging
import queue
import re
import threading
import time

from ...wire.protocol import with_crc
from ...wire.seal import Sealer
from ...wire.state import StateError, decode_state
from ...wire.topics import ALL, DIRECTOR, parse_topic, topic, valid_clock_id
from ..follow.session import ClockSession, Outcome
from ..follow.store import RecordStore, Rejected
from .board import Boards
from .connection import CLIENT_ID, HallConnection
from .disk import DiskFault

logger = logging.getLogger(__name__)

#: records taken from the queue in one step (each step ends with one round of acknowledgements)
BATCH = 500
#: the largest record taken by default (`--max-record-bytes`): an `end` record, the largest a clock
#: writes, is under 2 kB
MAX_RECORD_BYTES = 64 * 1024
#: a record's seq, where a clock writes it (near the start), for `_record`'s early let-go
_SEQ = re.compile(rb'"seq":(\d{1,16})[,}]')
#: how long clearing a clock's retained state waits for the broker to take it
CLEAR_S = 2.0
#: what rejects.log keeps of a refused message
QUARANTINED_BYTES = 1024


class HallFeed:
    """The broker's records into `store`; the clocks' live state; commands out.

    `listeners` (more with `subscribe`) are called with (clock id, record, its `ClockLog`) for each
    record taken from the broker, after the batch it came in is on disk and acknowledged (the page's
    audit trail hears the clocks' answers to its actions; the score links, each game's end).
    """

    def __init__(
        self,
        host,
        port,
        password,
        store,
        user=DIRECTOR,
        client_id=CLIENT_ID,
        tls_ca=None,
        clock=time.monotonic,
        keys=None,
        max_record_bytes=None,
        wall=time.time,
        listeners=(),
        players=None,
    ):
        self.store = store if isinstance(store, RecordStore) else RecordStore(store)
        self.clock = clock
        #: the time of day (s since 1970): records' ages and a call's waiting time count by it
        self.wall = wall
        self.inbox = queue.SimpleQueue()
        #: clock id -> its `Board`: what the page shows, kept as the store takes each record
        self.boards = Boards(self.store, _topics_name, wall)
        self.store.subscribe(self.boards.stored)
        self.sessions = {}  # clock id -> its `ClockSession` over the broker
        #: seals each command with its clock's key and a rising counter (wire/seal.py); no keys: CRC only
        self.sealer = Sealer(keys or {})
        self.bad_lines = 0
        #: records larger than this are refused unread (an honest one is about 300 bytes)
        self.max_record_bytes = max_record_bytes or MAX_RECORD_BYTES
        #: messages held unacknowledged while the disk refuses them (docs/hall.md)
        self.disk = DiskFault()
        #: bumped on every change the page shows; waiters on `changed` are woken
        self.version = 0
        self.changed = threading.Condition()
        self._listeners = list(listeners)
        self._before_ack = []  # (listener, durable) pairs: `subscribe_before_ack`
        #: `players(round, table)`: who plays there, from the pairings (event/players.py), if given
        self.players = players
        #: the director's client on the broker (`connection.py`): paho's thread only queues what arrives
        self.connection = HallConnection(
            host, port, password, self.inbox.put, self._bump, user=user, client_id=client_id, tls_ca=tls_ca
        )

    def start(self):
        """Connect in the background (and keep reconnecting)."""
        self.connection.start()
        return self

    def close(self):
        self.connection.close()
        self.store.close()

    def step(self, wait_s=0.2):
        """Take what arrived (waiting up to `wait_s` for the first), store it, acknowledge it, and
        ask for any gap; returns how many messages were handled."""
        try:
            messages = [self.inbox.get(timeout=wait_s)]
        except queue.Empty:
            messages = []
        while len(messages) < BATCH:
            try:
                messages.append(self.inbox.get_nowait())
            except queue.Empty:
                break
        held = self.disk.retry(self.clock())
        if held:  # the disk may be back: the store from what is on it, then what was held, in order
            try:
                self._reopen_store()
            except OSError as error:
                self.disk.fault(error, self.store.outdir, self.clock())
        messages = held + messages
        stored, done = [], []
        for message in messages:
            if self.disk.holding():
                self.disk.hold(message)  # in order: nothing overtakes what waits for the disk
                continue
            try:
                stored.extend(self._guarded(message))
            except OSError as error:  # the disk: hold it unacknowledged, write it when it recovers
                self.disk.fault(error, self._file_of(message), self.clock())
                self.disk.hold(message)
                continue
            done.append(message)
        # what must be on the disk before the broker forgets the records (the audit trail's outcomes
        # of the director's actions these answer: a kill after the acknowledgement loses nothing)
        before_ack = list(self._before_ack)
        for listener, _ in before_ack:
            for item in stored:
                listener(*item)
        for _, made_durable in before_ack:
            if made_durable is not None:
                made_durable()
        # the store has written every line (flushed): now the broker may forget them
        for message in done:
            if message.qos > 0:
                self.connection.client.ack(message.mid, message.qos)
        for listener in list(self._listeners):
            for item in stored:
                listener(*item)
        self._ask_for_gaps()
        if messages:
            self._bump()
        return len(messages)

    def subscribe(self, listener):
        """Call `listener(clock_id, record, log)` for each record taken from now on, once its
        batch is on disk and acknowledged (on the thread that steps the feed)."""
        self._listeners.append(listener)

    def unsubscribe(self, listener):
        """No more calls to `listener` (nothing if it was not subscribed)."""
        if listener in self._listeners:
            self._listeners.remove(listener)
        self._before_ack = [pair for pair in self._before_ack if pair[0] != listener]

    def subscribe_before_ack(self, listener, durable=None):
        """Call `listener(clock_id, record, log)` for each record taken, once its batch is on disk
        and before the broker's copies are acknowledged, then `durable()` (what it queued made
        durable: the audit trail's outcome lines), so a hall killed after the acknowledgement has
        what they wrote, and one killed before gets the records again."""
        self._before_ack.append((listener, durable))

    def run(self, should_stop=lambda: False):
        """Step until `should_stop()`."""
        while not should_stop():
            self.step()

    def command(self, text, clock_id=ALL, crc=True):
        """Send a command line to one clock (or every clock: `all`); at QoS 0, never retained, so
        a clock away when it is sent never acts on it later. With keys, sealed for each clock with
        the time it is made (`wall`): one published again later is refused as stale."""
        line = with_crc(text) if crc else text
        if not self.sealer.keys:
            return self.connection.client.publish(topic(clock_id, "cmd"), line, qos=0)
        # sealed: each clock's own key, so a command for every clock goes to each one heard or keyed
        targets = [clock_id] if clock_id != ALL else sorted(set(self.boards) | set(self.sealer.keys))
        # made now by the director's wall clock (the clocks' chrony follows it): a clock refuses the
        # command once it is no longer fresh (wire/seal.py), so a captured one cannot act later
        made_ms = int(self.wall() * 1000)
        for target in targets:
            sealed = self.sealer.line(target, line, time.time_ns() // 1000, made_ms)
            sent = self.connection.client.publish(topic(target, "cmd"), sealed, qos=0)
        return sent if targets else None

    def clear_state(self, clock_id):
        """Clear `clock_id`'s retained state, status and public state on the broker (the ACL lets
        the director): a bad one would otherwise be handed to every director that subscribes, for
        ever. The clock publishes its state again with its next change."""
        sent = [
            self.connection.client.publish(topic(clock_id, kind), b"", qos=1, retain=True)
            for kind in ("state", "status", "public")
        ]
        for info in sent:  # the broker has it (PUBACK) before the page says cleared
            if self.connection.connected.is_set():
                try:
                    info.wait_for_publish(CLEAR_S)
                except (RuntimeError, ValueError):
                    pass  # not connected after all: said on the page as the broker being down
        board = self.boards.get(clock_id)
        if board is not None:
            board.state, board.status = {}, None
        self._bump()

    def snapshot(self):
        """Every board, those needing the director first (JSON-ready)."""
        boards = self.boards.shown(self.wall())
        for board in boards if self.players else ():  # the board's name is its table, unless set
            board["players"] = self.players(board["round"], board["table"] or board["board"])
        return {
            "in_the_clear": _in_the_clear(self.connection.in_the_clear, boards),
            "version": self.version,
            "connected": self.connection.down is None,
            "down": self.connection.down,
            "alerts": [self.disk.text] if self.disk.text else [],
            "boards": boards,
        }

    def wait_for_change(self, version, timeout_s):
        """Block until the version moves past `version` (or `timeout_s`); returns the current one."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != version, timeout_s)
            return self.version

    def touch(self):
        """Something the page shows beside the boards changed (a command sent to several boards):
        every viewer gets a new snapshot."""
        self._bump()

    def _bump(self):
        with self.changed:
            self.version += 1
            self.changed.notify_all()

    def session(self, clock_id):
        """The `ClockSession` of `clock_id` over its topics (made on first need)."""
        session = self.sessions.get(clock_id)
        if session is None:
            transport = _Topics(self, clock_id)
            session = self.sessions[clock_id] = ClockSession(clock_id, self.store, transport, self.clock)
        return session

    def _guarded(self, message):
        """`_handle`, and whatever a message makes go wrong (short of the disk) is that message's
        alone: it is quarantined with the error, and the hall goes on with every other board."""
        try:
            return self._handle(message)
        except OSError:
            raise
        except Exception as error:  # noqa: BLE001  (a bad message must never stop the hall)
            where = parse_topic(message.topic) if isinstance(message.topic, str) else None
            clock_id = where[0] if where else "?"
            logger.exception("clock %s: a message the hall failed on, kept in rejects.log", clock_id)
            self._refused(clock_id, "internal", f"{type(error).__name__}: {error}", bytes(message.payload))
            return []

    def _refused(self, clock_id, reason, detail, payload):
        """A message from `clock_id` refused: kept aside with its reason (rejects.log, at most the
        first `QUARANTINED_BYTES` of it) and counted on its board."""
        if clock_id in self.boards or valid_clock_id(clock_id):
            self.boards.board(clock_id).refused(reason, detail)
        text = payload[:QUARANTINED_BYTES].decode("ascii", "replace")
        error = Rejected(reason, f"{detail} ({len(payload)} bytes)")
        self.store.reject(None, text, error, _topics_name(clock_id))

    def _reopen_store(self):
        """The store again from its folder: a write that failed may have left the store's memory
        ahead of its files (a game split, a line half written), so the files are the truth (a line
        cut off is cut from its file) and the held messages are taken again against them."""
        for log in self.store.clocks.values():
            try:
                log.close()
            except OSError:
                pass  # what it could not write is held, or asked for again
        self.store = RecordStore(self.store.outdir, listeners=self.store.listeners)
        self.boards.follow(self.store)
        for session in self.sessions.values():
            session.store = self.store

    def _file_of(self, message):
        where = parse_topic(message.topic) if isinstance(message.topic, str) else None
        log = self.store.log_of(where[0]) if where else None
        return (log.game_path if log else None) or self.store.outdir

    def _handle(self, message):
        try:
            where = parse_topic(message.topic)
        except UnicodeDecodeError:
            where = None
        if where is None or where[0] == ALL:
            return []
        clock_id, kind = where
        payload = bytes(message.payload)
        if kind == "status":
            self.boards.board(clock_id).status = payload.decode("ascii", "replace")[:16]
            return []
        if kind == "state":
            if not payload:
                return []  # a retained state cleared
            try:
                state = decode_state(payload, clock_id)
            except StateError as error:  # the board keeps its last good state
                self._refused(clock_id, error.reason, f"state: {error}", payload)
                return []
            self.boards.board(clock_id).state = state
            session = self.session(clock_id)
            if isinstance(state.get("seq"), int):
                session.named(state["seq"])  # what it holds: a fresh --out asks for all of it
            session.tail_lost(state.get("seq"))
            return []
        if kind != "records":
            return []
        if len(payload) > self.max_record_bytes:
            self._refused(clock_id, "too_large", f"a record over {self.max_record_bytes} bytes", payload)
            return []
        return self._record(clock_id, payload)

    def _record(self, clock_id, payload):
        # a record its log has no room for is let go before it costs a decoding (the gap is asked
        # for anyway): its seq is near the start, where a clock writes it
        match = _SEQ.search(payload, 0, 64)
        if match and self.store.let_go(clock_id, int(match.group(1))):
            return []
        received = self.session(clock_id).receive(
            payload
        )  # the ACL lets a clock publish only under its own id
        if received.outcome == Outcome.UNREADABLE:
            self.bad_lines += 1
        elif received.outcome in (Outcome.DAMAGED, Outcome.FAILED):  # counted on its board
            self.boards.board(clock_id).refused(str(received.reason), received.detail)
        if not received.taken:
            return []
        return [(clock_id, received.record, received.log)]  # (its board was told by the store)

    def _ask_for_gaps(self):
        for clock_id in list(self.boards):  # the clocks heard on the broker (serial ones ask on their port)
            self.session(clock_id).ask()  # with no record yet too: what its state named


def _topics_name(clock_id):
    """The name a clock's topics go by as its session's transport (what the store records)."""
    return f"hall:{clock_id}"


def _in_the_clear(own, boards):
    """The page's words for what reaches the broker without TLS: the director's own connection
    (`own`), the boards whose clocks say so (their state's `tls`), or None: all encrypted."""
    clear = [board["board"] for board in boards if board.get("in_the_clear")]
    said = [own] if own else []
    if clear:
        names = ", ".join(clear[:10]) + (f" and {len(clear) - 10} more" if len(clear) > 10 else "")
        one = len(clear) == 1
        said.append(
            f"NOT ENCRYPTED: {'board' if one else 'boards'} {names} {'reaches' if one else 'reach'} "
            "the broker without TLS (no tls_ca)"
        )
    return "; ".join(said) or None


class _Topics:
    """A clock's command topic on the broker, as its session's transport (`session.Transport`)."""

    def __init__(self, feed, clock_id):
        self.feed, self.clock_id = feed, clock_id
        self.name = _topics_name(clock_id)

    def send(self, line):
        return self.feed.command(line, self.clock_id, crc=False)
