"""The uplink to the hall's broker: records out from the journal, commands in, never blocking the clock.

paho-mqtt's own thread does all the network work; the loop only hands it
records (a publish is a queue append) and reads the commands it received.
Three kinds of message go out, as on the serial line and in this order of
priority: live records (as the journal takes them), the answer to a `status`
(on `tileclock/<clock id>/answer`, never journaled; only the newest waits),
and resends (`Resends`: merged ranges, streamed from the journal at most
`Resends.PER_WAKE` lines a wake, so a `resend 0` over years of games never
holds the loop up). The journal is the outbox: paho keeps unacknowledged messages in memory
only, so the uplink remembers on disk the last seq the broker acknowledged
(`hall.acked` in the state directory, written at most once a second) and, at
every start, publishes again from the record after it. At most `WINDOW`
records are in paho's hands at once; the rest wait in the journal, so an hour
without the network costs memory for nothing but the journal.

A record may reach the broker twice (a start after a kill, a resend): the
director keeps each (clock id, seq) once.

paho's client and its connection settings are `hall_client.py`'s, a broken connection's grace
before its fault `hall_grace.py`'s, the commands waiting for the loop `hall_commands.py`'s.

Locks: paho calls `on_publish` holding its own message lock, so the uplink never calls paho while
holding its own (`_lock`); an acknowledgement that comes back before its publish call returned is
kept in `_early` until the message id is registered. A retained state waits behind its topic's
unacknowledged one (hall_retained.py): the acknowledgement's callback publishes it.
"""

import threading
import time
from collections import deque

import paho.mqtt.client as mqtt

from ...wire.topics import ALL, topic
from .hall_acked import AckedFile
from .hall_client import cannot_connect, connect, lost, make_client, refused
from .hall_commands import CommandInbox
from .hall_grace import DownGrace
from .hall_retained import NewestInFlight
from .hall_seal import CommandSeal
from .hall_state import RetainedState
from .resends import STREAM_NS, Resends

#: records handed to paho and not yet acknowledged, at most
WINDOW = 200


class HallLink:
    """Publishes the journal's records to `tileclock/<clock id>/records` and reads the director's commands.

    `wake` is called (from paho's thread) when the loop has something to do:
    commands arrived, room in the window, the connection came or went. `next_wake_ns` says when
    the loop must wake with no word from paho: soon again while a resend streams and the window
    has room, and when a broken connection's grace is over (its fault is then shown).
    `now_ns` is the loop's time.
    """

    part = "hall"

    def __init__(
        self,
        journal,
        clock_id,
        hall,
        state_dir=None,
        wake=lambda: None,
        board=None,
        now_ns=time.monotonic_ns,
        wall_ns=time.time_ns,
    ):
        self.journal = journal
        self.clock_id = clock_id
        self.hall = hall
        self.board = board
        self.wake = wake
        #: with a key in [hall]: every command must be sealed with it, its counter new (wire/seal.py)
        self.seal = CommandSeal(hall.key, clock_id, state_dir) if hall.key else None
        self._lock = threading.Lock()  # the ack bookkeeping, shared with paho's thread
        self._pump_lock = threading.Lock()  # one pump at a time
        #: `hall.acked`: its own part, which keeps the acknowledged seq on disk
        self.acked_file = AckedFile(state_dir, self._acked_now)
        self.acked = self.acked_file.load(journal)  # every seq up to this one is at the broker
        self._next = self.acked + 1  # the next seq to hand to paho
        self._above = set()  # acknowledged seqs beyond `acked` (resends, reordering)
        self._unheld = {}  # first seq -> the next seq held, of each run the journal does not hold
        self._seq_of = {}  # paho message id -> seq (None: a state or status message) in flight
        self._early = set()  # message ids acknowledged before they were registered
        self._resends = Resends(journal)  # the loop's thread only
        self._answers = deque(maxlen=1)  # the answer to the newest `status`, not yet published
        self._commands = CommandInbox()  # the director's, from paho's thread (hall_commands.py)
        self._connected = False
        #: a broken connection's grace: its own part, which shows the fault once it lasts
        self._grace = DownGrace(now_ns)
        #: the retained state and public topics: one of each in paho's hands at most, the newest waiting
        self._retained = NewestInFlight()
        self._state = RetainedState(journal, clock_id, board, self._publish_retained, now_ns, wall_ns)
        self._state.tls = bool(hall.tls_ca)
        self._closed = False
        self.client = self._make_client()

    def report_time(self, report):
        """Say on the state topic how this clock's wall clock follows the laptop: `report()` gives
        `timesync.TimeReport`'s figures (chrony's), or None."""
        self._state.time_report = report

    def report_speech(self, sides, large):
        """Say on the state topic who hears the clock and whose panel shows the large-digits face:
        the config's [speech] `sides` and `large` ("A", "B", "AB" or ""), until a director's
        `set speech=` or `set large=` in the records says otherwise."""
        self._state.sides_configured = {"speech": sides, "large": large}

    def report_health(self, health):
        """Say the clock's health on the state topic: `health()` gives `health.Health`'s dict."""
        self._state.health = health

    # --- the loop's side

    @property
    def pending(self):
        """Always: each wake's pump takes up the journal's new records for the retained state, and
        hands paho what fits (it costs nothing when there is nothing); paho's thread reconnects."""
        return True

    def next_wake_ns(self, woke_ns):
        """When the loop must wake for the uplink, having last woken at `woke_ns`: soon while a
        resend streams (`STREAM_NS`), and once a broken connection's grace is over; else None."""
        grace = self._grace.wake_ns(woke_ns)
        soon = woke_ns + STREAM_NS if self.streaming else None
        return min((when for when in (grace, soon) if when is not None), default=None)

    @property
    def streaming(self):
        """Whether a resend is under way and the window has room (the loop then wakes again soon;
        with the window full, paho's acknowledgements wake it)."""
        return bool(self._resends) and self._connected and len(self._seq_of) < WINDOW

    @property
    def failing(self):
        """Why the broker is out of reach, once that has lasted its grace (hall_grace.py); else None."""
        return self._grace.failing

    def start(self):
        """Connect in the background (paho's thread keeps trying until it gets through)."""
        connect(self.client, self.hall)
        self._grace.ask_wake()  # "not connected yet" becomes a fault if it lasts

    def pump(self):
        """Hand paho what fits in the window: the new records first, then the newest `status`
        answer, then at most `Resends.PER_WAKE` resent records; and the state if it changed."""
        self._state.take_up()
        if not self._connected:
            return
        with self._pump_lock:
            budget = Resends.PER_WAKE
            while True:
                with self._lock:
                    if len(self._seq_of) >= WINDOW:
                        break
                live = self._next_live()
                if live is None and self._answers:
                    self._publish(topic(self.clock_id, "answer"), self._answers.popleft())
                    continue
                resend = None if live is not None or budget <= 0 else self._resends.next()
                budget -= resend is not None
                seq, line = live or resend or (None, None)
                if seq is None:
                    break
                info = self.client.publish(topic(self.clock_id, "records"), line, qos=1)
                if info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN):
                    self._take_back(seq, resent=resend is not None)
                    break
                self._register(info.mid, seq)
            self._state.publish()
            with self._lock:
                refused = self._retained.free()  # paho refused them at their turn: they go again
            for name, payload in refused:
                self._hand_retained(name, payload)

    def resend(self, first, last):
        """Owe records `first`..`last` again (the director lost them): those already handed to
        paho; later ones go out live anyway. Streamed by `pump`; `take_missing` names the seqs the
        journal turns out not to hold once the pass is over."""
        with self._pump_lock:
            self._resends.ask(first, min(last, self._next - 1))

    def take_missing(self):
        """The seqs asked for that the journal does not hold, once each resend pass is over, as text."""
        with self._pump_lock:
            return self._resends.take_missing()

    def answer(self, line):
        """Publish `line` (an answer that is not a record) after the live records; a newer one
        replaces it."""
        self._answers.append(line)

    def read_lines(self):
        """Command lines the director sent since the last call."""
        return self._commands.read_lines()

    def close(self, timeout_s=2.0):
        """Say `offline` (the will is not sent on a clean disconnect), save the acknowledged seq, disconnect."""
        if self._closed:
            return
        self._closed = True
        if self._connected:
            info = self._publish(topic(self.clock_id, "status"), "offline", retain=True)
            try:
                info.wait_for_publish(timeout_s)
            except (RuntimeError, ValueError):
                pass
        self.client.disconnect()
        self.client.loop_stop()
        self.acked_file.close()

    def _next_live(self):
        """(seq, line) of the next record to hand to paho, or None: only what has been through the
        journal's write, stepping over runs the journal does not hold."""
        while True:
            with self._lock:
                if self._next < self.journal.first_seq:
                    self._next = self.journal.first_seq
                    self.acked = max(self.acked, self._next - 1)
                if self._next >= self.journal.settled_seq:
                    return None
                seq = self._next
                self._next += 1
            line = self.journal.line(seq)
            if line is not None:
                return seq, line
            self._skip_unheld(seq)

    def _take_back(self, seq, resent):
        """paho refused record `seq`: send it again on a later wake."""
        if resent:
            self._resends.give_back(seq)
            return
        with self._lock:
            self._next = min(self._next, seq)

    def _publish(self, name, payload, retain=False):
        """Publish a message that is not a record (QoS 1)."""
        info = self.client.publish(name, payload, qos=1, retain=retain)
        self._register(info.mid, None)
        return info

    def _publish_retained(self, name, payload, retain=True):
        """Publish a retained state (`state`, `public`), or wait behind its topic's unacknowledged one."""
        with self._lock:
            now = self._retained.offer(name, payload)
        if now:
            self._hand_retained(name, payload)

    def _hand_retained(self, name, payload):
        """Hand paho `payload` on `name` (its turn taken), and the newer ones behind any acknowledged at once."""
        while payload is not None:
            info = self.client.publish(name, payload, qos=1, retain=True)
            refused = info.rc not in (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN)
            with self._lock:
                early = info.mid in self._early
                self._early.discard(info.mid)
                if not (refused or early):
                    self._seq_of[info.mid] = None
                    self._retained.handed(name, info.mid)
                    return
                payload = self._retained.not_handed(name, payload, refused)

    def _register(self, mid, seq):
        """Tie a message id to its record's seq (None: not a record), or take its early acknowledgement."""
        with self._lock:
            early = mid in self._early
            if early:
                self._early.discard(mid)
                if seq is not None:
                    self._acknowledged(seq)
            else:
                self._seq_of[mid] = seq
        if early and seq is not None:
            self.acked_file.schedule()

    # --- paho's side (its thread)

    def _make_client(self):
        client = make_client(self.clock_id, self.hall, WINDOW)
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_message = self._on_message
        return client

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            self._grace.reason = refused(self.hall, reason_code)
            return
        self._connected = True
        self._grace.up()  # back within the grace: no fault to show
        # commands at QoS 0: the broker keeps none for a clock that is away, so a stale
        # command (a round over sent an hour ago) can never act on a later game
        client.subscribe([(topic(self.clock_id, "cmd"), 0), (topic(ALL, "cmd"), 0)])
        self._publish(topic(self.clock_id, "status"), "online", retain=True)
        self._state.forget_published()  # publish the state afresh
        self.wake()

    def _on_connect_fail(self, client, userdata):
        # paho retries on its own; the fault (after the grace) says why, a wrong CA above all
        self._grace.reason = cannot_connect(self.hall, client.failed)

    def _on_disconnect(self, client, userdata, flags, reason_code, properties):
        self._connected = False
        if self._grace.down(lost(self.hall, reason_code)):
            self.wake()  # the loop sleeps on its old deadlines: it takes the grace's at this wake

    def _on_publish(self, client, userdata, mid, reason_code, properties):
        with self._lock:
            if mid not in self._seq_of:
                self._early.add(mid)
                return
            seq = self._seq_of.pop(mid)
            if seq is None:  # a state or status message: a newer state may wait behind it
                after = self._retained.acknowledged(mid)
            else:
                self._acknowledged(seq)
                more = self._next < self.journal.settled_seq or bool(self._resends)
                refill = len(self._seq_of) <= WINDOW // 2 and more
        if seq is None:
            if after is not None:
                self._hand_retained(*after)  # paho takes a publish from its own callback
            return
        self.acked_file.schedule()
        if refill:
            self.wake()

    def _acked_now(self):
        with self._lock:
            return self.acked

    def _acknowledged(self, seq):
        """The broker has record `seq` (call with `_lock` held)."""
        if seq > self.acked:
            self._above.add(seq)
        self._advance_acked()

    def _advance_acked(self):
        """`acked` on over every seq the broker has and every run there is nothing to send of
        (call with `_lock` held)."""
        while True:
            if self.acked + 1 in self._above:
                self._above.discard(self.acked + 1)
                self.acked += 1
            elif self.acked + 1 in self._unheld:
                self.acked = self._unheld.pop(self.acked + 1) - 1
            else:
                return

    def _skip_unheld(self, seq):
        """The journal does not hold `seq` (seqs skipped after an unclean stop, records pruned or
        damaged): go on from the next record it holds, found in one read rather than seq by seq;
        there is nothing to send of the run, so it counts as acknowledged."""
        settled = self.journal.settled_seq
        held = next((got for got, _ in self.journal.read(seq, settled - 1)), settled)
        with self._lock:
            self._next = max(self._next, held)
            self._unheld[seq] = held
            self._advance_acked()
        self.acked_file.schedule()

    def _on_message(self, client, userdata, message):
        if self._commands.take(message.payload, message.retain, message.topic == topic(ALL, "cmd")):
            self.wake()
