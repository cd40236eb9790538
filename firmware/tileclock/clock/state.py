"""One game's state: a plain object, made whole at `new_game` and replaced whole at the next.

It knows whose time is charged, who is absent, and how to change either at an
instant; what the rules make of that time is `accounting.py`'s business, what the
buttons mean is `gestures.py`'s.

The books: every instant of a game is charged to one side, to both (both players
late, under rules where absence runs the clock), or to neither (stopped, or an
absence that runs no game clock). So `used A + used B + stopped - shared` is
always exactly the time since the game opened (plus, on a spare that took a game over,
the time its sides used on the dead clock: `carried_ns`).
"""

from dataclasses import dataclass, field
from enum import StrEnum

from ..wire.records import SIDES
from .timecode import NS_PER_S, ms


class State(StrEnum):
    """Where a game is; each is written in records as its value (`"running"`)."""

    READY = "ready"
    RUNNING = "running"
    PAUSED = "paused"
    ENDED = "ended"


def other(side):
    """The opponent of `side`."""
    return "B" if side == "A" else "A"


def _per_side(value):
    return field(default_factory=lambda: dict.fromkeys(SIDES, value))


@dataclass
class GameState:
    """Everything one game holds, from its `new_game` at `t0_ns` on."""

    t0_ns: int
    #: each side's starting time, and its limit so far (corrections included)
    start_ns: dict
    allowance_ns: dict
    state: State = State.READY
    #: the sides whose time runs now, and since when (the instant of the last change)
    charged: frozenset = frozenset()
    since_ns: int = 0
    used: dict = _per_side(0)
    stopped_total_ns: int = 0
    shared_total_ns: int = 0
    #: since when no game clock has run (for the panels' idle care)
    stopped_since_ns: int = 0
    #: absent sides (a late start) -> since when; and each side's absence so far, closed
    absent: dict = field(default_factory=dict)
    absence: dict = _per_side(0)
    late_pen: dict = _per_side(0)
    #: who lost by forfeit (`A`, `B` or `both`) and why
    lost: str | None = None
    lost_reason: str | None = None
    corrections: list = field(default_factory=list)
    turns: dict = _per_side(0)
    #: the side whose clock first ran in play (not in absence)
    first: str | None = None
    #: when the round started (the first start or late start, or the director's start), for a round limit
    round_start_ns: int | None = None
    #: the round's start the director set (`set start=`), until it comes: (instant, time of day ms, late ms)
    round_start_at: tuple | None = None
    #: why the game ended, and the seq of its `end` record (a later one supersedes it)
    end_reason: str | None = None
    end_seq: int | None = None
    #: what the panels say until a side next runs (a correction, a recovery)
    notice: object = None
    #: the seq of its `new_game`: the game's name (the hall's score link names the game by it)
    seq: int | None = None
    #: time charged to the sides on another clock before this one took the game over (spare.py)
    carried_ns: int = 0

    @classmethod
    def new(cls, t0_ns, start_ns):
        """A fresh game opened at `t0_ns`, each side starting with `start_ns[side]`."""
        return cls(t0_ns, dict(start_ns), dict(start_ns), since_ns=t0_ns, stopped_since_ns=t0_ns)

    # ---------------------------------------------------------------- queries

    @property
    def run(self):
        """The one side whose clock runs, or None (stopped, or both or neither charged)."""
        if self.state != State.RUNNING or len(self.charged) != 1:
            return None
        return next(iter(self.charged))

    def _open(self, t_ns):
        return max(0, t_ns - self.since_ns)

    def used_ns(self, side, t_ns):
        """Time charged to `side` as of `t_ns`."""
        return self.used[side] + (self._open(t_ns) if side in self.charged else 0)

    def stopped_ns(self, t_ns):
        """Time in this game charged to no side, as of `t_ns`."""
        return self.stopped_total_ns + (self._open(t_ns) if not self.charged else 0)

    def shared_ns(self, t_ns):
        """Time charged to both sides at once, as of `t_ns`."""
        return self.shared_total_ns + (self._open(t_ns) if len(self.charged) == 2 else 0)

    def absence_ns(self, side, t_ns):
        """How long `side` has been absent, as of `t_ns`."""
        since = self.absent.get(side)
        return self.absence[side] + (max(0, t_ns - since) if since is not None else 0)

    def display_seconds(self, side, t_ns):
        """The signed whole seconds of `side`'s limit left: limit minus whole seconds used."""
        return self.allowance_ns[side] // NS_PER_S - self.used_ns(side, t_ns) // NS_PER_S

    def since_start_ms(self, t_ns):
        """Whole milliseconds from the game's start to `t_ns`, as records carry them."""
        return ms(t_ns - self.t0_ns)

    # ------------------------------------------------------------ transitions

    def charge(self, sides, t_ns, state=State.RUNNING):
        """From `t_ns`, `sides` (a set) are charged and the game is `state`."""
        open_ns = self._open(t_ns)
        for side in self.charged:
            self.used[side] += open_ns
        if not self.charged:
            self.stopped_total_ns += open_ns
        if len(self.charged) == 2:
            self.shared_total_ns += open_ns
        if self.state == State.RUNNING and state != State.RUNNING:
            self.stopped_since_ns = t_ns
        self.charged = frozenset(sides)
        self.since_ns = max(t_ns, self.since_ns)
        self.state = state
        if state == State.RUNNING:
            self.notice = None

    def run_side(self, side, t_ns):
        """From `t_ns`, `side`'s clock runs, in play."""
        self.charge({side}, t_ns)
        if self.first is None:
            self.first = side
        self.start_round(t_ns)

    def start_round(self, t_ns):
        """The round starts at `t_ns`, unless it already has."""
        if self.round_start_ns is None:
            self.round_start_ns = t_ns

    def stop(self, t_ns, state):
        """From `t_ns` no clock runs and no one is absent any more; the game is `state`."""
        for side in list(self.absent):
            self.arrive(side, t_ns)
        self.charge(set(), t_ns, state)

    def arrive(self, side, t_ns):
        """`side`, absent, arrived at `t_ns`: its absence closes (and its time stops being charged)."""
        self.absence[side] += max(0, t_ns - self.absent.pop(side))
        if side in self.charged:
            self.charge(self.charged - {side}, t_ns, self.state)

    def give_start_times(self, start_ns):
        """Other starting times (`{side: ns}`) for a game nobody has pressed in yet (a `set`)."""
        for side, ns in start_ns.items():
            self.allowance_ns[side] += ns - self.start_ns[side]
            self.start_ns[side] = ns

    def correct(self, side, delta_ns, t_ns):
        """A director's correction of `side`'s limit by `delta_ns`, at `t_ns`."""
        self.allowance_ns[side] += delta_ns
        self.corrections.append({"player": side, "delta_ms": ms(delta_ns), "t_ms": self.since_start_ms(t_ns)})

    def end(self, t_ns, reason, lost=None, lost_reason=None):
        """The game ends at `t_ns`, for `reason`; a forfeit names who `lost` and why."""
        self.stop(t_ns, State.ENDED)
        self.end_reason = reason
        if lost is not None:
            self.lost, self.lost_reason = lost, lost_reason

    def take_over(self, t_ns, used_ns, allowance_ns, late_pen, first):
        """From `t_ns` the game stands, stopped, where another clock's ended: each side's time
        used and limit (`{side: ns}`), late-start penalty, and who played first (clock/spare.py)."""
        self.charge(set(), t_ns, State.PAUSED)
        self.used, self.allowance_ns, self.late_pen = dict(used_ns), dict(allowance_ns), dict(late_pen)
        self.carried_ns = sum(used_ns.values())  # the books balance (readings.balanced)
        self.first = first
        self.round_start_ns = t_ns  # its round started on the other clock; a round limit counts from here

    def reopen(self, t_ns):
        """An ended game (not a forfeit) goes back to stopped, as it was."""
        self.charge(set(), t_ns, State.PAUSED)
        self.end_reason = None
