"""The clock's retained state on the hall's broker (`tileclock/<clock id>/state`): what the
journal's newest records say of the game (round, table, clocks) and of the clock's faults.

Owned by a `HallLink` (hall_link.py), which hands it the journal and how to publish; it owns
what it has read of the records and the last state published, which is published again only when
it changes.
"""

import json
import time

from ...clock.history import take_scene
from ...wire.protocol import FrameError, unframe
from ...wire.records import SIDE_SETTINGS
from ...wire.topics import topic
from .hall_public import PublicScene, public_text


class RetainedState:
    """Follows `journal`'s records and publishes (`publish(topic, text, retain=True)`) the state
    they give for clock `clock_id`, named `board` until a `boot` record names it; and the public
    state for spectators (hall_public.py), its instant stamped by `wall_ns` (the time of day, ns)
    against `now_ns` (the clock's monotonic time the records count on)."""

    def __init__(self, journal, clock_id, board, publish, now_ns=time.monotonic_ns, wall_ns=time.time_ns):
        self.journal = journal
        self.now_ns = now_ns
        self.wall_ns = wall_ns
        self._public = PublicScene()  # the game's origin and cap, for the public state
        self._public_text = None  # the public state of the newest record, stamped when it was read
        self._public_sent = None  # the last public state published
        self.clock_id = clock_id
        self.board = board
        self._publish = publish
        self._state = None  # the last state published, to publish only changes
        self._scene = None  # the running game's round and table, from its own records
        self._board_named = None  # the board name the last `boot` record gave
        self._faults = {}  # part -> detail, from fault / fault_cleared records
        self._last_record = None
        #: () -> how the wall clock follows the laptop (`timesync.TimeReport`), or None: not said
        self.time_report = None
        #: () -> the clock's health (`health.Health`, read at most every 30 s), or None: not said
        self.health = None
        #: this run's last self-test (`selftest` record: result, failed), None: none since the start
        self._selftest = None
        self._restart = None  # why this run started: `recovered`'s reason (None: "start", a fresh game)
        #: False: the uplink reaches the broker without TLS, said in the state (the page shows it)
        self.tls = True
        #: the config's [speech] `sides` and `large` as {"speech": ..., "large": ...} (each "A",
        #: "B", "AB" or ""), or None: who hears, and who has large digits, are not said
        self.sides_configured = None
        self._directed = {}  # a director's `set speech=`, `set large=` holding, from the records (clock/scene.py)

    def forget_published(self):
        """The broker's copy may be gone (a new connection): the next `publish` sends it afresh."""
        self._state = None
        self._public_sent = None

    def take_up(self):
        """Follow the journal's newest records: the game's round and table (`take_scene`: only
        what applied to it) and the faults, for the state topic."""
        newest = self.journal.settled_seq - 1
        if self._last_record is not None and self._last_record["seq"] >= newest:
            return
        if self._last_record is not None:
            first = self._last_record["seq"] + 1
        else:  # at start, from the last game's opening: a restart mid-game keeps its round and table
            first = self.journal.last_game_first_seq
            first = newest if first is None else first
        for _, line in self.journal.read(max(first, self.journal.first_seq), newest):
            try:
                record = unframe(line)
            except FrameError:
                continue
            if record.get("ev") == "fault":
                self._faults[str(record.get("part"))] = str(record.get("detail", ""))
            elif record.get("ev") == "fault_cleared":
                self._faults.pop(str(record.get("part")), None)
            if record.get("ev") == "boot":
                self._restart = "start"  # a run that took no game up (the first, or one ended)
                self._selftest = None  # passed or failed since its last restart, or never tested
            elif record.get("ev") == "selftest" and record.get("result") in ("pass", "fail"):
                self._selftest = {"result": record["result"], "failed": list(record.get("failed") or [])}
            elif record.get("ev") == "recovered":
                self._restart = str(record.get("reason", "restart"))
            if record.get("ev") == "new_game":  # it says a director's settings while they hold
                self._directed = {key: record.get(key) for key in SIDE_SETTINGS}
            elif record.get("ev") == "set":
                self._directed.update({key: record[key] for key in SIDE_SETTINGS if key in record})
            if "board" in record:
                self._board_named = record["board"]
            self._scene = take_scene(self._scene, record)  # never a `set` for the next game
            self._public.take(record)
            self._last_record = record
        if self._last_record is not None:
            # stamped now, once: the record's instant as a time of day, whenever it is published
            self._public_text = public_text(
                self.clock_id,
                self._board(),
                self._scene or {},
                self._public,
                self._last_record,
                self.now_ns(),
                self.wall_ns(),
            )

    def publish(self):
        """Publish the state the records give, if it changed since the last one published."""
        record = self._last_record
        if record is None:
            return
        scene = self._scene or {}
        state = {
            "clock": self.clock_id,
            "board": self._board(),
            "round": scene.get("round"),
            "table": scene.get("table"),
            "seq": record["seq"],
            "ev": record.get("ev"),
            "state": record.get("state"),
            "run": record.get("run"),
            "A": record.get("A"),
            "B": record.get("B"),
            "faults": self._faults,
        }
        if self.time_report is not None:
            state["time"] = self.time_report()
        if self.health is not None:
            state["health"] = {**self.health(), "restart": self._restart or "start"}
        if self._selftest is not None:
            state["selftest"] = self._selftest
        for key, configured in (self.sides_configured or {}).items():  # now: a director's, else the config's
            directed = self._directed.get(key)
            state[key] = directed if directed is not None else configured
        if not self.tls:  # said only when off: a TLS clock's state is as it was
            state["tls"] = False
        text = json.dumps(state, separators=(",", ":"), sort_keys=True)
        if text != self._state:
            self._publish(topic(self.clock_id, "state"), text, retain=True)
            self._state = text
        if self._public_text is not None and self._public_text != self._public_sent:
            self._publish(topic(self.clock_id, "public"), self._public_text, retain=True)
            self._public_sent = self._public_text

    def _board(self):
        return self.board if self._board_named is None else self._board_named
