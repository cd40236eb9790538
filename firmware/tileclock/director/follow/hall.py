"""`tileclock hall`: the director's side of the hall's broker (docs/hall.md).

`HallFeed` subscribes (as the `director` user, with a persistent session) to
every clock's records, state and status. Each record goes into the same
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
thread; `boards()` is the live picture the web page shows.
"""

import getpass
import os
import queue
import socket
import sys
import threading
import time

import paho.mqtt.client as mqtt

from ...wire.decoder import WireError, load
from ...wire.protocol import FieldError, FrameError, unframe, with_crc
from ...wire.seal import Sealer, read_keys
from ...wire.topics import ALL, DIRECTOR, ROOT, parse_topic, topic
from .hall_board import Board, board_order
from .session import ClockSession
from .store import RecordStore

#: the director's client id on the broker, its user name (the broker ties the two): one persistent session
CLIENT_ID = DIRECTOR
#: records taken from the queue in one step (each step ends with one round of acknowledgements)
BATCH = 500
#: how long `tileclock hall` waits at its start for the broker to take it in, or refuse it
FIRST_CONNECT_S = 10.0


class HallFeed:
    """The broker's records into `store`; the clocks' live state; commands out."""

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
    ):
        self.host, self.port = host, port
        self.store = store if isinstance(store, RecordStore) else RecordStore(store)
        self.clock = clock
        self.inbox = queue.SimpleQueue()
        self.boards = {}
        self.sessions = {}  # clock id -> its `ClockSession` over the broker
        #: seals each command with its clock's key and a rising counter (wire/seal.py); no keys: CRC only
        self.sealer = Sealer(keys or {})
        self.bad_lines = 0
        self.connected = threading.Event()
        self.down = "not connected yet"
        self.refused = None  # the broker's reason, when it refused the director's login
        #: bumped on every change the page shows; waiters on `changed` are woken
        self.version = 0
        self.changed = threading.Condition()
        #: called with (clock id, seq, record) for each record stored (benchmarks time them)
        self.on_stored = None
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False)
        client.username_pw_set(user, password or None)
        if tls_ca:
            client.tls_set(ca_certs=tls_ca)
        client.manual_ack_set(True)  # a record is acknowledged once the store has it
        client.reconnect_delay_set(min_delay=1, max_delay=10)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = lambda c, u, message: self.inbox.put(message)
        self.client = client

    def start(self):
        """Connect in the background (and keep reconnecting)."""
        self.client.connect_async(self.host, self.port, keepalive=30)
        self.client.loop_start()
        return self

    def close(self):
        self.client.disconnect()
        self.client.loop_stop()
        self.store.close()

    # --- paho's thread

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            self.refused = str(reason_code)
            self.down = f"broker {self.host}:{self.port} refused: {reason_code}"
            return
        self.refused = None
        self.down = None
        client.subscribe([(f"{ROOT}/+/records", 1), (f"{ROOT}/+/state", 1), (f"{ROOT}/+/status", 1)])
        self.connected.set()
        self._bump()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties):
        self.connected.clear()
        self.down = f"broker {self.host}:{self.port} lost: {reason_code}"
        self._bump()

    # --- the caller's thread

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
        stored = []
        for message in messages:
            stored.extend(self._handle(message))
        # the store has written every line (flushed): now the broker may forget them
        for message in messages:
            if message.qos > 0:
                self.client.ack(message.mid, message.qos)
        if self.on_stored:
            for item in stored:
                self.on_stored(*item)
        self._ask_for_gaps()
        if messages:
            self._bump()
        return len(messages)

    def run(self, should_stop=lambda: False):
        """Step until `should_stop()`."""
        while not should_stop():
            self.step()

    def command(self, text, clock_id=ALL, crc=True):
        """Send a command line to one clock (or every clock: `all`); at QoS 0, never retained, so
        a clock away when it is sent never acts on it later. With keys, sealed for each clock."""
        line = with_crc(text) if crc else text
        if not self.sealer.keys:
            return self.client.publish(topic(clock_id, "cmd"), line, qos=0)
        # sealed: each clock's own key, so a command for every clock goes to each one heard or keyed
        targets = [clock_id] if clock_id != ALL else sorted(set(self.boards) | set(self.sealer.keys))
        for target in targets:
            sent = self.client.publish(
                topic(target, "cmd"), self.sealer.line(target, line, time.time_ns() // 1000), qos=0
            )
        return sent if targets else None

    def snapshot(self):
        """Every board, those needing the director first (JSON-ready)."""
        now = time.time()
        boards = [board.as_dict(self.store.clocks.get(cid), now) for cid, board in list(self.boards.items())]
        boards.sort(key=lambda b: (b["attention"], board_order(b["board"]), b["clock"]))
        return {"version": self.version, "connected": self.down is None, "down": self.down, "boards": boards}

    def wait_for_change(self, version, timeout_s):
        """Block until the version moves past `version` (or `timeout_s`); returns the current one."""
        with self.changed:
            self.changed.wait_for(lambda: self.version != version, timeout_s)
            return self.version

    def _bump(self):
        with self.changed:
            self.version += 1
            self.changed.notify_all()

    def _board(self, clock_id):
        board = self.boards.get(clock_id)
        if board is None:
            board = self.boards[clock_id] = Board(clock_id)
        return board

    def session(self, clock_id):
        """The `ClockSession` of `clock_id` over its topics (made on first need)."""
        session = self.sessions.get(clock_id)
        if session is None:
            transport = _Topics(self, clock_id)
            session = self.sessions[clock_id] = ClockSession(clock_id, self.store, transport, self.clock)
        return session

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
            self._board(clock_id).status = payload.decode("ascii", "replace")[:16]
            return []
        if kind == "state":
            try:
                state = load(payload)  # the one decoder: size, depth and numbers checked first
            except WireError:
                return []
            if isinstance(state, dict):
                self._board(clock_id).state = state
                self.session(clock_id).tail_lost(state.get("seq"))
            return []
        if kind != "records":
            return []
        return self._record(clock_id, payload)

    def _record(self, clock_id, payload):
        session = self.session(clock_id)
        source = session.transport.name
        try:
            line = payload.decode("ascii").strip()
            record = unframe(line)
        except FieldError as error:
            # a damaged record marks its clock's seq as seen only when it came on that clock's topic
            own = (
                error.record
                if isinstance(error.record, dict) and error.record.get("clock") == clock_id
                else None
            )
            self.store.reject(own, payload.decode("ascii", "replace"), error, source)
            return []
        except (UnicodeDecodeError, FrameError):
            self.bad_lines += 1
            return []
        log = session.take(record, line)  # the ACL lets a clock publish only under its own id
        if log is None:
            return []
        session.heard(record)
        session.settle(record)  # the seqs it will never send stepped over; its `ack`, if one is due
        board = self._board(clock_id)
        if log.last is not None and (board.record is None or log.last["seq"] != board.record["seq"]):
            board.record = log.last
            board.received_at = time.time()
        return [(clock_id, record["seq"], record)]

    def _ask_for_gaps(self):
        for clock_id in list(self.boards):  # the clocks heard on the broker (serial ones ask on their port)
            if self.store.clocks.get(clock_id) is not None:
                self.session(clock_id).ask()


class _Topics:
    """A clock's command topic on the broker, as its session's transport (`session.Transport`)."""

    def __init__(self, feed, clock_id):
        self.feed, self.clock_id = feed, clock_id
        self.name = f"hall:{clock_id}"

    def send(self, line):
        return self.feed.command(line, self.clock_id, crc=False)


def run_hall(args, out, draw_panel=None):
    """`tileclock hall`: the broker's records (and any serial ports') into one store, and the page
    (`draw_panel`: see `HallPage`). A mistake in its arguments (a file, a port, a broker nobody
    answers for, a refused password) is a ValueError naming the argument, before anything runs."""
    from .port import check_port

    password = director_password(args)
    if args.tls_ca and not os.path.isfile(args.tls_ca):
        raise ValueError(
            f"--tls-ca {args.tls_ca}: {'a folder' if os.path.isdir(args.tls_ca) else 'no such file'}"
        )
    args.keys_read = None
    if getattr(args, "keys", None):
        try:
            with open(args.keys, encoding="utf-8") as file:
                args.keys_read = read_keys(file.read())
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise ValueError(f"--keys {args.keys}: {_why(error)}") from None
    for port in args.serial or []:
        check_port(port)
    reach(args.broker, args.port)
    return serve_hall(args, password, out, draw_panel)


#: where `tileclock hall` finds the director's password when no file is given
PASSWORD_VARIABLE = "TILECLOCK_HALL_PASSWORD"


def director_password(args, environ=os.environ, stdin=sys.stdin, ask=getpass.getpass):
    """The director's password from --password-file, else $TILECLOCK_HALL_PASSWORD, else asked for
    (`--password` alone, on a terminal). Never from the command line, where every user of the machine
    reads it (/proc/PID/cmdline): `--password VALUE` still works, with a warning."""
    if args.password_file:
        try:
            with open(args.password_file, encoding="utf-8") as file:
                return file.read().strip()
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(f"--password-file {args.password_file}: {_why(error)}") from None
    if args.password is True:  # `--password` alone: ask
        if not stdin.isatty():
            raise ValueError(
                f"--password: no terminal to ask on: use --password-file FILE or ${PASSWORD_VARIABLE}"
            )
        return ask("the director's password on the broker: ")
    if args.password is not None:
        print(
            "tileclock: warning: a password on the command line is visible to every user of this machine "
            f"(ps, /proc): use --password-file FILE, ${PASSWORD_VARIABLE}, or --password alone to be asked",
            file=sys.stderr,
        )
        return args.password
    return environ.get(PASSWORD_VARIABLE)


def serve_hall(args, password, out, draw_panel=None):
    """`tileclock hall` once its arguments are checked: until interrupted."""
    from ..event.entries import ScoreBook
    from .collect import ClockFeed

    try:
        from ..pages.web import HallPage
    except ImportError:
        raise ValueError(
            "the hall's page needs the director extra: pip install 'tileclock[director]'"
        ) from None

    keys = getattr(args, "keys_read", None)
    feed = HallFeed(args.broker, args.port, password, args.out, tls_ca=args.tls_ca, keys=keys).start()
    host, _, port = args.web.rpartition(":")
    try:
        scores = ScoreBook(os.path.join(args.out, "scores"))  # the score entries, beside the records
        page = HallPage(
            feed, host or "127.0.0.1", int(port), getattr(args, "allow_host", None), draw_panel, scores
        ).start()
    except OSError as error:
        feed.close()
        raise ValueError(f"--web {args.web}: cannot serve the page there: {_why(error)}") from None
    deadline = time.monotonic() + FIRST_CONNECT_S
    while not feed.connected.wait(0.05) and feed.refused is None and time.monotonic() < deadline:
        pass
    if feed.refused is not None:
        page.close()
        feed.close()
        raise ValueError(
            f"the broker at {args.broker}:{args.port} refused the director: {feed.refused} "
            "(check --password-file, $TILECLOCK_HALL_PASSWORD or --password)"
        )
    serial = [ClockFeed(port, feed.store) for port in args.serial or []]
    out.write(f"tileclock hall: records into {args.out}; the page is at {page.address}\n")
    if not feed.connected.is_set():
        out.write(f"tileclock hall: {feed.down}; still trying\n")
    out.flush()
    try:
        while True:
            feed.step(0.05 if serial else 0.2)
            for port_feed in serial:
                port_feed.poll()
    except KeyboardInterrupt:
        pass
    finally:
        page.close()
        for port_feed in serial:
            port_feed.close()
        feed.close()
    return 0


def reach(host, port, timeout_s=5.0):
    """Refuse (ValueError naming --broker and --port) a broker nobody answers for: a host name that
    does not resolve, a port nothing listens on. Once running, a broker gone away is waited for."""
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except socket.gaierror as error:
        raise ValueError(f"--broker {host}: no such host ({error.strerror})") from None
    except ConnectionRefusedError:
        raise ValueError(
            f"--broker {host} --port {port}: nothing answers there (is mosquitto running there, on that port?)"
        ) from None
    except OSError as error:
        raise ValueError(f"--broker {host} --port {port}: {_why(error)}") from None


def _why(error):
    return getattr(error, "strerror", None) or str(error) or type(error).__name__
