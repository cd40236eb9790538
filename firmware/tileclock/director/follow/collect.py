"""`tileclock collect`: the director's side of the record line, for one clock or many at once.

Three parts, each in its own module: a `SerialPort` reads a port in lines
(`port.py`), the `RecordStore` keeps every clock's records in order and writes
the files (`store.py`), and the `LiveView` draws the table (`table.py`). Here a
`ClockFeed` joins a port to the store: it checks each line through the one
decoder, hands the record to the `ClockSession` of its clock (`session.py`: its
seq, gaps, resends and acks, as the hall's are), says when the clock on a port
changes, and gives it the scene and its starting times. `collect` reads
every port in one loop that waits on all of them at once; the table is drawn
by its own thread, so a slow terminal never holds up the reading.
"""

import select
import sys
import threading
import time

from ...wire.protocol import FrameError, is_label, unframe_any, with_crc
from .port import SerialPort
from .session import ClockSession, Outcome
from .store import RecordStore, Rejected, clock_of, port_clock_id
from .table import LiveView, Row, Snapshot, screen_lines, ticking

#: How often the loop looks at ports that are down and at resends due, when no data comes.
IDLE_WAKE_S = 0.25
SHOWN_NOTICES = 5


class ClockFeed:
    """One port: every line checked and handed to the store, the gaps of the clock on it asked for.

    `store` is a `RecordStore` shared by all the feeds (or a folder, for a store of its own);
    `hello` gives the command lines sent each time the port opens (default: `status`, so the
    clock says where it is and a gap shows at once); `start_times` (a `StartTimes`) are starting
    times to give the clock on this port for its next fresh game.
    """

    def __init__(self, port, store, clock=time.monotonic, hello=None, start_times=None):
        self.store = store if isinstance(store, RecordStore) else RecordStore(store)
        self.clock = clock
        self.hello = hello or (lambda feed: ["status"])
        self.link = SerialPort(port, clock, on_open=self._opened)
        self.bad_lines = 0
        self.current = None  # the `ClockLog` of the clock last heard on this port
        #: clock id -> its `ClockSession` over this port (a port may see another clock plugged in)
        self.sessions = {}
        self._answered = None  # the clock id of the last status answer heard here
        self.start_times = start_times

    @property
    def port_name(self):
        return self.link.name

    @property
    def down(self):
        """Why the port is not open, in full (None while it is)."""
        return self.link.down

    @property
    def expected(self):
        """The next seq wanted from the clock on this port."""
        return self.current.expected if self.current else 0

    @property
    def pending(self):
        """Records of the clock on this port that wait for a gap before them."""
        return self.current.pending if self.current else {}

    @property
    def duplicates(self):
        return self.current.duplicates if self.current else 0

    def fileno(self):
        return self.link.fileno()

    def poll(self):
        """Read what has arrived and hand it on, then ask for any gap; returns the number of lines read."""
        lines = self.link.read_lines()
        for raw in lines:
            self._line(raw)
        self.store.flush()
        self.ask()
        return len(lines)

    def session(self, clock_id):
        """The `ClockSession` of `clock_id` over this port (made on first need)."""
        session = self.sessions.get(clock_id)
        if session is None:
            session = self.sessions[clock_id] = ClockSession(clock_id, self.store, self.link, self.clock)
        return session

    def ask(self):
        """Ask the clock on this port for its missing records, if it is time to (`ClockSession.ask`):
        a run missing before a record that arrived, or the records up to the newest one the clock's
        answer to `status` named (a fresh collector on a quiet clock)."""
        clock_id = self.current.clock_id if self.current is not None else self._answered
        if clock_id is None or self.link.port is None:
            return
        self.session(clock_id).ask()

    def close(self):
        self.link.close()

    def _opened(self):
        for session in self.sessions.values():  # whatever was asked before the port closed is lost with it
            session.reconnected()
        if self.start_times:
            self.start_times.again()
        for line in self.hello(self):
            self.link.send(line)

    def _line(self, raw):
        try:
            line = raw.decode("ascii")
            answer = unframe_any(line)
        except (UnicodeDecodeError, FrameError):
            self.bad_lines += 1  # noise or a damaged line: the gap it leaves is asked for
            return
        if "seq" not in answer and answer.get("ev") == "status":
            self._status_answer(answer)
            return
        received = self.session(self._clock_named(answer)).receive(line)
        if received.outcome == Outcome.UNREADABLE:
            self.bad_lines += 1
        if not received.taken:
            return  # refused (and kept in the rejects file), or noise
        record, log = received.record, received.log
        if record["ev"] == "boot" and received.live:
            if self.start_times:
                self.start_times.again()
            for line in self.hello(self):  # it started again (a power cut): tell it the scene again
                self.link.send(line)
        if received.live:
            self._give_start_times(record["state"], record)
        if log is not self.current:
            if self.current is not None:
                self.store.notice(
                    f"port {self.link.name}: now clock {log.clock_id} (board {log.board_label}), "
                    f"was clock {self.current.clock_id} (board {self.current.board_label})"
                )
            self.current = log

    def _clock_named(self, answer):
        """The clock a line is from, whose session takes it: the clock it names (a clock of protocol
        1 names none, and is known by its port). A line naming no clock id the decoder would take
        goes to the port's own session, which refuses it with the decoder's reason."""
        try:
            return clock_of(answer, self.link.name)
        except Rejected:
            return port_clock_id(self.link.name)

    def _status_answer(self, answer):
        clock_id, newest = answer.get("clock", "?"), answer.get("last_seq")
        if isinstance(clock_id, str) and isinstance(newest, int):
            self.session(clock_id).named(newest)
            self._answered = clock_id
            self._give_start_times(answer.get("state"))

    def _give_start_times(self, state, record=None):
        """Send the starting times due to the clock now that it is in `state`; `record` is a record
        it made just now, which may be the `set` that took them (the director is told)."""
        if not self.start_times:
            return
        taken = self.start_times.heard(record) if record else None
        if taken:
            self.store.notice(f"port {self.link.name}: {taken}")
        command = self.start_times.due(state)
        if command:
            self.link.send(with_crc(command))
        elif record is None and not self.start_times.taken and state != "ready":
            self.store.notice(f"port {self.link.name}: {self.start_times.words} waits for a new game")


def scene_hello(round_=None, tables=None, wall_clock=time.time):
    """What a feed sends each time its port opens (and when its clock starts again): a `set` with
    the time of day from this computer, the round, and the port's table from `tables`
    (port -> table), then `status`."""

    def hello(feed):
        words = [f"wall={int(wall_clock() * 1000)}"]
        if round_ is not None:
            words.append(f"round={round_}")
        table = (tables or {}).get(feed.port_name)
        if table is not None:
            words.append(f"table={table}")
        return [with_crc("set " + " ".join(words) + " by=cli"), "status"]  # the audit trail: who set it

    return hello


def read_tables(lines, where="--tables"):
    """Port -> table from lines `PORT TABLE` or `PORT=TABLE` (`#` comments); ValueError names a bad line."""
    tables = {}
    for number, line in enumerate(lines, start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        port, _, table = line.replace("=", " ", 1).rpartition(" ")
        if not port.strip() or not is_label(table):
            raise ValueError(f"{where}, line {number}: {line!r}: expected PORT TABLE (a table is a label)")
        tables[port.strip()] = table
    return tables


def snapshot(feeds, store, heard=None, now=None):
    """What the live table shows, copied out at one instant. `heard` (clock id -> (seq, when)):
    when each clock's last record arrived, by the clock `now` is read from; with both, a running
    side's time ticks on from its record, as on the clock."""
    rows = []
    for log in list(store.clocks.values()):
        since = (heard or {}).get(log.clock_id)
        elapsed_ms = int((now - since[1]) * 1000) if since and now is not None and log.last else 0
        last = log.last
        attention = []
        gap = log.gap()
        if gap:
            attention.append(f"waiting for {gap[1] - gap[0] + 1} records from seq {gap[0]}")
        attention += [f"fault: {part}: {detail}" for part, detail in log.faults.items()]
        rows.append(
            Row(
                board=log.board_label if log.board is not None else "?",
                clock_id=log.clock_id,
                state=last["state"] if last else "?",
                sides=_sides(last, elapsed_ms),
                seq=last["seq"] if last else -1,
                port=log.port or "",
                attention=tuple(attention),
            )
        )
    return Snapshot(
        rows=tuple(rows),
        ports_down=tuple((feed.port_name, feed.down) for feed in feeds if feed.down),
        ports_silent=tuple(
            feed.port_name for feed in feeds if feed.link.port is not None and feed.current is None
        ),
        notices=tuple(text for _, text in list(store.notices)[-SHOWN_NOTICES:]),
        totals={
            "ports": len(feeds),
            "records": sum(log.written for log in store.clocks.values()),
            "bad_lines": sum(feed.bad_lines + feed.link.overlong for feed in feeds),
            "rejects": store.rejects,
        },
    )


def _sides(last, elapsed_ms=0):
    if last is None:
        return f"{'':>8} {'':>4}    {'':>8} {'':>4}"
    return "   ".join(
        f"{'*' if last['run'] == side else ' '}{side} {_shown(last, side, elapsed_ms):>7} {-last[side]['pen']:4d}"
        for side in "AB"
    )


def _shown(last, side, elapsed_ms):
    if last["state"] != "running" or last["run"] != side:
        return last[side]["shown"]
    return ticking(last[side]["shown"], last[side]["used_ms"], elapsed_ms)


def note_heard(store, heard, now):
    """Note in `heard` when each clock's newest record arrived (at `now`); whether a clock runs."""
    running = False
    for log in list(store.clocks.values()):
        last = log.last
        if last is None:
            continue
        if heard.get(log.clock_id, (None,))[0] != last["seq"]:
            heard[log.clock_id] = (last["seq"], now)
        running = running or last["state"] == "running"
    return running


def collect(
    ports, outdir, stop_after_idle_s=None, out=sys.stdout, clock=time.monotonic, hello=None, start_times=None
):
    """Collect from `ports` into `outdir` until interrupted (or idle `stop_after_idle_s`); returns the
    feeds. `start_times` (port -> `StartTimes`) gives clocks a game's starting times."""
    store = RecordStore(outdir)
    store.batching = True  # each feed flushes after each read
    feeds = [ClockFeed(port, store, clock, hello, (start_times or {}).get(port)) for port in ports]
    lock = threading.Lock()  # the reading loop changes what the table's thread copies out
    changes = [0]
    heard, running = {}, [False]  # when each clock's last record came; whether any clock runs

    def copy():
        with lock:
            return snapshot(feeds, store, heard, clock())

    def version():  # a running clock's time changes each second, between its records too
        return changes[0], int(clock()) if running[0] else None

    view = LiveView(out, copy, version).start() if out.isatty() else None
    last_data = clock()
    try:
        while True:
            ready = _wait(feeds, IDLE_WAKE_S)
            with lock:
                got = 0
                for feed in feeds:
                    due = feed.link.port is None and feed.link.reopen_at() <= clock()
                    if feed in ready or due:
                        got += feed.poll()
                        changes[0] += 1
                    else:
                        feed.ask()
                running[0] = note_heard(store, heard, clock())
            if got:
                last_data = clock()
            if stop_after_idle_s is not None and clock() - last_data >= stop_after_idle_s:
                break
    except KeyboardInterrupt:
        pass
    finally:
        if view:
            view.stop()
        for feed in feeds:
            feed.close()
        store.close()
        out.write("\n".join(screen_lines(snapshot(feeds, store))) + "\n")
        out.flush()
    return feeds


def _wait(feeds, timeout):
    """The feeds whose ports have data, waiting at most `timeout` seconds for one."""
    by_fd = {}
    poller = select.poll()  # not select(): a hall's ports may number past its limit of 1024
    for feed in feeds:
        fd = feed.fileno()
        if fd is not None:
            by_fd[fd] = feed
            poller.register(fd, select.POLLIN)
    if not by_fd:
        time.sleep(timeout)
        return set()
    try:
        events = poller.poll(timeout * 1000)
    except (OSError, ValueError):
        return set(feeds)  # a port closed under us: let each feed find out
    return {by_fd[fd] for fd, _ in events}
