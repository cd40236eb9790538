"""One game's state: a plain object, made whole at `new_game` and replaced whole at the next.

It knows the two sides' charged time and how to run or stop a side at an instant; what
the rules make of that time is `accounting.py`'s business, what the buttons mean is
`gestures.py`'s.
"""

from dataclasses import dataclass, field
from enum import StrEnum

from .records import SIDES
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
    run: str | None = None
    run_since_ns: int = 0
    used: dict = _per_side(0)
    stopped_total_ns: int = 0
    stopped_since_ns: int = 0
    late: str | None = None
    late_pen: dict = _per_side(0)
    lost: str | None = None
    lost_reason: str | None = None
    corrections: list = field(default_factory=list)
    turns: dict = _per_side(0)
    #: what the panels say until a side next runs (a correction, a recovery)
    notice: object = None

    @classmethod
    def new(cls, t0_ns, start_ns):
        """A fresh game opened at `t0_ns`, each side starting with `start_ns[side]`."""
        return cls(t0_ns, dict(start_ns), dict(start_ns), run_since_ns=t0_ns, stopped_since_ns=t0_ns)

    # ---------------------------------------------------------------- queries

    def used_ns(self, side, t_ns):
        """Time charged to `side` as of `t_ns`."""
        running = self.run == side and t_ns > self.run_since_ns
        return self.used[side] + (t_ns - self.run_since_ns if running else 0)

    def stopped_ns(self, t_ns):
        """Time in this game when no side ran, as of `t_ns`."""
        if self.state == State.RUNNING:
            return self.stopped_total_ns
        return self.stopped_total_ns + max(0, t_ns - self.stopped_since_ns)

    def display_seconds(self, side, t_ns):
        """The signed whole seconds the display shows: limit minus whole seconds used."""
        return self.allowance_ns[side] // NS_PER_S - self.used_ns(side, t_ns) // NS_PER_S

    def since_start_ms(self, t_ns):
        """Whole milliseconds from the game's start to `t_ns`, as records carry them."""
        return ms(t_ns - self.t0_ns)

    # ------------------------------------------------------------ transitions

    def run_side(self, side, t_ns):
        """From `t_ns`, `side`'s clock runs (charging whoever ran until then)."""
        if self.state != State.RUNNING:
            self.stopped_total_ns += t_ns - self.stopped_since_ns
        elif self.run is not None:
            self.used[self.run] += t_ns - self.run_since_ns
        self.state = State.RUNNING
        self.run = side
        self.run_since_ns = t_ns
        self.notice = None

    def stop(self, t_ns, state):
        """From `t_ns` no clock runs; the game is `state` (paused or ended)."""
        if self.state == State.RUNNING:
            self.used[self.run] += t_ns - self.run_since_ns
            self.stopped_since_ns = t_ns
        self.state = state
        self.run = None

    def give_start_times(self, start_ns):
        """Other starting times (`{side: ns}`) for a game nobody has pressed in yet (a `set`)."""
        for side, ns in start_ns.items():
            self.allowance_ns[side] += ns - self.start_ns[side]
            self.start_ns[side] = ns

    def correct(self, side, delta_ns, t_ns):
        """A director's correction of `side`'s limit by `delta_ns`, at `t_ns`."""
        self.allowance_ns[side] += delta_ns
        self.corrections.append({"player": side, "delta_ms": ms(delta_ns), "t_ms": self.since_start_ms(t_ns)})
