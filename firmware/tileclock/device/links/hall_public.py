"""The clock's public state for spectators (`tileclock/<clock id>/public`, docs/hall.md, "Spectators").

What a spectators' page or a stream overlay needs, and nothing else: the board, round and table,
whose turn, each side's time left and penalty, and the wall time of that state (`at_ms`), so a
viewer counts the running side down itself between states and never drifts from the clock. No
seq gaps, faults, commands or keys: the topic is readable by anyone on the spectators' broker.

Between two records nothing changes but the running side's time (docs/protocol.md), so the state
of the newest record, stamped with that record's own instant as a time of day, is exact: a viewer
shows `left_ms - (now - at_ms)` for each side whose `runs` is true (the clock's own charged sides).

A board's call to the director shows too (`call`: `called`, `taken`, or null: a mark for the
hall, never a way to answer it), and the round as the clock has it: `start_ms`, the time of day a
director's `set start=` set this game's round to start (null if none), and `ended`, why the game
ended (`round_over`, `stop_hold`, `forfeit`; null while it has not). Each side's `used_ms` (its
time used at `at_ms`) and the game's `pace` (each side's `turns` pressed, its `used_ms` at its last
press, its `base_ms` before them, and `last`: 1 if it made the game's last press, clock/pace.py) let
a viewer count the likely end as the director's page does (director/hall/ends.py); `limit_s`
the rules' round limit (null for none), which with `start_ms` ends the game at the latest.
"""

import json

from ...clock.calls import Calls
from ...clock.history import apply_record, game_rules, reconcile, record_instant_ns
from ...clock.pace import Pace
from ...clock.state import GameState, State
from ...clock.timecode import NS_PER_MS, parse_clock
from ...wire.records import SIDES

#: the public state's version: a viewer ignores one it does not know (2: each side says if it runs)
VERSION = 2


def left_ms(side):
    """A side's time left in ms at its record's instant (negative in overtime), from what the record
    says: its display is its whole seconds of limit minus the whole seconds it used, so the limit is
    `shown + used_ms // 1000` and the display is the ceiling of `left_ms / 1000`."""
    used = side["used_ms"]
    return (parse_clock(side["shown"]) + used // 1000) * 1000 - used


class PublicScene:
    """What the public state needs from the game's records besides the newest one: the game's
    monotonic origin (its `new_game` or `recovered` `mono_ns`), the overtime cap of its rules, and
    the game's state played back as the clock played it (`apply_record`), for whose time runs: a
    record's `run` names one side only, and with it None both, or neither (a late start under rules
    where absence runs no clock), may run."""

    def __init__(self):
        self.origin_ns = None
        self.cap_s = None
        self.game = None  # the game played back from its records (t0 = 0), or None if not known
        self.rules = None
        #: the boot the newest record that says one was made in: a new card starts its seqs again,
        #: always in a new boot, so a viewer takes its lower seq as news, not as an old copy
        self.boot_id = None
        self.calls = Calls()  # the board's open call (carried from game to game by `new_game`)
        self.start_ms = None  # this game's round start, a time of day (`set start=`)
        self.ended = None  # why this game ended
        self.pace = Pace()  # each side's turns and its time used at its last press (a likely end)

    def take(self, record):
        """Take one record of the game, in order."""
        ev = record.get("ev")
        self.pace.take(record)
        if isinstance(record.get("boot_id"), str):
            self.boot_id = record["boot_id"]
        try:
            self.calls.take(record)
        except (KeyError, TypeError, ValueError):
            self.calls = Calls()  # a record that does not say its call: no mark rather than a wrong one
        if ev == "new_game":
            self.start_ms = self.ended = None
        elif ev == "set" and isinstance(record.get("start_ms"), int) and record.get("applies") != "next":
            self.start_ms = record["start_ms"]
        elif ev == "end":
            self.ended = record.get("reason") if isinstance(record.get("reason"), str) else None
        elif ev == "reopen":
            self.ended = None
        if record.get("ev") == "new_game":
            try:
                self.rules = game_rules(record)
                self.cap_s = self.rules.overtime_cap_s
                self.game = GameState.new(0, {side: record["time_ms"][side] * NS_PER_MS for side in SIDES})
            except (KeyError, TypeError, ValueError):
                self.cap_s = self.game = None
        elif self.game is not None:
            try:
                apply_record(self.game, record, record_instant_ns(record), self.rules)
                if record.get("ev") == "recovered":
                    reconcile(self.game, record, 0, self.rules)
            except (KeyError, TypeError, ValueError, AttributeError):
                self.game = None  # a record that does not play back: who runs is known from `run` only
        if isinstance(record.get("mono_ns"), int):
            self.origin_ns = record["mono_ns"]

    def runs(self, record, side):
        """Whether `side`'s time runs after `record` (the newest): the game's own charged sides."""
        if record.get("state") != State.RUNNING:
            return False
        if self.game is None or self.game.state != State.RUNNING:
            return record.get("run") == side  # not known: only a named side surely runs
        return side in self.game.charged

    def stamp_ms(self, record, now_ns, wall_ns):
        """The wall time (ms since 1970) of `record`'s instant: now's wall time less how long ago
        it was on the monotonic clock; now's, if the game's origin is not known."""
        if self.origin_ns is None:
            return wall_ns // NS_PER_MS
        ago = now_ns - (self.origin_ns + record_instant_ns(record))
        return (wall_ns - max(0, ago)) // NS_PER_MS


def public_text(clock_id, board, scene, public, record, now_ns, wall_ns):
    """The public state's JSON text after `record` (the newest), or None if it has no sides yet."""
    sides = {}
    for name in "AB":
        side = record.get(name)
        if not isinstance(side, dict):
            return None
        try:
            sides[name] = {
                "left_ms": left_ms(side),
                "shown": side["shown"],
                "pen": side["pen"],
                "runs": public.runs(record, name),
                "used_ms": side["used_ms"],
            }
        except (KeyError, TypeError, ValueError):
            return None
    state = {
        "v": VERSION,
        "clock": clock_id,
        "board": board,
        "round": scene.get("round"),
        "table": scene.get("table"),
        "seq": record["seq"],
        "boot": public.boot_id,
        "state": record.get("state"),
        "run": record.get("run"),
        "at_ms": public.stamp_ms(record, now_ns, wall_ns),
        "cap_s": public.cap_s,
        # a round limit (school rule 21), from the round's start_ms: the latest end under it
        "limit_s": getattr(public.rules, "round_limit_s", None),
        "call": public.calls.shown(),
        "start_ms": public.start_ms,
        "ended": public.ended if record.get("state") == State.ENDED else None,
        "pace": {
            name: {key: int(done.get(key, 0)) for key in ("turns", "used_ms", "base_ms", "last")}
            for name, done in public.pace.sides.items()
        },
        **sides,
    }
    return json.dumps(state, separators=(",", ":"), sort_keys=True)
