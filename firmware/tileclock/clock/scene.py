"""The scene a director sets: the time of day, the round, the table, the starting times.

The Pi has no real-time clock: the clock knows the time of day only when a
director's `set` command tells it, as an offset from its monotonic clock, good
until the next power-on. Without it every record says the time is unknown
(`null`), never a wrong time.

Round, table and starting times belong to a game. A `set` applies them to the
current game while it is still `ready` (nobody has pressed yet), otherwise to
the next game; round and table then stay for the games after it, until set
again; starting times are for that one game. The `set` record says which
(`applies`: `this` or `next`).

Who hears the clock (`set speech=`), and whose panel shows the large-digits face (`set large=`),
change at once, whatever the game's state, and stays for
the games after it until set again, like the round and the table: each `new_game` says it while
a director's setting holds, so a restart or a power cut keeps it (the config's `[speech]` holds
only until a director first sets it).
"""

from dataclasses import dataclass

from ..wire.records import SIDE_SETTINGS
from .timecode import NS_PER_MS, NS_PER_S


@dataclass
class GameScene:
    """One game's place in the tournament."""

    round: int | None = None
    table: str | None = None
    #: the time of day the game opened (ms since 1970, UTC), if known
    wall_start_ms: int | None = None


class Scene:
    """What the director set, and what it means for the current game and the next."""

    def __init__(self):
        self.offset_ms = None  # time of day minus the monotonic clock, in ms, once set in this boot
        self.next_round = None
        self.next_table = None
        self.next_times_s = None  # {side: s} for the next game only
        #: who hears the clock as a director's newest `set speech=` said ("A", "B", "AB" or ""),
        #: or None: the config's [speech] sides (none set since the journal began)
        self.speech = None
        #: whose panel shows the large-digits face as a director's newest `set large=` said, or
        #: None: the config's [speech] large
        self.large = None
        self.game = GameScene()
        self._origin_exact = False  # the game's start is an instant of this boot's monotonic clock

    def wall_ms(self, t_ns):
        """The time of day at monotonic `t_ns` (ms since 1970, UTC), or None if unknown."""
        return None if self.offset_ms is None else self.offset_ms + t_ns // NS_PER_MS

    def open_game(self, t0_ns, start_ns):
        """A game opens at `t0_ns`: its starting times (`start_ns` unless set for it) and the
        fields its `new_game` record carries."""
        times = self.next_times_s
        self.next_times_s = None
        if times:
            start_ns = dict(start_ns, **{side: s * NS_PER_S for side, s in times.items()})
        self.game = GameScene(self.next_round, self.next_table, self.wall_ms(t0_ns))
        self._origin_exact = True
        fields = self.record_fields(t0_ns)
        for key in SIDE_SETTINGS:  # carried into each game, so a restart finds it in the last one
            if getattr(self, key) is not None:
                fields[key] = getattr(self, key)
        return start_ns, fields

    def record_fields(self, t_ns):
        """What `new_game` and `end` records say of the game's scene, at `t_ns`."""
        return {"round": self.game.round, "table": self.game.table, "wall_ms": self.wall_ms(t_ns)}

    def summary_fields(self, t_ns):
        """What the `end` summary says of it."""
        return {
            "round": self.game.round,
            "table": self.game.table,
            "wall_start_ms": self.game.wall_start_ms,
            "wall_end_ms": self.wall_ms(t_ns),
        }

    def set(
        self, t_ns, t0_ns, ready, wall_ms=None, round=None, table=None, times_s=None, speech=None, large=None
    ):
        """Take a director's `set` at monotonic `t_ns`; the game opened at `t0_ns` and is `ready`
        or not. Returns the `set` record's fields and the starting times for this game (or None)."""
        fields = {"applies": "this" if ready else "next"}
        if wall_ms is not None:
            self.offset_ms = wall_ms - t_ns // NS_PER_MS
            if self.game.wall_start_ms is None and self._origin_exact:
                self.game.wall_start_ms = self.wall_ms(t0_ns)
            fields.update(wall_ms=wall_ms, wall_mono_ns=t_ns, start_wall_ms=self.game.wall_start_ms)
        if round is not None:
            self.next_round = fields["round"] = round
        if table is not None:
            self.next_table = fields["table"] = table
        if ready:
            self.game.round, self.game.table = self.next_round, self.next_table
        this_times = None
        if times_s:
            fields["time_ms"] = {side: s * 1000 for side, s in times_s.items()}
            if ready:
                this_times = dict(times_s)
            else:
                self.next_times_s = dict(times_s)
        for key, value in zip(SIDE_SETTINGS, (speech, large), strict=True):
            if value is not None:  # at once, this game or not (the device's voice, its panels)
                setattr(self, key, value)
                fields[key] = value
        return fields, this_times

    def rebuild(self, records, boot_id, same_boot):
        """Take the scene up again from the journal after a restart: `records` all of it, oldest
        first; `boot_id` this start's boot; `same_boot` whether the last game's start is an
        instant of this boot's monotonic clock. The time of day is kept
        only within one boot (after a power cut it is unknown until set again); returns the
        starting times a `set` gave the last game after it opened, or None."""
        boot, this_times = None, None
        for record in records:
            if record["ev"] == "boot":
                boot = record.get("boot_id")
            this_times = self.take(record, boot == boot_id, this_times)
        self._origin_exact = same_boot
        return this_times

    def take(self, record, this_boot, this_times=None):
        """Take one record of the journal up again (`this_boot`: it was made in this boot);
        returns the starting times a `set` gave the game so far (`this_times` before it)."""
        ev = record["ev"]
        if ev == "new_game":
            self.game = GameScene(record.get("round"), record.get("table"), record.get("wall_ms"))
            self.next_times_s, this_times = None, None
            for key in SIDE_SETTINGS:  # a director's setting the game opened with, if any
                setattr(self, key, record.get(key))
        elif ev == "set":
            self._replay_set(record, this_boot)
            if record.get("applies") == "this" and "time_ms" in record:
                this_times = {side: ms // 1000 for side, ms in record["time_ms"].items()}
        return this_times

    def _replay_set(self, record, this_boot):
        if "wall_ms" in record and "wall_mono_ns" in record:
            self.offset_ms = record["wall_ms"] - record["wall_mono_ns"] // NS_PER_MS if this_boot else None
            if record.get("start_wall_ms") is not None:
                self.game.wall_start_ms = record["start_wall_ms"]
        self.next_round = record.get("round", self.next_round)
        self.next_table = record.get("table", self.next_table)
        for key in SIDE_SETTINGS:
            setattr(self, key, record.get(key, getattr(self, key)))
        if record.get("applies") == "this":
            self.game.round, self.game.table = self.next_round, self.next_table
        elif "time_ms" in record:
            self.next_times_s = {side: ms // 1000 for side, ms in record["time_ms"].items()}
